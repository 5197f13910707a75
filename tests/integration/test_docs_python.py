"""Every Python example of the README and of the pages under ``docs/`` runs as written.

An example is a fenced ```` ```python ```` block; each runs in an empty working directory, must
print ``True`` and leaves its ledger in ``thoughts.db`` there. (The analytics page's ```` ```py ````
blocks need the demo ledger; ``test_docs_analytics.py`` runs them.)
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs import README, ROOT, fenced_blocks, pages

EXAMPLES = [(path, block) for path in pages() for block in fenced_blocks(path, "python")]


def example_id(example: tuple[Path, str]) -> str:
    path, block = example
    index = fenced_blocks(path, "python").index(block)
    return f"{path.relative_to(ROOT)}:{index}"


def test_the_readme_has_a_python_example() -> None:
    assert fenced_blocks(README, "python")


@pytest.mark.parametrize("example", EXAMPLES, ids=[example_id(e) for e in EXAMPLES])
def test_the_documented_python_examples_run(
    example: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, block = example
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    exec(compile(block, str(path.relative_to(ROOT)), "exec"), {"__name__": "__main__"})  # noqa: S102  # running the documented example is the test
    assert "True" in capsys.readouterr().out
    assert os.path.exists(tmp_path / "thoughts.db")


def test_the_examples_run_one_after_another_in_one_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a reader runs them: each in turn, twice over, into the one ledger file they share, so
    # none may assume that the file is new.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("THOUGHTLEDGER_URL", raising=False)
    for round_ in (1, 2):
        for path, block in EXAMPLES:
            capsys.readouterr()
            exec(compile(block, str(path.relative_to(ROOT)), "exec"), {"__name__": "__main__"})  # noqa: S102  # running the documented example is the test
            printed = capsys.readouterr().out
            # The examples' checks print bare booleans (views print their fields' False too).
            checks = [words for words in map(str.split, printed.splitlines()) if words]
            checks = [words for words in checks if set(words) <= {"True", "False"}]
            assert checks, (round_, path, printed)
            assert all("False" not in words for words in checks), (round_, path, printed)


@pytest.mark.parametrize("example", EXAMPLES, ids=[example_id(e) for e in EXAMPLES])
def test_the_documented_python_examples_print_no_log_lines(
    example: tuple[Path, str], tmp_path: Path
) -> None:
    # As a reader runs one: a fresh interpreter with no logging set up. A library logs nowhere
    # until its program asks, so the console shows what the example prints and nothing else.
    path, block = example
    env = {k: v for k, v in os.environ.items() if k not in ("THOUGHTLEDGER_URL", "PYTHONPATH")}
    done = subprocess.run(  # noqa: S603  # our interpreter, the page's own example
        [sys.executable, "-c", block],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), path
    assert "[info" not in done.stdout, done.stdout
    assert "True" in done.stdout
