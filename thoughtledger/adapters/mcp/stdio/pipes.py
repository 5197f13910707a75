"""stdio on the event loop: pipes without worker threads.

The SDK reads each line and writes (then flushes) each answer through a worker thread: three
thread hand-offs per call, about a quarter of a bare round trip. When stdin and stdout are pipes
or sockets (as an MCP host spawns us) and the loop is asyncio's, :func:`pipe_stdio` uses
non-blocking pipe transports instead. Like the SDK, it moves the wire to private descriptors
while serving (fd 0 reads ``/dev/null``, fd 1 writes to stderr), so nothing else in the process
can write on the JSON-RPC channel, and puts everything back afterwards.

When the client stops reading (its end of stdout closes), answers are dropped and the server
runs on until stdin's end, as before; :func:`reader_gone` tells a call that streams to it (see
:mod:`thoughtledger.adapters.mcp.tools.progress`) that nobody reads any more, so it can stop.

Lines are cut, bounded and decoded by
:func:`thoughtledger.adapters.mcp.stdio.framing.read_messages`, as on every stdio transport; stdin
that is no pipe is read by :mod:`thoughtledger.adapters.mcp.stdio.sdk_streams`.
"""

import asyncio
import functools
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from thoughtledger.adapters.mcp.stdio.framing import READ_BYTES, read_messages

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception],
    MemoryObjectSendStream[SessionMessage],
]


_READER_GONE: ContextVar[anyio.Event | None] = ContextVar("tl_stdio_reader_gone", default=None)
"""Set by :func:`pipe_stdio` for the calls it serves (they run in tasks it starts)."""


def reader_gone() -> bool:
    """Whether the stdio client served here stopped reading the answers (``False`` elsewhere)."""
    gone = _READER_GONE.get()
    return gone is not None and gone.is_set()


def pipes_available() -> bool:
    """Whether :func:`pipe_stdio` can serve: an asyncio loop, POSIX, stdin and stdout pipes.

    Call it from inside the event loop (anyio's asyncio backend, or asyncio itself).
    """
    try:
        asyncio.get_running_loop()  # raises under trio: pipe transports are asyncio's
    except RuntimeError:
        return False
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


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
        # The reader's own limit (64 KiB) only bounds its buffer: lines are cut by read_messages.
        reader = asyncio.StreamReader()
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(wire_out, "wb", buffering=0),
        )
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        gone = anyio.Event()
        # Set in this task, which goes on to run the server: every call's task inherits it.
        _READER_GONE.set(gone)
        read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as group:
                read = functools.partial(reader.read, READ_BYTES)
                group.start_soon(read_messages, read, read_send)
                group.start_soon(_write_lines, writer, write_receive, gone)
                yield read_receive, write_send
        finally:
            read_transport.close()
            write_transport.close()
    finally:
        restore()


async def _write_lines(
    writer: asyncio.StreamWriter,
    messages: MemoryObjectReceiveStream[SessionMessage],
    gone: anyio.Event,
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
                gone.set()
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
    "pipe_stdio",
    "pipes_available",
    "reader_gone",
]
