"""A thought's marks are typed where people call them: a type checker refuses a misspelt one.

``Session.process_sequential_thinking`` takes ``**marks: Unpack[MarkArguments]`` and
``Session.think`` ``**arguments: Unpack[ThoughtArguments]`` (PEP 692), both ``TypedDict`` s
generated from the definition of a thought and checked in (a type checker reads source, not a
class built at run time). One test keeps the checked-in module what the generator writes; the
other runs mypy, as a user's project would, on a small file of calls.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_thought_marks.py"

CALLS = textwrap.dedent(
    """\
    from thoughtledger import open_ledger


    async def record() -> None:
        async with open_ledger("sqlite:///thoughts.db") as ledger:
            session = await ledger.new_session()
            await session.process_sequential_thinking("a", 1, 2, True, is_revsion=True)
            await session.process_sequential_thinking("b", 2, 2, True, revises_thought="1")
            await session.think(thought="c", thought_number=3, total_thoughts=3,
                                next_thought_needed=False, branch_idd="x")
            await session.think(thought="d", thought_number=3, total_thoughts=3)
            await session.process_sequential_thinking(
                "e", 2, 3, True, is_revision=True, revises_thought=1, needs_more_thoughts=None
            )
            await session.think(thought="f", thought_number=3, total_thoughts=3,
                                next_thought_needed=True, branch_from_thought=1, branch_id="b")
    """
)
"""Four mistakes (lines 7, 8, 9 and 11), then two calls spelt right (lines 12 and 15)."""


def test_the_checked_in_marks_are_what_the_definition_generates() -> None:
    done = subprocess.run(  # noqa: S603  # our own tool, by absolute path
        [sys.executable, str(GENERATOR), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # mypy reads the package and its dependencies afresh: 15 s of CPU or more
def test_a_type_checker_refuses_a_misspelt_or_mistyped_mark_and_accepts_the_rest(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls.py"
    calls.write_text(CALLS)
    report, errors, status = api.run(
        [
            str(calls),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "--no-error-summary",
            "--show-error-codes",
        ]
    )
    assert errors == ""
    assert status == 1, report
    found = {
        (int(line.split(":")[1]), line.rsplit("[", 1)[-1].rstrip("]"))
        for line in report.splitlines()
        if ": error: " in line
    }
    assert found == {(7, "call-arg"), (8, "arg-type"), (9, "call-arg"), (11, "call-arg")}, report
    assert '"is_revsion"' in report
    assert '"branch_idd"' in report
    assert '"next_thought_needed"' in report  # a core field left out
