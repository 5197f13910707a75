r"""stdio for the MCP server: every request answered, bad lines included, even after stdin closes.

The SDK still parses, dispatches and answers every message; :func:`run_stdio` puts one stream
pair (:func:`answering_streams`) between the transport and the SDK's server that adds:

* **Bad lines are answered.** The SDK turns a line it cannot parse into an exception item on its
  read stream, and its dispatcher drops such items with a DEBUG log, so the client waits forever.
  They are answered instead: ``-32700`` for malformed JSON, ``-32600`` for JSON that is no
  JSON-RPC message.
* **A lone surrogate is not a parse error.** ``"a\ud800b"`` is valid JSON, but the SDK's parser
  refuses it; such a line is parsed again (see :mod:`thoughtledger.adapters.mcp.stdio.wire`), and
  the tool that receives the string refuses it by name (see
  :data:`thoughtledger.adapters.mcp.tools.lax_types.LaxText`).
* **stdin's EOF waits for the answers.** When stdin closes (``cat requests.jsonl | thoughtledger
  serve``) the SDK's dispatcher ends and cancels every call still running: a thought already
  recorded would be answered ``Connection closed``, or not at all. The read stream therefore
  reports the end only once every request it handed over has been answered (or settled without
  an answer, as a cancelled one is), so each answer is written exactly once before we exit.

The transport (:func:`stdio_transport`) is :func:`thoughtledger.adapters.mcp.stdio.pipes.pipe_stdio`
when stdin and stdout are pipes or sockets on asyncio (unless ``THOUGHTLEDGER_STDIO=sdk`` is set);
otherwise the SDK's own ``stdio_server`` writes the answers
(:func:`thoughtledger.adapters.mcp.stdio.sdk_streams.sdk_stdio`). Either way stdin is read by
:func:`thoughtledger.adapters.mcp.stdio.framing.read_messages`: a line is at most
:data:`MAX_LINE_BYTES` and must be UTF-8, else it is answered ``-32700`` saying why.
"""

import os
from collections import Counter
from dataclasses import replace
from typing import Any, Protocol, Self, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)

from thoughtledger.adapters.mcp.sdk_private import lowlevel_server
from thoughtledger.adapters.mcp.stdio.framing import MAX_LINE_BYTES
from thoughtledger.adapters.mcp.stdio.pipes import pipe_stdio, pipes_available
from thoughtledger.adapters.mcp.stdio.sdk_streams import sdk_stdio, terminal_available
from thoughtledger.adapters.mcp.stdio.wire import encodable, error_reply, reparsed
from thoughtledger.api import ClosedOnExit

_Item_co = TypeVar("_Item_co", covariant=True)
_Item_contra = TypeVar("_Item_contra", contravariant=True)


class ReadStream(Protocol[_Item_co]):
    """What a transport hands the server to read: the SDK's transports and anyio's streams."""

    async def receive(self) -> _Item_co:
        """Return the next item; raise ``anyio.EndOfStream`` at the end."""

    async def aclose(self) -> None:
        """Close the stream."""


class WriteStream(Protocol[_Item_contra]):
    """What a transport hands the server to write to."""

    async def send(self, item: _Item_contra, /) -> None:
        """Write one item."""

    async def aclose(self) -> None:
        """Close the stream."""


TRANSPORT_ENV = "THOUGHTLEDGER_STDIO"
"""Set to ``sdk`` to serve stdio with the SDK's writer and threaded reads, whatever the pipes."""


class _Exchange:
    """The requests one connection handed to the server and the answers that went back."""

    def __init__(self) -> None:
        self.unanswered: Counter[RequestId] = Counter()
        self.asked: set[RequestId] = set()  # the server's own requests, awaiting the client
        self.surrogates = False  # a line held a lone surrogate: check what goes back
        self._changed = anyio.Event()

    def opened(self, request_id: RequestId) -> None:
        self.unanswered[request_id] += 1

    def settled(self, request_id: RequestId) -> None:
        left = self.unanswered.pop(request_id, 0) - 1
        if left > 0:  # the client reused an id while its first request was still running
            self.unanswered[request_id] = left
        self._changed.set()

    def server_asked(self, request_id: RequestId) -> None:
        self.asked.add(request_id)
        self._changed.set()

    def client_replied(self, request_id: RequestId | None) -> None:
        if request_id is not None:
            self.asked.discard(request_id)

    async def drained(self) -> None:
        """Return once every request is answered, or once waiting is futile.

        It is futile when the server waits for the client (a request of its own): the client
        can no longer answer, and only the end of the stream fails that request.
        """
        while self.unanswered and not self.asked:
            self._changed = anyio.Event()
            await self._changed.wait()


