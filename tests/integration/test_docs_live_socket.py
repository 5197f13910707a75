"""The live socket's client in ``docs/browser.md`` (its ```` ```py ```` block) runs as written.

It is run against a real ``thoughtledger ui --auth`` process, with a reader's token: it prints
the reader's own events only, in order, and returns the last position once none comes.
"""

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import sqlite_url
from tests.support.docs import fenced_blocks, page
from tests.support.ui_app import record_owned, ui_app


def test_the_documented_client_follows_what_its_token_may_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = fenced_blocks(page("browser.md"), "py")
    url = sqlite_url(tmp_path / "l.db")
    ids = record_owned(url, {"alice-1": "alice", "bob-1": "bob", "alice-2": "alice"})
    namespace: dict[str, Any] = {"__name__": "docs"}  # defines follow() without running it
    exec(compile(block, "docs/browser.md", "exec"), namespace)  # noqa: S102  # the documented client is the test
    with ui_app(url, tmp_path / "tokens.json") as app:
        alice = app.mint("alice", "reader")
        last = asyncio.run(namespace["follow"](alice, port=app.port))  # returns once quiet
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6
    positions = [int(line.split()[0]) for line in lines]
    assert positions == sorted(set(positions))
    assert last == positions[-1]
    assert {line.split()[1] for line in lines} == {ids["alice-1"], ids["alice-2"]}
    assert [line.split()[2] for line in lines[:3]] == [
        "session.started",
        "thought.recorded",
        "thought.recorded",
    ]
