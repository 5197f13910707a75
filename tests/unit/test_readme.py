"""The README stays a newcomer's page: what thoughtledger is, install, the quickstart, a tour and
links; the reference lives in the pages under ``docs/``."""

from tests.support.docs import README, fenced_blocks

MOST_LINES = 300


def test_the_readme_is_at_most_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MOST_LINES


def test_the_quickstart_is_the_two_commands_of_a_fresh_checkout() -> None:
    quickstart = README.read_text(encoding="utf-8").split("## Quickstart", 1)[1]
    (first, *_) = [block for block in fenced_blocks(README, "sh") if block in quickstart]
    assert [line.split()[0] for line in first.splitlines()] == ["tools/run", "tools/test"]
