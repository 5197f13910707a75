"""``thoughtledger show`` pages long sessions: ``--limit``, ``--after`` and the next-page hint."""

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Ran, cli, sqlite_url
from tests.support.factories import long_session
from tests.support.raw_store import raw_store
from tests.support.redaction import record_redaction_only
from tests.support.samples import thought
from thoughtledger import open_ledger
from thoughtledger.adapters.cli.show import PAGE, WHOLE_MAX
from thoughtledger.ledger.content import REDACTED


def _record(url: str, count: int) -> None:
    async def scenario() -> None:
        async with open_ledger(url, ttl=None) as ledger:
            for n in range(1, count + 1):
                extra: dict[str, Any] = {}
                if n % 3 == 0:
                    extra = {"branch_from_thought": 1, "branch_id": "alt"}
                await ledger.think("s", thought(n, count, **extra))

    asyncio.run(scenario())


def _next_command(ran: Ran) -> list[str]:
    """The command the hint on stderr gives, without the program's name."""
    prefix = "more thoughts: "
    assert ran.err.startswith(prefix), ran.err
    argv = shlex.split(ran.err[len(prefix) :])
    assert argv[:2] == ["thoughtledger", "show"]
    return argv[1:]


def test_show_with_a_limit_prints_a_page_and_the_command_for_the_next(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    _record(url, 5)
    first = cli(capsys, "show", "s", "--limit", "2", "--db", url)
    assert first.code == 0, first.err
    lines = first.out.splitlines()
    assert lines[0].startswith("session s · 5 thoughts · recorded · versions 2-3 of 6")
    assert lines[1].startswith("#1 thought 1  [v2 · ")
    assert lines[2].startswith("#2 thought 2  [v3 · ")
    second = cli(capsys, *_next_command(first))
    assert second.code == 0, second.err
    assert second.out.splitlines()[1].startswith("#3 ⑂ alt: thought 3  [v4 · ")
    third = cli(capsys, *_next_command(second))
    assert third.code == 0
    assert [line.split()[0] for line in third.out.splitlines()[1:]] == ["#5"]
    assert third.err == ""  # the last page: no hint


def test_json_pages_concatenate_to_the_whole_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    _record(url, 7)
    whole = cli(capsys, "show", "s", "--json", "--db", url).json()["thoughts"]
    first = cli(capsys, "show", "s", "--json", "--limit", "3", "--db", url)
    assert _next_command(first)[-3:] == ["--json", "--db", url]
    pages = [first.json()]
    while pages[-1]["more"]:
        after = pages[-1]["nextCursor"]
        argv = ["show", "s", "--json", "--limit", "3", "--after", after, "--db", url]
        pages.append(cli(capsys, *argv).json())
    assert [item for page in pages for item in page["thoughts"]] == whole
    assert len(pages) == 3


def test_show_as_of_a_version_pages_that_snapshot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    _record(url, 6)
    first = cli(capsys, "show", "s", "--at", "4", "--limit", "2", "--json", "--db", url)
    rest = cli(capsys, "show", "s", "--after", first.json()["nextCursor"], "--json", "--db", url)
    assert [t["version"] for t in first.json()["thoughts"] + rest.json()["thoughts"]] == [2, 3, 4]
    assert (rest.json()["version"], rest.json()["latestVersion"], rest.json()["more"]) == (
        4,
        7,
        False,
    )


def test_a_long_session_shows_its_first_page_without_a_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")

    async def build() -> None:
        async with open_ledger(url, ttl=None, read_only=False) as ledger:
            await long_session(raw_store(ledger), "long", WHOLE_MAX)

    asyncio.run(build())
    ran = cli(capsys, "show", "long", "--db", url)
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert lines[0].startswith(f"session long · {WHOLE_MAX} thoughts · recorded · versions 2-101")
    assert len(lines) == 1 + PAGE
    argv = _next_command(ran)
    assert argv[:3] == ["show", "long", "--after"]
    assert argv[-2:] == ["--db", url]
    following = cli(capsys, *argv)
    assert following.out.splitlines()[1].startswith(
        f"#{PAGE + 1} thought {PAGE + 1}  [v{PAGE + 2} "
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--after", "junk"], "not a history cursor"),
        (["--limit", "0"], "expected a whole number >= 1"),
    ],
)
def test_bad_paging_options_fail_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    _record(url, 2)
    ran = cli(capsys, "show", "s", *argv, "--db", url)
    assert ran.code == 2
    assert message in ran.err
    assert len(ran.err.strip().splitlines()) == 1


def test_show_pages_a_redaction_cut_short_as_redacted(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    """The strip never ran: the text is stored, and no page or bound of ``show`` prints it."""
    private = "my card is 4111 1111 1111 1111"

    async def build() -> None:
        async with open_ledger(ledger_url, ttl=None) as ledger:
            await ledger.think("s", thought(1, 2) | {"thought": private})
            await ledger.think("s", thought(2, 2))
            await record_redaction_only(ledger, "s", 2)

    asyncio.run(build())
    whole = cli(capsys, "show", "s", "--json", "--db", ledger_url).json()["thoughts"]
    assert [(t["thought"], t.get("redacted")) for t in whole] == [
        (REDACTED, True),
        ("thought 2", None),
    ]
    first = cli(capsys, "show", "s", "--json", "--limit", "1", "--db", ledger_url)
    rest = cli(
        capsys, "show", "s", "--json", "--after", first.json()["nextCursor"], "--db", ledger_url
    )
    assert first.json()["thoughts"] + rest.json()["thoughts"] == whole
    at = cli(capsys, "show", "s", "--json", "--limit", "5", "--at", "2", "--db", ledger_url)
    assert at.json()["thoughts"] == whole[:1]
    printed = cli(capsys, "show", "s", "--limit", "5", "--db", ledger_url)
    assert printed.code == 0, printed.err
    assert printed.out.splitlines()[1].startswith(f"#1 {REDACTED}  [v2 · ")
    assert private not in first.out + rest.out + at.out + printed.out
