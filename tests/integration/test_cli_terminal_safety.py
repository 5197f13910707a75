"""A hostile thought reaches no terminal: every human output shows its control characters.

A thought (or an agent's name) holding ``ESC ] 0;title ESC \\``, ``ESC [2J``, a bell, a carriage
return, C1 codes or a bidi override is recorded, then read back by ``show``, ``sessions``,
``replay`` and ``diff`` in real processes, plain and with colours forced (as on a terminal), and
shown by a real ``serve`` in its thought box on stderr. No control code reaches the output except
newlines and the colour sequences rich itself writes; JSON keeps the text exactly.
"""

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from tests.support.lines import LineClient
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in
from thoughtledger import open_ledger

HOSTILE = "title\x1b]0;PWNED\x1b\\ clear\x1b[2J bell\x07 cr\rX c1\x9b31m del\x7f rtl\u202eabc"
AGENT = "agent\x1b[41m\u2066"

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Any control character but the newline that ends a line."""

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
"""The escape sequence rich writes for colours (select graphic rendition)."""

_RICH = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|[0-9]*A)")
"""What rich writes on a terminal: colours, and the progress bar's cursor hiding, line erasing
and moving up (never a screen clear, a title or a bell)."""


def _record(db: str) -> str:
    async def record() -> str:
        async with open_ledger(db) as ledger:
            session = await ledger.new_session(metadata={"agent": AGENT})
            await session.think(
                thought=HOSTILE, thought_number=1, total_thoughts=2, next_thought_needed=True
            )
            await session.think(
                thought="fine", thought_number=2, total_thoughts=2, next_thought_needed=False
            )
            state = await session.state()
            return state.session_id

    return asyncio.run(record())


def _run(*argv: str, colour: bool) -> tuple[int, str, str]:
    env = child_env(FORCE_COLOR="1", COLUMNS="200") if colour else child_env(NO_COLOR="1")
    done = subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
        cwd=ROOT,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def assert_harmless(output: str) -> None:
    """Nothing in ``output`` a terminal would obey, but rich's own colours and line ends."""
    assert _CONTROL.findall(_RICH.sub("", output)) == []


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "coloured"])
@pytest.mark.parametrize(
    "command",
    [["show", "{s}"], ["sessions"], ["replay", "{s}"], ["diff", "{s}", "0", "3"]],
    ids=lambda argv: argv[0],
)
def test_reading_commands_show_control_characters_instead_of_sending_them(
    tmp_path: Path, command: list[str], colour: bool
) -> None:
    db = sqlite_in(tmp_path)
    session_id = _record(db)
    argv = [part.replace("{s}", session_id) for part in command]
    code, out, err = _run(*argv, "--db", db, colour=colour)
    assert code == 0, err
    assert_harmless(out)
    assert_harmless(err)
    assert "\\x1b]0;PWNED" in _COLOUR.sub("", out)  # shown, so an operator sees the attempt


def test_json_output_keeps_the_exact_text(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    session_id = _record(db)
    code, out, err = _run("show", session_id, "--db", db, "--json", colour=False)
    assert code == 0, err
    shown = json.loads(out)
    assert shown["thoughts"][0]["thought"] == HOSTILE
    assert shown["metadata"]["agent"] == AGENT
    # Exact once decoded, and nothing a terminal obeys on the way: JSON escapes C0 itself,
    # and C1, DEL and the bidi controls are written as \u escapes too.
    assert _CONTROL.search(out.replace("\n", "")) is None, repr(out)


def test_search_and_replay_json_show_nothing_raw_to_a_terminal(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    session_id = _record(db)
    code, out, err = _run("search", "title", "--db", db, "--json", colour=False)
    assert code == 0, err
    assert _CONTROL.search(out.replace("\n", "")) is None, repr(out)
    assert "PWNED" in json.dumps(json.loads(out))
    code, out, err = _run("replay", session_id, "--db", db, "--json", colour=False)
    assert code == 0, err
    assert _CONTROL.search(out.replace("\n", "")) is None, repr(out)
    events = [json.loads(line)["event"]["event"] for line in out.splitlines()]
    assert HOSTILE in [event.get("thought") for event in events]


@asynccontextmanager
async def _server(db: str, stderr: Path) -> AsyncIterator[LineClient]:
    with stderr.open("wb") as log:
        process = await anyio.open_process(serve_command(db), cwd=ROOT, env=child_env(), stderr=log)
        try:
            yield LineClient(process, wait=WAIT)
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.fail_after(WAIT):
                await process.wait()


@pytest.mark.anyio
async def test_the_servers_thought_box_shows_control_characters(tmp_path: Path) -> None:
    stderr = tmp_path / "serve.err"
    async with _server(sqlite_in(tmp_path), stderr) as client:
        await client.handshake()
        first = {"thoughtNumber": 1, "totalThoughts": 2, "nextThoughtNeeded": True}
        await client.call_tool(
            "sequentialthinking", {**first, "thought": f"first line {HOSTILE}\nsecond\x1b[8m"}
        )
        branch = await client.call_tool(
            "sequentialthinking",
            {
                **first,
                "thoughtNumber": 2,
                "thought": "on a branch",
                "branchFromThought": 1,
                "branchId": "b\x1b[2J",
            },
        )
    assert branch.get("isError") is not True, branch
    box = stderr.read_text(encoding="utf-8")
    assert_harmless(box)
    assert "\\x1b]0;PWNED" in box
    assert "│ second\\x1b[8m" in box  # the thought's lines are kept, each escaped
    assert "ID: b\\x1b[2J" in box
