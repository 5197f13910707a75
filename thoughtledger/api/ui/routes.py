"""The web app behind ``thoughtledger ui``: pages, their JSON, a live feed; it never writes.

Every route reads. The pages are static files shipped with the package (HTML, CSS and the
scripts: no inline script, so the Content-Security-Policy forbids any); the data comes as JSON
from ``/api/...``. Requests must name a loopback host, so a web page elsewhere cannot reach the
app through DNS rebinding.
"""

import asyncio
import contextlib
import importlib.resources
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from thoughtledger.api import DEFAULT_PAGE, Ledger
from thoughtledger.api.ui.listing import SessionFilter, sessions_page
from thoughtledger.api.ui.payload import badge_json, event_json, report_json, session_payload
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.errors import InvalidInputError, LedgerError, SessionNotFoundError
from thoughtledger.ledger.ids import check_id

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names a request may carry (what ``serve --http`` listens on, and nothing else)."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""No inline script or style, nothing from elsewhere: a thought's text can only ever be text."""

_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
SESSION_SCRIPTS = (
    "session-model.js",
    "session-tree.js",
    "session-inspect.js",
    "session-live.js",
    "session.js",
)
"""The session view's scripts in load order (the page and ``export --html`` both need them all)."""

_STATIC = {
    **dict.fromkeys(SESSION_SCRIPTS, "text/javascript; charset=utf-8"),
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
_BADGES_MAX = 200
SESSION_PAGE_MAX = 50_000
"""The longest session (in events) the session page holds whole."""
_HEARTBEAT_SECONDS = 15.0

Endpoint = Callable[[Request], Awaitable[Response]]


def static_text(name: str) -> str:
    """One of the files shipped in ``thoughtledger/api/ui/static`` (HTML, CSS, JavaScript)."""
    return (importlib.resources.files("thoughtledger.api.ui") / "static" / name).read_text(
        encoding="utf-8"
    )


def _dumps(content: Any) -> bytes:
    """``content`` as JSON: orjson, or the standard library for integers past 64 bits."""
    try:
        return orjson.dumps(content)
    except orjson.JSONEncodeError:  # estimates have no upper bound; orjson stops at 64 bits
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()


class _Json(JSONResponse):
    def render(self, content: Any) -> bytes:
        return _dumps(content)


def _error(status: int, message: str) -> Response:
    return _Json({"error": message}, status_code=status)


def _guarded(handler: Endpoint) -> Endpoint:
    """Turn the ledger's errors into one-line JSON answers (400, 404, 503), never a traceback."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except SessionNotFoundError as exc:
            return _error(404, str(exc))
        except InvalidInputError as exc:
            return _error(400, str(exc))
        except LedgerError as exc:
            return _error(503, str(exc))

    return run


def _session_id(request: Request) -> str:
    return check_id(str(request.path_params["session_id"]))


def _number(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise InvalidInputError(f"{name} must be a whole number, not {text[:40]!r}") from None


def _time(request: Request, name: str) -> datetime | None:
    text = request.query_params.get(name)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(f"{name} must be an ISO 8601 time, not {text[:40]!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _text(request: Request, name: str) -> str | None:
    return request.query_params.get(name) or None


def create_app(ledger: Ledger) -> ASGIApp:
    """The web app over ``ledger`` (opened read-only by the caller; nothing here writes).

    Args:
        ledger: The ledger to show; the caller opens and closes it.

    Returns:
        An ASGI app: pages at ``/``, ``/sessions/{id}``, ``/analytics``; JSON under ``/api``.
    """
    payloads = _Payloads()

    async def page(request: Request) -> Response:
        return Response(static_text("index.html"), media_type="text/html; charset=utf-8")

    async def asset(request: Request) -> Response:
        name = str(request.path_params["name"])
        if name not in _STATIC:
            return _error(404, f"no file {name[:60]!r}")
        return Response(static_text(name), media_type=_STATIC[name])

    async def sessions(request: Request) -> Response:
        where = SessionFilter(
            agent=_text(request, "agent"),
            client=_text(request, "client"),
            status=_text(request, "status"),
            since=_time(request, "since"),
            until=_time(request, "until"),
        )
        found = await sessions_page(
            ledger,
            limit=_number(request, "limit", DEFAULT_PAGE // 2),
            cursor=_text(request, "cursor"),
            where=where,
        )
        return _Json(found)

    async def badges(request: Request) -> Response:
        given = [part for part in (_text(request, "ids") or "").split(",") if part]
        if len(given) > _BADGES_MAX:
            raise InvalidInputError(f"at most {_BADGES_MAX} sessions at once, not {len(given)}")
        answers = []
        for session_id in given:
            state = await ledger.state(check_id(session_id))
            answers.append(badge_json(state, await ledger.verify(session_id)))
        return _Json({"badges": answers})

    async def session(request: Request) -> Response:
        session_id = _session_id(request)
        head = await ledger.head(session_id)
        if head is None:
            raise SessionNotFoundError(f"no session {session_id!r} in this ledger")
        if head.version > SESSION_PAGE_MAX:
            # The page holds a session whole (its slider cuts it in the browser): past this,
            # the server's memory and the browser's would grow with the session.
            raise InvalidInputError(
                f"session {session_id!r} has {head.version:,} events: this page shows sessions "
                f"of up to {SESSION_PAGE_MAX:,}; read it page by page with "
                f"thoughtledger show {session_id} --limit 100"
            )
        body = payloads.get(session_id, head.version, head.hash)
        if body is None:
            records = await _stream(ledger, session_id, head.version)
            body = _dumps(session_payload(session_id, records))
            payloads.keep(session_id, head.version, head.hash, body)
        return Response(body, media_type="application/json")

    async def verify(request: Request) -> Response:
        return _Json(report_json(await ledger.verify(_session_id(request))))

    async def stats(request: Request) -> Response:
        since, until = _time(request, "since"), _time(request, "until")
        figures = await ledger.stats.summarize(
            since=since, until=until, agent=_text(request, "agent"), client=_text(request, "client")
        )
        models = await ledger.stats.model_usage(since=since, until=until)
        return _Json({**figures.as_dict(), "byModel": [usage.as_json() for usage in models]})

    async def live(request: Request) -> Response:
        session_id = _session_id(request)
        after = _number(request, "after", 0)
        if after < 0:
            raise InvalidInputError(f"after must be a position (0 or more), not {after}")
        if await ledger.head(session_id) is None:
            raise SessionNotFoundError(f"no session {session_id!r} in this ledger")
        return StreamingResponse(_feed(ledger, session_id, after), media_type="text/event-stream")

    routes = [
        Route("/", page),
        Route("/sessions/{session_id}", page),
        Route("/analytics", page),
        Route("/static/{name}", asset),
        Route("/api/sessions", _guarded(sessions)),
        Route("/api/badges", _guarded(badges)),
        Route("/api/sessions/{session_id}", _guarded(session)),
        Route("/api/sessions/{session_id}/verify", _guarded(verify)),
        Route("/api/sessions/{session_id}/live", _guarded(live)),
        Route("/api/stats", _guarded(stats)),
    ]

    async def refused(request: Request, exc: Exception) -> Response:
        # Starlette's own answers (no such route, a method other than GET) as JSON too.
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return _error(status, f"{request.method} {request.url.path[:80]}: not here (read-only)")

    async def failed(request: Request, exc: Exception) -> Response:
        # Anything else: one line, never a traceback (the server goes on serving).
        return _error(500, f"unexpected {type(exc).__name__}: {str(exc)[:200]}")

    app = Starlette(routes=routes, exception_handlers={HTTPException: refused, Exception: failed})
    return _LoopbackOnly(_Headers(app))


async def _stream(ledger: Ledger, session_id: str, version: int) -> list[RecordedEvent]:
    """A session's events up to ``version``, as stored: read, not folded (a page folds them)."""
    async with contextlib.aclosing(ledger.transfer.export([session_id])) as sessions:
        records = [record async for batch in sessions for record in batch]
    return [record for record in records if record.version <= version]


async def _feed(ledger: Ledger, session_id: str, after: int) -> AsyncIterator[bytes]:
    """Server-sent events: each new event as ``data: {json}``, a comment now and then.

    Built on the ledger's catch-up subscription: the events after ``after`` (the last the page
    holds), then each one as any process commits it, none missed and none twice.
    """
    events = ledger.subscribe(after=after, session_id=session_id).__aiter__()
    waiting: asyncio.Task[Any] | None = None
    try:
        yield b": following\n\n"
        while True:
            if waiting is None:
                waiting = asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({waiting}, timeout=_HEARTBEAT_SECONDS)
            if not done:
                yield b": still here\n\n"  # keeps proxies and the browser from giving up
                continue
            record = waiting.result()
            waiting = None
            yield b"data: " + _dumps(event_json(record)) + b"\n\n"
    except StopAsyncIteration:
        return
    except LedgerError as exc:
        yield b"event: failure\ndata: " + orjson.dumps({"error": str(exc)}) + b"\n\n"
    finally:
        if waiting is not None:
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration, LedgerError):
                await waiting
        close = getattr(events, "aclose", None)
        if close is not None:  # releases what the subscription holds (a listening connection)
            await close()


