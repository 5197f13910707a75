"""A bare JSON-RPC client over a subprocess's stdin and stdout, one message per line.

What an MCP host does on the pipe, without an SDK: the stdio tests drive the server with it (and
send it bad lines), and ``tools/bench_mcp.py`` times calls with it.
"""

import json
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

Json = dict[str, Any]

_MAX_LINE = 1 << 26


def initialize(client_name: str, request_id: int = 0) -> Json:
    """The ``initialize`` request a client opens an MCP session with."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"},
        },
    }


INITIALIZED: Json = {"jsonrpc": "2.0", "method": "notifications/initialized"}
"""The notification that completes the opening handshake."""


class LineClient:
    """One message a line, each exchange bounded by ``wait`` seconds.

    Args:
        process: The server, started with its stdin and stdout piped.
        wait: Seconds any one line may take to arrive.
    """

    def __init__(self, process: Process, *, wait: float = 20) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._wait = wait
        self._next_id = 0

    async def send_line(self, line: str) -> None:
        await self._stdin.send(line.encode() + b"\n")

    async def receive_line(self) -> bytes:
        """The next line on stdout, raw."""
        with anyio.fail_after(self._wait):
            return await self._stdout.receive_until(b"\n", _MAX_LINE)

    async def receive(self) -> Json:
        """The next line on stdout, which must be one JSON-RPC 2.0 message."""
        message: Json = json.loads(await self.receive_line())
        assert message["jsonrpc"] == "2.0"
        return message

    async def request_line(self, method: str, params: Json | None = None) -> bytes:
        """Send a request; return its response line, raw (notifications are skipped)."""
        self._next_id += 1
        request: Json = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            request["params"] = params
        await self.send_line(json.dumps(request))
        while True:
            line = await self.receive_line()
            if json.loads(line).get("id") == self._next_id:
                return line

    async def request(self, method: str, params: Json | None = None) -> Json:
        """Send a request; return its response (a JSON-RPC 2.0 message)."""
        message: Json = json.loads(await self.request_line(method, params))
        assert message["jsonrpc"] == "2.0"
        return message

    async def handshake(self, client_name: str = "line-client") -> Json:
        """Initialize the session; return the server's answer to ``initialize``."""
        reply = await self.request("initialize", initialize(client_name)["params"])
        await self.send_line(json.dumps(INITIALIZED))
        return reply

    async def call_tool(self, name: str, arguments: Json) -> Json:
        """Call a tool; return the call's ``result``."""
        reply = await self.request("tools/call", {"name": name, "arguments": arguments})
        result: Json = reply["result"]
        return result


__all__ = ["INITIALIZED", "Json", "LineClient", "initialize"]
