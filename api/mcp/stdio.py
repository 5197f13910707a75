r"""stdio for the MCP server: every request answered, bad lines included, even after stdin closes.

The SDK still parses, dispatches and answers every message; :func:`run_stdio` puts one stream
pair (:func:`answering_streams`) between the transport and the SDK's server that adds:

* **Bad lines are answered.** The SDK turns a line it cannot parse into an exception item on its
  read stream, and its dispatcher drops such items with a DEBUG log, so the client waits forever.
  They are answered instead: ``-32700`` for malformed JSON, ``-32600`` for JSON that is no
  JSON-RPC message.
* **A lone surrogate is not a parse error.** ``"a\ud800b"`` is valid JSON, but the SDK's parser
  refuses it; such a line is parsed again with the standard library, and the tool that receives
  the string refuses it by name (see :data:`api.mcp.coercion.Text`). Anything the server writes
  back that still holds one is sent with the surrogate spelled out (``\ud800``).
* **stdin's EOF waits for the answers.** When stdin closes (``cat requests.jsonl | thoughtledger
  serve``) the SDK's dispatcher ends and cancels every call still running: a thought already
  recorded would be answered ``Connection closed``, or not at all. The read stream therefore
  reports the end only once every request it handed over has been answered (or settled without
  an answer, as a cancelled one is), so each answer is written exactly once before we exit.

The transport is :func:`api.mcp.pipes.pipe_stdio` when stdin and stdout are pipes or sockets on
asyncio; anything else (a terminal, a file, Windows, trio) gets the SDK's own ``stdio_server``,
and so does everything when ``THOUGHTLEDGER_STDIO=sdk`` is set.
"""

import json
import os
import re
from collections import Counter
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

import anyio
import mcp.types as mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from api.mcp.pipes import (
    MAX_LINE_BYTES,
    TerminalInput,
    pipe_stdio,
    pipes_available,
    terminal_available,
)

TRANSPORT_ENV = "THOUGHTLEDGER_STDIO"
"""Set to ``sdk`` to serve stdio on the SDK's own transport (worker threads) whatever the pipes."""

# A \u escape of a surrogate: the one thing valid JSON may hold that the SDK's parser refuses.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


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


class AnsweringReadStream:
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
        data = _with_lone_surrogates(error)
        if data is None:
            return error
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_python(
                _spelled_out_but_arguments(data), by_name=False
            )
        except ValidationError as invalid:
            return invalid
        self._exchange.surrogates = True
        return SessionMessage(message)

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


class AnsweringWriteStream:
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
            item = _encodable(item)
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


def answering_streams(
    read: ReadStream[SessionMessage | Exception], write: WriteStream[SessionMessage]
) -> tuple[AnsweringReadStream, AnsweringWriteStream]:
    """Wrap a transport's streams so every request is answered (see the module docstring)."""
    exchange = _Exchange()
    answering_write = AnsweringWriteStream(write, exchange)
    return AnsweringReadStream(read, answering_write, exchange), answering_write


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


def _with_lone_surrogates(error: Exception) -> Any:
    """The JSON of a line the SDK refused only for a surrogate escape; ``None`` otherwise."""
    if not isinstance(error, ValidationError):
        return None
    lines = [p.get("input") for p in error.errors(include_url=False) if p["type"] == "json_invalid"]
    line = lines[0] if lines else None
    if not isinstance(line, str) or _SURROGATE_ESCAPE.search(line) is None:
        return None
    try:
        # The standard library takes lone surrogates; it also takes NaN and Infinity, which
        # JSON does not, so those stay parse errors.
        return json.loads(line, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _encodable(item: SessionMessage) -> SessionMessage:
    r"""``item`` as is if it encodes as UTF-8, else with each lone surrogate spelled ``\udxxx``."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        data = item.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        message = mcp_types.jsonrpc_message_adapter.validate_python(
            _spelled_out(data), by_name=False
        )
        return SessionMessage(message, metadata=item.metadata)
    return item


def _spelled_out_but_arguments(data: Any) -> Any:
    """``data`` with lone surrogates spelled out, except in a tool call's arguments.

    The tool names the argument that holds one and refuses the call; anywhere else (a client's
    name, a tool's name) the text is kept as its escape, so the message is still served and
    nothing unencodable reaches the ledger.
    """
    params = data.get("params") if isinstance(data, dict) else None
    if not isinstance(params, dict) or "arguments" not in params:
        return _spelled_out(data)
    arguments = params["arguments"]
    spelled = _spelled_out({**data, "params": {**params, "arguments": None}})
    spelled["params"]["arguments"] = arguments
    return spelled


def _spelled_out(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_spelled_out(key): _spelled_out(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_spelled_out(inner) for inner in value]
    return value


async def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes and every request is answered.

    Raises:
        RuntimeError: Another stdio transport already holds this process's stdin/stdout.
    """
    # The SDK's documented escape hatch (its migration guide does the same) to drive the
    # low-level server over streams we hand it.
    lowlevel = server._lowlevel_server
    chosen = stdio_transport()
    if chosen == "pipes":
        transport = pipe_stdio()
    elif chosen == "terminal":
        transport = stdio_server(stdin=TerminalInput(0))
    else:
        transport = stdio_server()
    async with transport as (read, write):
        answering_read, answering_write = answering_streams(read, write)
        await lowlevel.run(
            answering_read, answering_write, lowlevel.create_initialization_options()
        )


def stdio_transport() -> str:
    """Which transport :func:`run_stdio` uses here: ``pipes``, ``terminal`` or ``sdk``.

    ``pipes`` when stdin and stdout are pipes or sockets on asyncio (``THOUGHTLEDGER_STDIO=sdk``
    says no, whatever the rest); else ``terminal`` when stdin is a terminal (the SDK's transport,
    reading on the event loop); else ``sdk``.
    """
    if pipes_usable():
        return "pipes"
    return "terminal" if terminal_available() else "sdk"


def pipes_usable() -> bool:
    """Whether :func:`pipe_stdio` can serve: asyncio, POSIX, stdin and stdout pipes or sockets.

    ``THOUGHTLEDGER_STDIO=sdk`` says no, whatever the rest: an escape hatch, and a baseline.
    """
    if os.environ.get(TRANSPORT_ENV, "").strip().lower() == "sdk":
        return False
    return pipes_available()


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