class _Payloads:
    """The session payloads last sent, by session and head.

    A reload of a long session (or a second reader) costs one head look-up. A session only
    grows, so a head names one payload.
    """

    def __init__(self, budget: int = 64 * 2**20) -> None:
        self._budget = budget
        self._held: OrderedDict[str, tuple[int, str, bytes]] = OrderedDict()

    def get(self, session_id: str, version: int, hash_: str) -> bytes | None:
        held = self._held.get(session_id)
        if held is None or held[:2] != (version, hash_):
            return None
        self._held.move_to_end(session_id)
        return held[2]

    def keep(self, session_id: str, version: int, hash_: str, body: bytes) -> None:
        self._held[session_id] = (version, hash_, body)
        self._held.move_to_end(session_id)
        while sum(len(item[2]) for item in self._held.values()) > self._budget:
            if len(self._held) == 1:
                break
            self._held.popitem(last=False)


class _Headers:
    """Adds the security headers to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, sending)


class _LoopbackOnly:
    """Refuses a request whose Host is not a loopback name (a DNS-rebinding page's would not be)."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if urlsplit(f"//{host}").hostname not in LOOPBACK_NAMES:
                response = _error(421, "this app answers only on a loopback address")
                await response(scope, receive, send)
                return
        await self._app(scope, receive, send)


__all__ = [
    "CSP",
    "LOOPBACK_NAMES",
    "SESSION_PAGE_MAX",
    "SESSION_SCRIPTS",
    "create_app",
    "static_text",
]
