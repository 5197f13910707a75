"""How a signal stops ``serve``: on the event loop, at once for Ctrl-C, gracefully for SIGTERM.

Python's default turns Ctrl-C into ``KeyboardInterrupt`` wherever the main thread is, and
asyncio's runner turns the first one into a cancellation that a blocked worker thread can delay
indefinitely; uvicorn installs handlers of its own that wait for open streams. ``serve`` instead
watches the signals on the loop (:func:`signals_handled`) and decides what each one stops.
"""

import contextlib
import signal
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskStatus

if TYPE_CHECKING:
    import uvicorn


@contextlib.asynccontextmanager
async def signals_handled(
    on_interrupt: Callable[[], None], *, on_term: Callable[[], None] | None = None
) -> AsyncIterator[None]:
    """Run ``on_interrupt`` on Ctrl-C (and ``on_term`` on SIGTERM) while the block runs.

    On the event loop, not in a worker thread: a blocked read cannot delay it, and nothing
    raises ``KeyboardInterrupt`` into the middle of a write. A second Ctrl-C ends the process
    by the signal's default action.

    Args:
        on_interrupt: Stops the server at once (called on the event loop).
        on_term: Stops it gracefully; ``None`` leaves SIGTERM alone.
    """
    watched = [signal.SIGINT] + ([signal.SIGTERM] if on_term is not None else [])
    async with anyio.create_task_group() as group:

        async def watch(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            interrupted = False
            with anyio.open_signal_receiver(*watched) as received:
                task_status.started()
                async for signum in received:
                    if signum == signal.SIGTERM and on_term is not None:
                        on_term()
                    elif interrupted:  # Ctrl-C again while stopping: stop now, quietly
                        signal.signal(signal.SIGINT, signal.SIG_DFL)
                        signal.raise_signal(signal.SIGINT)
                    else:
                        interrupted = True
                        on_interrupt()

        await group.start(watch)  # the handlers are in place before the block runs
        try:
            yield
        finally:
            group.cancel_scope.cancel()


def http_server(config: "uvicorn.Config", *, queue: int | None = None) -> "uvicorn.Server":
    """A uvicorn server that leaves SIGINT and SIGTERM to :func:`signals_handled`.

    Args:
        config: The server's configuration.
        queue: The listening sockets' queue of connections not yet accepted, once serving; by
            default ``config.backlog``, which is also how many the event loop accepts at a time.
    """
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, minus its own signal handlers."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if queue is not None:
                for listener in sockets or ():
                    listener.listen(queue)  # after asyncio's own listen(config.backlog)

    return Server(config)


__all__ = ["http_server", "signals_handled"]
