"""stdio for the MCP server: bad lines are answered, and pipes are read without threads.

Two adaptations of the SDK's stdio transport, both below the protocol (the SDK still parses,
dispatches and answers every message):

* **Bad lines are answered.** The SDK turns a line it cannot parse into an exception item on its
  read stream, and its dispatcher drops such items with a DEBUG log, so the client waits forever.
  :class:`AnsweringReadStream` answers them instead: ``-32700`` for malformed JSON, ``-32600``
  for JSON that is no JSON-RPC message.
* **Pipes are read and written on the event loop.** The SDK reads each line and writes (then
  flushes) each answer through a worker thread: three thread hand-offs per call, about a quarter
  of a bare round trip. When stdin and stdout are pipes or sockets (as an MCP host spawns us)
  and the loop is asyncio's, :func:`pipe_stdio` uses non-blocking pipe transports instead. Like
  the SDK, it moves the wire to private descriptors while serving (fd 0 reads ``/dev/null``, fd 1
  writes to stderr), so nothing else in the process can write on the JSON-RPC channel, and puts
  everything back afterwards. Anything else (a terminal, a file, Windows, trio) gets the SDK's
  own transport, and so does everything when ``THOUGHTLEDGER_STDIO=sdk`` is set.
"""

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self

import anyio
import mcp.types as mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest accepted line; a longer one is answered ``-32600`` and skipped."""

TRANSPORT_ENV = "THOUGHTLEDGER_STDIO"
"""Set to ``sdk`` to serve stdio on the SDK's own transport (worker threads) whatever the pipes."""


class AnsweringReadStream:
    """A read stream that answers unparsable items and yields only messages.

    Args:
        inner: The transport's read stream (messages and exceptions).
        write: The transport's write stream, where the answers go.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        """The sender context of the last item (the SDK's dispatcher restores it per message)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """Return the next message, answering every bad line before it.

        Raises:
            EndOfStream: The client closed stdin.
        """
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            if reply is not None:
                await self._write.send(reply)

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def error_reply(error: Exception) -> SessionMessage | None:
    """The JSON-RPC error answering a line that did not parse; ``None`` for a blank line.

    Malformed JSON gets ``-32700 Parse error``; JSON that is no JSON-RPC message (or a line over
    :data:`MAX_LINE_BYTES`) gets ``-32600 Invalid Request``, with the request's ``id`` when one
    can be read, else ``null``.
    """
    code, message, request_id = INVALID_REQUEST, "Invalid Request", None
    if isinstance(error, ValidationError):
        problems = error.errors(include_url=False)
        invalid_json = [p for p in problems if p["type"] == "json_invalid"]
        if invalid_json:
            line = invalid_json[0].get("input")
            if isinstance(line, str) and not line.strip():
                return None  # a blank line between messages is no request at all
            code, message = PARSE_ERROR, "Parse error"
        else:
            request_id = _request_id(problem["input"] for problem in problems)
    rpc_error = JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)
    )
    return SessionMessage(rpc_error)


def _request_id(inputs: Any) -> int | str | None:
    for value in inputs:
        if isinstance(value, dict):
            candidate = value.get("id")
            if isinstance(candidate, str) or (
                isinstance(candidate, int) and not isinstance(candidate, bool)
            ):
                return candidate
    return None


async def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes, answering every bad line.

    Raises:
        RuntimeError: Another stdio transport already holds this process's stdin/stdout.
    """
    # The SDK's documented escape hatch (its migration guide does the same) to drive the
    # low-level server over streams we hand it.
    lowlevel = server._lowlevel_server
    transport = pipe_stdio if pipes_usable() else stdio_server
    async with transport() as (read, write):
        await lowlevel.run(
            AnsweringReadStream(read, write), write, lowlevel.create_initialization_options()
        )


def pipes_usable() -> bool:
    """Whether :func:`pipe_stdio` can serve: asyncio, POSIX, stdin and stdout pipes or sockets.

    ``THOUGHTLEDGER_STDIO=sdk`` says no, whatever the rest: an escape hatch, and a baseline.
    """
    if os.environ.get(TRANSPORT_ENV, "").strip().lower() == "sdk":
        return False
    return _on_asyncio() and sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


def _on_asyncio() -> bool:
    # Inside an asyncio task (not trio, not a thread): asked of asyncio itself, which is how
    # sniffio answers it, without depending on sniffio.
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no event loop running in this thread
        return False


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    # Not a terminal or a file: O_NONBLOCK would leak into a shell sharing a tty, and the loop
    # cannot poll regular files.
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception],
    MemoryObjectSendStream[SessionMessage],
]


@asynccontextmanager
async def pipe_stdio() -> AsyncIterator[Streams]:
    """The stdio transport on asyncio pipe transports: read and write without worker threads.

    Same contract as the SDK's ``stdio_server``: yields a read stream of messages (and
    exceptions for lines that did not parse) and a write stream of messages; stdin's EOF ends
    the read stream.

    Raises:
        OSError: The standard descriptors cannot be duplicated or attached to the loop.
    """
    loop = asyncio.get_running_loop()
    wire_in, wire_out, restore = _claim_standard_fds()
    try:
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(wire_out, "wb", buffering=0),
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_read_lines, reader, read_send)
                group.start_soon(_write_lines, writer, write_receive)
                yield read_receive, write_send
        finally:
            read_transport.close()
            write_transport.close()
    finally:
        restore()


async def _read_lines(
    reader: asyncio.StreamReader, messages: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    async with messages:
        while True:
            try:
                line = await reader.readline()
            except ValueError as exc:  # over MAX_LINE_BYTES: the reader skipped it
                await messages.send(exc)
                continue
            if not line:
                return  # EOF: the client closed stdin
            # As the SDK's transport does: bytes that are not UTF-8 become U+FFFD, not an error.
            text = line.decode("utf-8", errors="replace")
            try:
                message = mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
            except ValidationError as exc:
                await messages.send(exc)
                continue
            await messages.send(SessionMessage(message))


async def _write_lines(
    writer: asyncio.StreamWriter, messages: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    connected = True
    async with messages:
        async for message in messages:
            if not connected:
                continue  # keep taking answers, so the server runs on until stdin's EOF
            line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            writer.write(line.encode("utf-8") + b"\n")
            try:
                await writer.drain()
            except ConnectionError:
                connected = False  # the client stopped reading


def _claim_standard_fds() -> tuple[int, int, Callable[[], None]]:
    """Move the wire to private descriptors; point fd 0 at /dev/null and fd 1 at stderr.

    Returns:
        The private stdin and stdout descriptors, and the function that puts fd 0 and fd 1 back
        (blocking again: the pipe transports switch the shared file descriptions to non-blocking).
    """
    sys.stdout.flush()
    saved_in, saved_out = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr at all: stray output goes nowhere rather than on the wire
            os.dup2(null, 1)
    finally:
        os.close(null)

    def restore() -> None:
        sys.stdout.flush()
        for fd, saved in ((0, saved_in), (1, saved_out)):
            os.set_blocking(saved, True)
            os.dup2(saved, fd)
            os.close(saved)

    return wire_in, wire_out, restore


__all__ = [
    "MAX_LINE_BYTES",
    "TRANSPORT_ENV",
    "AnsweringReadStream",
    "error_reply",
    "pipe_stdio",
    "pipes_usable",
    "run_stdio",
]
