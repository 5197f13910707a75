"""stdio where stdin is no pipe on asyncio: the SDK's writer, with our reader.

When stdin is a terminal, a file or a device (``thoughtledger serve < requests.jsonl``), or
``THOUGHTLEDGER_STDIO=sdk`` asks for it, answers go out through the SDK's ``stdio_server`` (a worker
thread writes and flushes each one). Its reader is not used: it reads a line with no bound and turns
invalid UTF-8 into U+FFFD, so ``thoughtledger serve < /dev/zero`` grew until the kernel killed it.
Lines come instead from :func:`thoughtledger.adapters.mcp.stdio.framing.read_messages`, as on the
pipe transport, with bytes read:

* from a terminal, a pipe or a socket, on the event loop once it has data, so that Ctrl-C ends
  the wait (the SDK's worker thread cannot be interrupted: Ctrl-C waited for the next line, and a
  blocked thread kept the process from exiting);
* from anything else, in a worker thread, on a private copy of fd 0 (fd 0 itself reads
  ``/dev/null`` while serving, as the SDK arranges when it reads, so nothing else in the process
  takes the client's bytes).
"""

import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from thoughtledger.adapters.mcp.stdio.framing import READ_BYTES, ByteSource, read_messages

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception],
    MemoryObjectSendStream[SessionMessage],
]


def terminal_available() -> bool:
    """Whether stdin is a terminal, a pipe or a socket, read on the event loop (POSIX).

    A pipe counts: read in a worker thread, it held the process until the writer closed it
    (``sleep 7 | thoughtledger serve``), whatever Ctrl-C said.
    """
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return os.isatty(0) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def sdk_stdio(*, terminal: bool) -> AsyncIterator[Streams]:
    """The SDK's stdio writer, with stdin read by our bounded reader.

    Same contract as the SDK's ``stdio_server``: a read stream of messages (and exceptions for
    lines that did not parse), ended by stdin's EOF, and a write stream of messages.

    Args:
        terminal: stdin is a terminal (see :func:`terminal_available`): read it on the event loop,
            and leave fd 0 in place (it is shared with the shell).

    Raises:
        OSError: stdin cannot be duplicated.
    """
    read, restore = (_terminal_bytes(0), None) if terminal else _claimed_stdin()
    finished = anyio.Event()
    try:
        async with stdio_server(stdin=_NoInput(finished)) as (_, write):
            read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](
                0
            )
            async with anyio.create_task_group() as group:
                group.start_soon(read_messages, read, read_send)
                try:
                    yield read_receive, write
                finally:
                    group.cancel_scope.cancel()
                    finished.set()
    finally:
        if restore is not None:
            restore()


class _NoInput(anyio.AsyncFile[str]):
    """The SDK's stdin while we read: no lines, ended when serving ends."""

    def __init__(self, finished: anyio.Event) -> None:
        super().__init__(sys.stdin)
        self._finished = finished

    async def __aiter__(self) -> AsyncIterator[str]:
        await self._finished.wait()
        return
        yield  # an async generator that yields nothing


def _terminal_bytes(fd: int) -> ByteSource:
    async def read() -> bytes:
        # The descriptor stays blocking (the shell shares it): read only once it has data.
        await anyio.wait_readable(fd)
        return os.read(fd, READ_BYTES)

    return read


def _claimed_stdin() -> tuple[ByteSource, Callable[[], None]]:
    """Read a private copy of fd 0 in worker threads; fd 0 reads ``/dev/null`` meanwhile."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    abandoned = False

    async def read() -> bytes:
        nonlocal abandoned
        try:
            # Abandoned on cancellation: a thread blocked on a pipe cannot be interrupted.
            return await anyio.to_thread.run_sync(os.read, wire, READ_BYTES, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            abandoned = True
            raise

    def restore() -> None:
        os.dup2(wire, 0)
        if not abandoned:  # a thread may still read it: the number must not be reused under it
            os.close(wire)

    return read, restore


__all__ = ["sdk_stdio", "terminal_available"]
