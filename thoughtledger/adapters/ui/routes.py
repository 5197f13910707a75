"""The web app behind ``thoughtledger ui``: pages, their JSON, a live feed, and the acts.

Every ``GET`` reads the ledger; a ``POST`` signs in or out, or does one act (annotate, fork,
redact; see :mod:`thoughtledger.adapters.ui.acts`) through the facade's access door. The pages
are static files shipped with the package (HTML, CSS and the scripts: no inline script, so the
Content-Security-Policy forbids any); the data comes as JSON from ``/api/...``. Requests must
name a loopback host and come from the app's own origin (see
:mod:`thoughtledger.adapters.ui.guards`).
Given a token verifier, every page and call needs a principal (see
:mod:`thoughtledger.adapters.ui.door`), who sees what ``serve --http --auth`` would show it: a
reader
or writer its own sessions, an auditor every session; the analytics, which cover every session,
only an auditor.
"""

import importlib.resources
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp

from thoughtledger.adapters.common.shares import REFUSED_STATUS, Limits, ShareRefusedError
from thoughtledger.adapters.ui.acts import ACTS, READ_ONLY_REFUSAL, check_same_site, read_body
from thoughtledger.adapters.ui.badges import BADGES_MAX, Badges
from thoughtledger.adapters.ui.door import Door, SignInRequiredError
from thoughtledger.adapters.ui.feed import HeldStream, feed
from thoughtledger.adapters.ui.guards import LoopbackOnly, SameOrigin, SecurityHeaders
from thoughtledger.adapters.ui.lineage import compare_json, forks_json
from thoughtledger.adapters.ui.listing import SessionFilter, sessions_page, sessions_total
from thoughtledger.adapters.ui.live_app import live_endpoint
from thoughtledger.adapters.ui.live_messages import AFTER_MAX
from thoughtledger.adapters.ui.live_socket import STALL_SECONDS
from thoughtledger.adapters.ui.page_build import PageBuilds
from thoughtledger.adapters.ui.payload import json_bytes, report_json
from thoughtledger.adapters.ui.review import ReviewFilter, review_json
from thoughtledger.adapters.ui.search import search_json
from thoughtledger.adapters.ui.signin import RECHECK_SECONDS
from thoughtledger.api import (
    COMPARE_THOUGHTS_MAX,
    DEFAULT_PAGE,
    AccessDeniedError,
    Ledger,
    Scope,
)
from thoughtledger.ledger.errors import InvalidInputError, LedgerError, SessionNotFoundError
from thoughtledger.ledger.ids import check_id

if TYPE_CHECKING:
    from thoughtledger.adapters.ui.signin import TokenCheck

SESSION_SCRIPTS = (
    "session-model.js",
    "session-tree.js",
    "session-inspect.js",
    "session-live.js",
    "session-views.js",
    "session.js",
)
"""The session view's scripts in load order (the page and ``export --html`` both need them all)."""

