"""stdio's framing: bytes in, one bounded line of UTF-8 at a time, each parsed as JSON-RPC.

Every stdio transport reads through :func:`read_messages`, whatever gives it the bytes (a pipe on
the event loop, a terminal, a worker thread): it yields what the SDK's ``stdio_server`` yields,
messages and, for lines that do not parse, exceptions, with two bounds the SDK's reader lacks:

* **A line is at most** :data:`MAX_LINE_BYTES`, the size the SDK's HTTP transport caps a request
  body at. A longer one is reported as soon as it passes the limit and the rest of it is read and
  dropped as it arrives, never held: ``thoughtledger serve < /dev/zero`` stays at its idle size.
* **A line is UTF-8.** Invalid bytes are refused, naming where they are, instead of being stored
  as U+FFFD without a word.

Both arrive as :class:`UnreadableLineError`, which the read stream answers ``-32700``.
"""

import json
from collections.abc import Awaitable, Callable

import mcp.types as mcp_types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from thoughtledger.ledger.errors import InvalidInputError

MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Longest line read on stdio (4 MiB): what the SDK's HTTP transport accepts as one body."""

READ_BYTES = 1 << 18
"""Most bytes taken from the transport at once: a line over the limit costs at most this much."""

ByteSource = Callable[[], Awaitable[bytes]]
"""Returns the next bytes read (at most :data:`READ_BYTES`), or ``b""`` at the end."""


class UnreadableLineError(InvalidInputError):
    """A stdio line refused before it was parsed: longer than the limit, or not UTF-8.

    Attributes:
        request_id: The id of the request the line holds, when it could be read (so the client
            gets its answer instead of waiting), else ``None``.
    """

    def __init__(self, message: str, request_id: int | str | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


class LineSplitter:
    """Cuts bytes into lines of at most ``limit`` bytes (newline excluded), counting them.

    A line that passes the limit is reported once, as soon as it does, and the rest of it is
    dropped up to its newline.

    Args:
        limit: The most bytes a line may have.
    """

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self._limit = limit
        self._pending = bytearray()
        self._dropping = False
        self.number = 0
        """Lines ended so far (the next line is ``number + 1``)."""

    def feed(self, chunk: bytes) -> list[tuple[int, bytes] | UnreadableLineError]:
        """Take ``chunk``; return the lines it completed (numbered) and the too-long it began.

        ``b""`` means the end: a last line without its newline is returned then.
        """
        found: list[tuple[int, bytes] | UnreadableLineError] = []
        if not chunk:
            if self._pending and not self._dropping:
                self.number += 1
                found.append((self.number, bytes(self._pending)))
            self._pending.clear()
            return found
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self.number += 1
            if self._dropping:  # the end of a line already reported
                self._dropping = False
            elif len(self._pending) + end - start > self._limit:
                found.append(self._too_long())
            elif self._pending:
                self._pending += chunk[start:end]
                found.append((self.number, bytes(self._pending)))
            else:
                found.append((self.number, chunk[start:end]))
            self._pending.clear()
            start = end + 1
        if start < len(chunk) and not self._dropping:
            if len(self._pending) + len(chunk) - start > self._limit:
                self._pending.clear()
                self._dropping = True
                found.append(self._too_long(self.number + 1))
            else:
                self._pending += chunk[start:]
        return found

    def _too_long(self, number: int | None = None) -> UnreadableLineError:
        return UnreadableLineError(
            f"line {number or self.number} is over {self._limit} bytes, the most one message "
            "may have; it was skipped"
        )


def decoded(line: bytes, number: int) -> str:
    """``line`` as text.

    Raises:
        UnreadableLineError: It is not UTF-8; the message names the first bad byte's offset.
    """
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = line[exc.start : exc.end].hex(" ")
        raise UnreadableLineError(
            f"line {number} is not UTF-8: byte {exc.start} (0x{bad}) is {exc.reason}; "
            "nothing in it was done",
            _request_id(line.decode("utf-8", errors="replace")),
        ) from None


def _request_id(text: str) -> int | str | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    candidate = data.get("id") if isinstance(data, dict) and "method" in data else None
    if isinstance(candidate, str) or (isinstance(candidate, int) and type(candidate) is int):
        return candidate
    return None


async def read_messages(
    read: ByteSource, messages: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    """Send each line ``read`` gives as a message, or as the exception it raised; close at EOF."""
    lines = LineSplitter()
    async with messages:
        while True:
            chunk = await read()
            for item in lines.feed(chunk):
                await messages.send(_parsed(item))
            if not chunk:
                return


def _parsed(item: tuple[int, bytes] | UnreadableLineError) -> SessionMessage | Exception:
    if isinstance(item, Exception):
        return item
    number, line = item
    try:
        text = decoded(line, number)
        message = mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except (UnreadableLineError, ValidationError) as exc:
        return exc
    return SessionMessage(message)


__all__ = [
    "MAX_LINE_BYTES",
    "READ_BYTES",
    "ByteSource",
    "LineSplitter",
    "UnreadableLineError",
    "decoded",
    "read_messages",
]