class AnsweringReadStream(ClosedOnExit):
    """The read stream the server sees: messages only, its end held back until all is answered.

    Args:
        inner: The transport's read stream (messages, and exceptions for bad lines).
        write: Where answers to bad lines go (the transport's write stream, or the answering
            write stream).
        exchange: Shared with the write stream; a fresh one when this stream stands alone.
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        exchange: _Exchange | None = None,
    ) -> None:
        self._inner = inner
        self._write = write
        self._exchange = exchange or _Exchange()

    @property
    def last_context(self) -> Any:
        """The sender context of the last item (the SDK's dispatcher restores it per message)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """Return the next message, answering every bad line before it.

        Raises:
            EndOfStream: The client closed stdin and every request it sent has been answered.
        """
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._exchange.drained()
                raise
            if isinstance(item, Exception):
                item = self._reparsed(item)
            if isinstance(item, Exception):
                reply = error_reply(item)
                if reply is not None:
                    await self._write.send(reply)
                continue
            return self._tracked(item)

    def _reparsed(self, error: Exception) -> SessionMessage | Exception:
        item = reparsed(error)
        if isinstance(item, SessionMessage):
            self._exchange.surrogates = True
        return item

    def _tracked(self, item: SessionMessage) -> SessionMessage:
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._exchange.client_replied(message.id)
            return item
        if not isinstance(message, JSONRPCRequest):
            return item
        exchange, request_id = self._exchange, message.id
        exchange.opened(request_id)
        metadata = item.metadata
        earlier = (
            metadata.on_request_unanswered if isinstance(metadata, ServerMessageMetadata) else None
        )

        async def unanswered() -> None:  # the dispatcher settled it without an answer
            exchange.settled(request_id)
            if earlier is not None:
                await earlier()

        if isinstance(metadata, ServerMessageMetadata):
            metadata = replace(metadata, on_request_unanswered=unanswered)
        else:
            metadata = ServerMessageMetadata(on_request_unanswered=unanswered)
        return SessionMessage(message, metadata=metadata)

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


class AnsweringWriteStream(ClosedOnExit):
    """The write stream the server sees: notes each answer, and keeps the wire encodable.

    Args:
        inner: The transport's write stream.
        exchange: Shared with the read stream.
    """

    def __init__(self, inner: WriteStream[SessionMessage], exchange: _Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    async def send(self, item: SessionMessage, /) -> None:
        """Write ``item``; an answer counts as given once the transport has taken it.

        Raises:
            ClosedResourceError: The stream was closed.
            BrokenResourceError: The transport stopped taking messages.
        """
        message = item.message
        if self._exchange.surrogates:
            item = encodable(item)
        if isinstance(message, JSONRPCRequest):
            self._exchange.server_asked(message.id)
        try:
            await self._inner.send(item)
        finally:
            if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
                self._exchange.settled(message.id)

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()


def answering_streams(
    read: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]
) -> tuple[AnsweringReadStream, AnsweringWriteStream]:
    """Wrap a transport's streams so every request is answered (see the module docstring)."""
    exchange = _Exchange()
    answering_write = AnsweringWriteStream(write, exchange)
    return AnsweringReadStream(read, answering_write, exchange), answering_write


async def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes and every request is answered.

    Raises:
        RuntimeError: Another stdio transport already holds this process's stdin/stdout, or
            the installed SDK keeps its low-level server elsewhere.
    """
    # MCPServer serves only over streams it makes itself; the low-level server takes ours.
    lowlevel = lowlevel_server(server)
    chosen = stdio_transport()
    transport = pipe_stdio() if chosen == "pipes" else sdk_stdio(terminal=chosen == "terminal")
    async with transport as (read, write):
        answering_read, answering_write = answering_streams(read, write)
        await lowlevel.run(
            answering_read, answering_write, lowlevel.create_initialization_options()
        )


def stdio_transport() -> str:
    """Which transport :func:`run_stdio` uses here: ``pipes``, ``terminal`` or ``sdk``.

    ``pipes`` when stdin and stdout are pipes or sockets on asyncio (``THOUGHTLEDGER_STDIO=sdk``
    says no, whatever the rest); else ``terminal`` when stdin is a terminal, a pipe or a socket
    (the SDK's writer, reading on the event loop, so that Ctrl-C is never held by a read); else
    ``sdk`` (stdin a file or a device: the SDK's writer, reading in a worker thread).
    """
    if pipes_usable():
        return "pipes"
    if _sdk_chosen():
        return "sdk"
    return "terminal" if terminal_available() else "sdk"


def pipes_usable() -> bool:
    """Whether :func:`pipe_stdio` can serve: asyncio, POSIX, stdin and stdout pipes or sockets.

    ``THOUGHTLEDGER_STDIO=sdk`` says no, whatever the rest: an escape hatch, and a baseline.
    """
    if _sdk_chosen():
        return False
    return pipes_available()


def _sdk_chosen() -> bool:
    return os.environ.get(TRANSPORT_ENV, "").strip().lower() == "sdk"


__all__ = [
    "MAX_LINE_BYTES",
    "TRANSPORT_ENV",
    "AnsweringReadStream",
    "AnsweringWriteStream",
    "answering_streams",
    "error_reply",
    "pipe_stdio",
    "pipes_usable",
    "run_stdio",
    "stdio_transport",
]
