"""Which stdio transport ``serve`` picks: the pipe transport on asyncio with piped stdin/stdout.

Asked in a child whose stdin and stdout are pipes, as an MCP host spawns the server.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio
from thoughtledger.adapters.mcp.stdio.answering import pipes_usable

async def inside_asyncio() -> bool:
    return pipes_usable()

print(pipes_usable(), asyncio.run(inside_asyncio()))
"""


def ask(**env: str) -> str:
    done = subprocess.run(  # noqa: S603  # this interpreter, a fixed script
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **env},
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_pipes_are_served_on_the_event_loop_only_inside_asyncio() -> None:
    assert ask() == "False True"


def test_the_sdk_transport_can_be_chosen_whatever_the_pipes() -> None:
    assert ask(THOUGHTLEDGER_STDIO="sdk") == "False False"
