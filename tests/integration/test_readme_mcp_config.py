"""The README's MCP client configuration works as a desktop host runs it: without the shell's PATH.

Claude Desktop and Cursor start the server with a bare environment, so the configuration names the
script by its absolute path. The test takes the README's JSON block, puts this environment's
installed script where its placeholder is, and starts it with only that block's ``env`` and a
system ``PATH`` that does not hold the script, through the SDK's stdio client.
"""

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.docs import README, fenced_blocks
from tests.support.processes import WAIT

pytestmark = pytest.mark.anyio

BARE_PATH = "/usr/bin:/bin"
"""What a desktop application started from the dock or menu gets, not the shell's ``PATH``."""


def desktop_config() -> dict[str, object]:
    """The ``sequential-thinking`` server of the README's ``mcpServers`` block."""
    (block,) = [text for text in fenced_blocks(README, "json") if '"mcpServers"' in text]
    server: dict[str, object] = json.loads(block)["mcpServers"]["sequential-thinking"]
    return server


def test_the_readme_names_the_script_by_an_absolute_path() -> None:
    command = desktop_config()["command"]
    assert isinstance(command, str)
    assert command.startswith("/")
    assert command.endswith("/bin/thoughtledger")


async def test_the_readme_configuration_starts_the_server_without_the_shells_path(
    tmp_path: Path,
) -> None:
    config = desktop_config()
    script = Path(sys.executable).parent / "thoughtledger"  # this environment's installed script
    assert script.exists()
    assert shutil.which("thoughtledger", path=BARE_PATH) is None  # only the absolute path finds it
    args = config["args"]
    env = config["env"]
    assert isinstance(args, list)
    assert isinstance(env, dict)
    server = StdioServerParameters(
        command=str(script),
        args=[*args, "--db", f"sqlite:///{tmp_path / 'l.db'}"],
        env={**env, "PATH": BARE_PATH},
        cwd=tmp_path,
    )
    with anyio.fail_after(WAIT):
        async with Client(server) as client:
            tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == ["sequentialthinking", "thinking_history"]
