"""``thoughtledger record`` checks tool calls as the MCP server does without loading the MCP SDK."""

import subprocess
import sys

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from thoughtledger.adapters.mcp.stdio.framing import MAX_LINE_BYTES
from thoughtledger.adapters.mcp.stdio.limits import MAX_MESSAGE_BYTES


def test_the_message_bound_known_without_the_sdk_is_the_sdks() -> None:
    assert MAX_MESSAGE_BYTES == DEFAULT_MAX_REQUEST_BODY_SIZE == MAX_LINE_BYTES


def test_reading_recorded_calls_loads_no_part_of_the_mcp_sdk() -> None:
    probe = (
        "import sys, thoughtledger.adapters.cli.record_lines; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    )
    done = subprocess.run(  # noqa: S603  # our own interpreter and a constant probe, no shell
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
