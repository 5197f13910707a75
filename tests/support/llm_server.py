"""A real OpenAI-compatible HTTP server on 127.0.0.1, answering from a script, for the LLM tests.

It is a small Starlette app served by uvicorn in a background thread, on a socket bound and
listening before the thread starts: a client can connect at once (the kernel queues the
connection until uvicorn accepts it), so no test waits for the server to come up.

Each ``POST /v1/chat/completions`` takes the next :class:`Reply` from the script (an exhausted
script answers 500) and records the request (JSON body and headers) for the test to inspect.

A streamed reply (:func:`streamed`) answers as OpenAI's chat completions do with ``stream:
true``: server-sent events, one ``data: {...}`` chat-completion chunk per piece of the answer,
``delay`` seconds apart, a last chunk with the usage when ``stream_options.include_usage`` asked
for it, then ``data: [DONE]``. :attr:`FakeLLM.streams` counts the streams served to the end and
those the client closed before the end.
"""

import json
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

HANG_LIMIT = 30.0
"""Longest a hanging reply holds its request (released at once when the server stops)."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a status, a body (JSON-encoded unless ``raw``), or a hang."""

    status: int = 200
    body: Any = None
    raw: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    pieces: tuple[str, ...] | None = None
    """When set: the answer's content, streamed one piece per event (see :func:`streamed`)."""
    delay: float = 0.0
    events: tuple[str, ...] = ()
    """Raw ``data`` payloads sent before the pieces (errors, malformed events...)."""
    break_after: int | None = None
    """Streamed: drop the connection after this many pieces, as a crashing server would."""


def completion(
    content: str | None,
    *,
    model: str = "served-model",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    finish_reason: str = "stop",
    usage_extra: dict[str, Any] | None = None,
) -> Reply:
    """A successful chat completion whose message is ``content``."""
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **(usage_extra or {}),
            },
        }
    )


def structured(
    thought: str, confidence: Any = None, hint: str | None = None, **usage: Any
) -> Reply:
    """A completion whose content is the structured answer the client asks for."""
    answer: dict[str, Any] = {"thought": thought}
    if confidence is not None:
        answer["confidence"] = confidence
    if hint is not None:
        answer["reasoning_hint"] = hint
    return completion(json.dumps(answer), **usage)


def streamed(
    thought_pieces: list[str],
    *,
    delay: float = 0.02,
    confidence: float | None = 0.8,
    hint: str | None = "Go on",
    plain: bool = False,
    events: tuple[str, ...] = (),
) -> Reply:
    """A streamed structured answer whose thought is ``thought_pieces`` joined.

    The JSON around the thought is streamed too, as a model writes it: the opening up to the
    thought's first quote, each piece escaped, then the closing with confidence and hint.
    ``plain`` streams the pieces as they are (a model asked for plain text).
    """
    if plain:
        return Reply(pieces=tuple(thought_pieces), delay=delay, events=events)
    tail: dict[str, Any] = {}
    if confidence is not None:
        tail["confidence"] = confidence
    if hint is not None:
        tail["reasoning_hint"] = hint
    closing = '"' + ("" if not tail else ", " + json.dumps(tail)[1:-1]) + "}"
    escaped = [json.dumps(piece, ensure_ascii=False)[1:-1] for piece in thought_pieces]
    return Reply(pieces=('{"thought": "', *escaped, closing), delay=delay, events=events)


def error(status: int, message: str, *, param: str | None = None, **headers: str) -> Reply:
    """An error answer in OpenAI's error shape."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    return Reply(status=status, body=body, headers=headers)


def malformed() -> Reply:
    """A 200 whose body claims to be JSON and is not."""
    return Reply(raw='{"choices": [', headers={"content-type": "application/json"})


def hang() -> Reply:
    """A request that is never answered while the test runs (the client must time out)."""
    return Reply(hang=True)


class FakeLLM:
    """The scripted server: ``base_url`` to point a client at, ``requests`` seen so far."""

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.streams = {"finished": 0, "cut": 0}
        self._release = threading.Event()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        port = self._socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        app = Starlette(routes=[Route("/v1/chat/completions", self._answer, methods=["POST"])])
        config = uvicorn.Config(
            app, lifespan="off", ws="none", log_level="critical", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def queue(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self.script.extend(replies)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received, in order."""
        return self.requests

    async def _answer(self, request: Request) -> Response:
        self.requests.append(json.loads(await request.body()))
        self.headers.append(dict(request.headers))
        reply = self.script.popleft() if self.script else error(500, "script exhausted")
        if reply.hang:
            await anyio.to_thread.run_sync(self._release.wait, HANG_LIMIT)
            return Response(status_code=504)
        if reply.pieces is not None:
            body = self.requests[-1]
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(
                self._stream(reply, "served-model", usage),
                status_code=reply.status,
                headers=reply.headers,
                media_type="text/event-stream",
            )
        if reply.raw is not None:
            return Response(reply.raw, status_code=reply.status, headers=reply.headers)
        return Response(
            json.dumps(reply.body),
            status_code=reply.status,
            headers=reply.headers,
            media_type="application/json",
        )

    async def _stream(self, reply: Reply, model: str, usage: bool) -> AsyncIterator[bytes]:
        assert reply.pieces is not None
        finished = False
        try:
            for event in reply.events:
                yield f"data: {event}\n\n".encode()
            for index, piece in enumerate(reply.pieces):
                if index:
                    await anyio.sleep(reply.delay)
                if index == reply.break_after:
                    raise ConnectionAbortedError("the scripted server breaks off")
                delta = (
                    {"role": "assistant", "content": piece} if index == 0 else {"content": piece}
                )
                yield _event(_chunk(model, delta, None))
            yield _event(_chunk(model, {}, "stop"))
            if usage:
                counts = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
                yield _event({**_chunk(model, {}, None), "choices": [], "usage": counts})
            # Counted before the last event is sent: the client may act on it at once.
            finished = True
            self.streams["finished"] += 1
            yield b"data: [DONE]\n\n"
        finally:
            if not finished:
                self.streams["cut"] += 1

    async def cut(self, count: int = 1) -> None:
        """Wait (bounded) until ``count`` streams were closed by their client before the end.

        The server notices a client that went away a moment after it went.
        """
        with anyio.fail_after(10):
            while self.streams["cut"] < count:  # noqa: ASYNC110  # the server thread counts
                await anyio.sleep(0.02)

    def start(self) -> None:
        """Serve in the background (connections already queue on the listening socket)."""
        self._thread.start()

    def stop(self) -> None:
        """Release hanging requests, stop serving and wait (bounded) for the thread."""
        self._release.set()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()
        assert not self._thread.is_alive(), "the fake LLM server did not stop"


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _event(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


@contextmanager
def fake_llm() -> Iterator[FakeLLM]:
    """Run a :class:`FakeLLM` for the duration of the block."""
    server = FakeLLM()
    server.start()
    try:
        yield server
    finally:
        server.stop()