_STATIC = {
    **dict.fromkeys(SESSION_SCRIPTS, "text/javascript; charset=utf-8"),
    "app.js": "text/javascript; charset=utf-8",
    "forks.js": "text/javascript; charset=utf-8",
    "acts.js": "text/javascript; charset=utf-8",
    "review.js": "text/javascript; charset=utf-8",
    "analytics.js": "text/javascript; charset=utf-8",
    "live-socket.js": "text/javascript; charset=utf-8",
    "signin.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
SESSION_PAGE_MAX = 50_000
"""The longest session (in events) the session page holds whole."""

Endpoint = Callable[[Request], Awaitable[Response]]


def static_text(name: str) -> str:
    """One of the files shipped in ``thoughtledger/adapters/ui/static`` (HTML, CSS, JavaScript)."""
    return (importlib.resources.files("thoughtledger.adapters.ui") / "static" / name).read_text(
        encoding="utf-8"
    )


class _Json(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def _error(status: int, message: str) -> Response:
    return _Json({"error": message}, status_code=status)


def _guarded(handler: Endpoint) -> Endpoint:
    """Turn the ledger's errors into one-line JSON answers (4xx, 503), never a traceback."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except SignInRequiredError as exc:
            answer = _error(401, str(exc))
            answer.headers["WWW-Authenticate"] = "Bearer"
            return answer
        except AccessDeniedError as exc:
            return _error(403, str(exc))
        except ShareRefusedError as exc:  # the caller's share of live streams, never another's
            return _error(REFUSED_STATUS, str(exc))
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


def create_app(
    ledger: Ledger,
    *,
    verifier: "TokenCheck | None" = None,
    allow_origins: Iterable[str] = (),
    recheck: float = RECHECK_SECONDS,
    stall: float = STALL_SECONDS,
    read_only: bool = False,
    limits: Limits | None = None,
) -> ASGIApp:
    """The web app over ``ledger``.

    Args:
        ledger: The ledger to show; the caller opens and closes it.
        verifier: Who a bearer token stands for (the MCP SDK's ``TokenVerifier`` shape: the
            token file's, an OAuth issuer's); ``None``: no authentication, one user allowed all.
        allow_origins: Origins besides the app's own whose pages may call it, as
            :func:`thoughtledger.adapters.common.origins.parse_origin` writes them.
        recheck: Seconds a verified sign-in is trusted, and between the checks of a live
            stream's reader.
        stall: Seconds a live socket's outbox may stay full before its client counts as too
            slow and the socket closes.
        read_only: Refuse every act (the ledger was opened for reading only).
        limits: The live sockets and streams, and the sign-ins, each principal may hold.

    Returns:
        An ASGI app: pages at ``/``, ``/sessions/{id}`` (and a fork's ``.../compare``),
            ``/analytics``, ``/search``; JSON under ``/api`` (the acts: ``POST
            /api/sessions/{id}/annotate``, ``.../fork``, ``.../redact``); the live socket at
            ``/ws`` (as ``serve --http``'s; ``/api/ws`` too).
    """
    pages = PageBuilds(ledger)
    badges_of = Badges(ledger)
    door = Door(verifier, recheck=recheck, limits=limits)

    async def page(request: Request) -> Response:
        if door.guarded:
            try:
                await door.principal(request)
            except SignInRequiredError:
                return Response(
                    static_text("signin.html"),
                    status_code=401,
                    media_type="text/html; charset=utf-8",
                )
        return Response(static_text("index.html"), media_type="text/html; charset=utf-8")

    async def asset(request: Request) -> Response:
        # The files are the package's own code and style: they hold no data, and the sign-in
        # page needs them, so they are served to anyone.
        name = str(request.path_params["name"])
        if name not in _STATIC:
            return _error(404, f"no file {name[:60]!r}")
        return Response(static_text(name), media_type=_STATIC[name])

    async def scope_of(request: Request) -> Scope:
        # The one door: every route reads the ledger as the request's principal may, at the
        # principal's pace while others are served.
        return ledger.as_principal(await door.paced_principal(request))

    def session_filter(request: Request) -> SessionFilter:
        return SessionFilter(
            agent=_text(request, "agent"),
            client=_text(request, "client"),
            status=_text(request, "status"),
            since=_time(request, "since"),
            until=_time(request, "until"),
        )

    async def count(request: Request) -> Response:
        scope = await scope_of(request)
        return _Json({"total": await sessions_total(scope, session_filter(request))})

    async def sessions(request: Request) -> Response:
        scope = await scope_of(request)
        where = session_filter(request)
        found = await sessions_page(
            scope,
            limit=_number(request, "limit", DEFAULT_PAGE // 2),
            cursor=_text(request, "cursor"),
            where=where,
        )
        return _Json(found)

    async def badges(request: Request) -> Response:
        scope = await scope_of(request)
        given = [part for part in (_text(request, "ids") or "").split(",") if part]
        wanted = list(dict.fromkeys(given))  # a repeated id is read once
        if len(wanted) > BADGES_MAX:
            raise InvalidInputError(f"at most {BADGES_MAX} sessions at once, not {len(wanted)}")
        for session_id in wanted:
            check_id(session_id)  # every id checked before any is read
        answers = []
        for session_id in wanted:
            if not await scope.sees(session_id):
                continue  # no badge: the session is not there, for this reader
            badge = await badges_of.of(session_id)
            if badge is not None:
                answers.append(badge)
        return _Json({"badges": answers})

    async def session(request: Request) -> Response:
        scope = await scope_of(request)
        session_id = await scope.find(_session_id(request))
        head = await scope.head(session_id)
        if head.version > SESSION_PAGE_MAX:
            # The page holds a session whole (its slider cuts it in the browser): past this,
            # the server's memory and the browser's would grow with the session.
            raise InvalidInputError(
                f"session {session_id!r} has {head.version:,} events: this page shows sessions "
                f"of up to {SESSION_PAGE_MAX:,}; read it page by page with "
                f"thoughtledger show {session_id} --limit 100"
            )
        # Built a slice at a time, one build per principal at a time: a principal asking for
        # its huge sessions again and again waits on itself, never holds up another.
        body = await pages.body(scope.owner, head)
        return Response(body, media_type="application/json")

    async def verify(request: Request) -> Response:
        scope = await scope_of(request)
        session_id = await scope.find(_session_id(request))
        head = await scope.head(session_id)
        if head.version > SESSION_PAGE_MAX:
            # The walk reads the whole session: bounded as the page that offers it is.
            raise InvalidInputError(
                f"session {session_id!r} has {head.version:,} events: this app walks chains "
                f"of up to {SESSION_PAGE_MAX:,}; check it with thoughtledger verify {session_id}"
            )
        async with pages.turn(scope.owner):  # a whole-session read: the page's turns
            report = await scope.verify(session_id)
        return _Json(report_json(report))

    async def forks(request: Request) -> Response:
        return _Json(await forks_json(await scope_of(request), _session_id(request)))

    async def compare(request: Request) -> Response:
        scope = await scope_of(request)
        limit = _number(request, "limit", COMPARE_THOUGHTS_MAX)
        return _Json(await compare_json(scope, _session_id(request), limit=limit))

    async def stats(request: Request) -> Response:
        scope = await scope_of(request)
        # The analytics count every session in the ledger: an auditor's (or the ledger's own
        # user's) view only, as the access door says.
        scope.require("read_all", "read the analytics, which count every session")
        since, until = _time(request, "since"), _time(request, "until")
        figures = await scope.figures(
            since=since, until=until, agent=_text(request, "agent"), client=_text(request, "client")
        )
        loops = await scope.loops(
            since=since, until=until, agent=_text(request, "agent"), client=_text(request, "client")
        )
        # The models and labels count every session's events (one read of the log for both):
        # the read_all the door required above.
        models, labels = await ledger.stats.log_figures(since=since, until=until)
        return _Json(
            {
                **figures.as_dict(),
                "byModel": [usage.as_json() for usage in models],
                "loops": {**loops.as_json(), "repeatsPerSession": None},
                "byLabel": [label.as_json() for label in labels],
            }
        )

    async def search(request: Request) -> Response:
        found = await search_json(
            await scope_of(request),
            request.query_params.get("q", ""),
            agent=_text(request, "agent"),
            client=_text(request, "client"),
            since=_time(request, "since"),
            until=_time(request, "until"),
            limit=_number(request, "limit", 20),
            cursor=_text(request, "cursor"),
        )
        return _Json(found)

    async def review(request: Request) -> Response:
        scope = await scope_of(request)
        where = ReviewFilter(
            words=_text(request, "q"),
            agent=_text(request, "agent"),
            loops=request.query_params.get("loops") == "1",
            unlabelled=request.query_params.get("unlabelled") == "1",
            since=_time(request, "since"),
        )

        async def repeats(session_id: str, to_version: int) -> list[int]:
            # A session the scope found: its loop marks, as the session page reads them.
            marks = await ledger.loops.marks(session_id, to_version=to_version)
            return [mark.version for mark in marks]

        return _Json(await review_json(scope, where, repeats))

    async def live(request: Request) -> Response:
        scope = await scope_of(request)
        after = _number(request, "after", 0)
        if not 0 <= after <= AFTER_MAX:
            raise InvalidInputError(f"after must be a position (0 to {AFTER_MAX}), not {after}")
        session_id = await scope.find(_session_id(request))
        held, pushed_out = await door.hold_live(request)
        events = feed(
            ledger,
            session_id,
            after,
            allowed=door.still_allowed(request, ledger, session_id),
            recheck=recheck,
            ended=pushed_out,
        )
        return HeldStream(held, events)

    def act(name: str) -> Endpoint:
        do = ACTS[name]

        async def endpoint(request: Request) -> Response:
            check_same_site(request)
            scope = await scope_of(request)
            if read_only:
                raise AccessDeniedError(READ_ONLY_REFUSAL)
            body = await read_body(request)
            return _Json(await do(scope, _session_id(request), body))

        return endpoint

    routes = [
        Route("/", page),
        Route("/sessions/{session_id}", page),
        Route("/sessions/{session_id}/compare", page),
        Route("/analytics", page),
        Route("/search", page),
        Route("/review", page),
        Route("/static/{name}", asset),
        Route("/api/signin", door.sign_in, methods=["POST"]),
        Route("/api/signout", door.sign_out, methods=["POST"]),
        Route("/api/me", _guarded(door.me)),
        Route("/api/sessions", _guarded(sessions)),
        Route("/api/total", _guarded(count)),
        Route("/api/badges", _guarded(badges)),
        Route("/api/sessions/{session_id}", _guarded(session)),
        Route("/api/sessions/{session_id}/verify", _guarded(verify)),
        Route("/api/sessions/{session_id}/live", _guarded(live)),
        Route("/api/sessions/{session_id}/forks", _guarded(forks)),
        Route("/api/sessions/{session_id}/compare", _guarded(compare)),
        *[
            Route(f"/api/sessions/{{session_id}}/{name}", _guarded(act(name)), methods=["POST"])
            for name in ACTS
        ],
        Route("/api/stats", _guarded(stats)),
        Route("/api/search", _guarded(search)),
        Route("/api/review", _guarded(review)),
        # The live socket at serve --http's path, and at the path earlier pages and scripts use.
        *[
            WebSocketRoute(path, live_endpoint(ledger, door, recheck=recheck, stall=stall))
            for path in ("/ws", "/api/ws")
        ],
    ]

    async def refused(request: Request, exc: Exception) -> Response:
        # Starlette's own answers (no such route, a method other than GET) as JSON too.
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        return _error(status, f"{request.method} {request.url.path[:80]}: not here")

    async def failed(request: Request, exc: Exception) -> Response:
        # Anything else: one line, never a traceback (the server goes on serving).
        return _error(500, f"unexpected {type(exc).__name__}: {str(exc)[:200]}")

    app = Starlette(routes=routes, exception_handlers={HTTPException: refused, Exception: failed})
    return SecurityHeaders(LoopbackOnly(SameOrigin(app, allow_origins)))


__all__ = [
    "SESSION_PAGE_MAX",
    "SESSION_SCRIPTS",
    "create_app",
    "static_text",
]
