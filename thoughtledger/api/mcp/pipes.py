"""stdio read on the event loop: pipes without worker threads, a terminal that Ctrl-C can stop.

The SDK reads each line and writes (then flushes) each answer through a worker thread: three
thread hand-offs per call, about a quarter of a bare round trip. When stdin and stdout are pipes
or sockets (as an MCP host spawns us) and the loop is asyncio's, :func:`pipe_stdio` uses
non-blocking pipe transports instead. Like the SDK, it moves the wire to private descriptors
while serving (fd 0 reads ``/dev/null``, fd 1 writes to stderr), so nothing else in the process
can write on the JSON-RPC channel, and puts everything back afterwards.

On a terminal the SDK's transport stays, with one change: :class:`TerminalInput` reads the
typed lines on the event loop. The SDK reads stdin in a worker thread that cancellation cannot
interrupt, so Ctrl-C waited for the next line, and the process could not exit while the thread
blocked (a third Ctrl-C printed a ``KeyboardInterrupt`` traceback from the thread join).
"""

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import anyio
import mcp.types as mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest accepted line; a longer one is answered ``-32600`` and skipped."""

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception],
    MemoryObjectSendStream[SessionMessage],
]


def pipes_available() -> bool:
    """Whether :func:`pipe_stdio` can serve: an asyncio loop, POSIX, stdin and stdout pipes.

    Call it from inside the event loop (anyio's asyncio backend, or asyncio itself).
    """
    try:
        asyncio.get_running_loop()  # raises under trio: pipe transports are asyncio's
    except RuntimeError:
        return False
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


def terminal_available() -> bool:
    """Whether stdin is a terminal, or a pipe or socket, that :class:`TerminalInput` can read.

    POSIX only. A pipe counts: read in a worker thread, it held the process until the writer
    closed it (``sleep 7 | thoughtledger serve``), whatever Ctrl-C said.
    """
    return sys.platform != "win32" and (os.isatty(0) or _is_pipe(0))


class TerminalInput(anyio.AsyncFile[str]):
    """Lines typed on a terminal, awaited on the event loop so that a cancellation ends the wait.

    Meant for the SDK's ``stdio_server(stdin=...)``, which only iterates it. The descriptor is
    left blocking (it is shared with the shell); it is read only once it has data or EOF.

    Args:
        fd: The terminal's descriptor.
    """

    def __init__(self, fd: int = 0) -> None:
        super().__init__(sys.stdin)
        self._fd = fd

    async def __aiter__(self) -> AsyncIterator[str]:
        pending = b""
        while True:
            await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:  # Ctrl-D at the start of a line
                if pending:
                    yield pending.decode("utf-8", errors="replace")
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                yield line.decode("utf-8", errors="replace") + "\n"


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    # Not a terminal or a file: O_NONBLOCK would leak into a shell sharing a tty, and the loop
    # cannot poll regular files.
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def pipe_stdio() -> AsyncIterator[Streams]:
    """The stdio transport on asyncio pipe transports: read and write without worker threads.

    Same contract as the SDK's ``stdio_server``: yields a read stream of messages (and
    exceptions for lines that did not parse) and a write stream of messages; stdin's EOF ends
    the read stream. Every answer handed to the write stream before it closes reaches stdout.

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
    if connected:
        # drain() only waits for the buffer to fall below its high-water mark: the last
        # answers may still sit in it. Closing flushes them; the process exits only after.
        writer.close()
        with suppress(ConnectionError):
            await writer.wait_closed()


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
    "TerminalInput",
    "pipe_stdio",
    "pipes_available",
    "terminal_available",
]
