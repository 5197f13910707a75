"""Reading back: the ``thinking_history`` tool and the sessions as MCP resources.

Nothing here appends: the tool reads a page of the history with ``Ledger.history`` (memory bounded
by the page, however long the session) or, for branches and the view, ``Ledger.state`` (neither
records an expiry); the resources list and read sessions. Time travel is the ledger's: a state as
of a version or time is that prefix of the session's events.
"""

import json
from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult
from pydantic import AwareDatetime, Field

from thoughtledger.adapters.mcp.tools import descriptions as text
from thoughtledger.adapters.mcp.tools.context import AppContext, Caller, principal_of_request
from thoughtledger.adapters.mcp.tools.lax_types import LaxCount, LaxText
from thoughtledger.adapters.mcp.tools.targets import connection_session, reading_target
from thoughtledger.adapters.mcp.tools.thinking import DEFAULT_SESSION, answer
from thoughtledger.api import DEFAULT_HISTORY_LIMIT, Ledger, Scope
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import InvalidInputError, LedgerError, SessionNotFoundError
from thoughtledger.projections.answers import JsonDict, branch_sets, session_view, thought_history
from thoughtledger.projections.state import SessionState

SESSIONS_URI = "thoughtledger://sessions"
SESSION_URI = "thoughtledger://sessions/{session_id}"
SESSIONS_PAGE_URI = "thoughtledger://sessions/page/{cursor}"
SESSIONS_LISTED = 100
"""Sessions in one page of the ``thoughtledger://sessions`` listing (newest first)."""

Show = Literal["history", "branches", "view"]


HISTORY_LIMIT = DEFAULT_HISTORY_LIMIT
"""Thoughts in a ``thinking_history`` answer when the caller does not say."""

HISTORY_MOST = 1000
"""Most thoughts one ``thinking_history`` answer may hold."""

HISTORY_MAX_BYTES = 256 * 1024
"""Default cap on the bytes of a ``thinking_history`` answer's JSON text."""

HISTORY_MOST_BYTES = 4 * 1024 * 1024
"""Largest cap a caller may ask for."""

WHOLE_READ_MAX = 10_000
"""Longest session (in events) ``show: branches`` and ``show: view`` read whole: past it, the
answer would be as large as the session, so the caller is sent to ``show: history``'s pages."""

_ENVELOPE_BYTES = 2048
"""What a ``history`` answer takes besides its items (ids, counts, a cursor), reserved from the
byte cap: the items are measured one by one as :func:`answer` will write them."""


async def thinking_history(
    session_id: Annotated[
        LaxText | None, Field(validation_alias="sessionId", description=text.HISTORY_SESSION_ID)
    ] = None,
    show: Annotated[
        Show, Field(description=text.HISTORY_SHOW.format(whole=f"{WHOLE_READ_MAX:,}"))
    ] = "history",
    as_of_version: Annotated[
        LaxCount | None,
        Field(validation_alias="asOfVersion", description=text.HISTORY_AS_OF_VERSION),
    ] = None,
    as_of_time: Annotated[
        AwareDatetime | None,
        Field(validation_alias="asOfTime", description=text.HISTORY_AS_OF_TIME),
    ] = None,
    limit: Annotated[
        int,
        Field(
            ge=1,
            le=HISTORY_MOST,
            description=text.HISTORY_LIMIT,
        ),
    ] = HISTORY_LIMIT,
    after: Annotated[str | None, Field(max_length=4096, description=text.HISTORY_AFTER)] = None,
    branch: Annotated[LaxText | None, Field(description=text.HISTORY_BRANCH)] = None,
    max_bytes: Annotated[
        int,
        Field(
            validation_alias="maxBytes",
            ge=_ENVELOPE_BYTES * 2,
            le=HISTORY_MOST_BYTES,
            description=text.HISTORY_MAX_BYTES,
        ),
    ] = HISTORY_MAX_BYTES,
    *,
    ctx: AppContext,
) -> CallToolResult:
    """Return a session's history (a page of it), branches or view, now or as of a version or time.

    Raises:
        ToolError: No session to read (none named and none on this connection), an unknown
            session, a bound past the session's end, a bad cursor or branch, a session too long
            to show whole, or a ledger failure.
    """
    caller = Caller.of(ctx)
    try:
        target = await _read_target(caller, session_id)
        result = await _read_session(
            caller.scope,
            target,
            show,
            as_of_version=as_of_version,
            as_of_time=as_of_time,
            paging=_Paging(limit, after, branch, max_bytes),
        )
    except LedgerError as exc:
        raise ToolError(str(exc)) from exc
    return answer(result)


class _Paging(NamedTuple):
    limit: int
    after: str | None
    branch: str | None
    max_bytes: int


async def _read_session(
    scope: Scope,
    target: str,
    show: Show,
    *,
    as_of_version: int | None,
    as_of_time: datetime | None,
    paging: _Paging,
) -> JsonDict:
    """The one read of the session behind ``thinking_history``: a page, or the state whole.

    Raises:
        LedgerError: Unknown session, a bound past its end, a bad cursor or branch, a session
            too long to show whole, or a ledger failure.
    """
    bounds: JsonDict = {}
    if as_of_version is not None:
        bounds["asOfVersion"] = as_of_version
    if as_of_time is not None:
        bounds["asOfTime"] = format_time(as_of_time)
    if show == "history":
        page = await scope.history(
            target,
            limit=paging.limit,
            after=paging.after,
            branch=paging.branch,
            as_of_version=as_of_version,
            as_of_time=as_of_time,
            max_bytes=paging.max_bytes - _ENVELOPE_BYTES,
            size_of=_answer_bytes,
        )
        result: JsonDict = {
            "sessionId": page.session_id,
            "status": page.status,
            "version": page.version,
            "thoughtHistoryLength": page.thought_count,
            **bounds,
        }
        if page.branch is not None:
            result["branch"] = page.branch
        result.update(await _lineage(scope, target))
        result["history"] = page.items
        result["more"] = page.more
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result
    if paging.after is not None or paging.branch is not None:
        raise InvalidInputError("after and branch page show=history; leave them out here")
    head = await scope.head(target)
    # The session's length now, not the bound's: a state as of a version is cut from the whole.
    if head.version > WHOLE_READ_MAX:
        raise InvalidInputError(
            f"session {target!r} has {head.version:,} events: show={show} reads a session "
            f"whole, up to {WHOLE_READ_MAX:,}; read it page by page with show=history "
            "(limit, after, branch)"
        )
    state = await scope.state(target, as_of_version=as_of_version, as_of_time=as_of_time)
    result = {
        "sessionId": state.session_id,
        "status": state.status,
        "version": state.version,
        "thoughtHistoryLength": state.thought_count,
        **bounds,
    }
    result.update(await _lineage(scope, target))
    if show == "branches":
        result["branches"] = branch_sets(state)
    else:
        result["view"] = session_view(state)
    return result


async def _lineage(scope: Scope, target: str) -> JsonDict:
    """Where a fork came from (``forkOf``) and the session's forks (``forks``), each if any.

    The forks listed are those the scope's principal may read (see
    :class:`thoughtledger.api.Lineage`).

    A fork's history pages hold its own thoughts; the ones before the fork point are its
    source's, read from the source up to ``forkOf.version``.

    Raises:
        LedgerError: The ledger failed.
    """
    lineage: JsonDict = {}
    point = await scope.fork_point(target)
    if point is not None:
        lineage["forkOf"] = {
            "sessionId": point.session_id,
            "version": point.version,
            "hash": point.hash,
        }
    forks = await scope.forks(target)
    if forks:
        lineage["forks"] = [fork.session_id for fork in forks]
    return lineage


def _answer_bytes(item: JsonDict) -> int:
    # As :func:`answer` writes it: pretty JSON, each line indented 4 more under "history", and a
    # separator after it.
    pretty = json.dumps(item, indent=2, ensure_ascii=False)
    return len(pretty.encode()) + 4 * (pretty.count("\n") + 1) + 2


async def _read_target(caller: Caller, requested: str | None) -> str:
    # An id given names the session an answer reported, even one that was cleared since (for a
    # principal: one it may read; see thoughtledger.adapters.mcp.tools.targets). Omitted (or the MCP
    # API reference's "default"), it is the connection's current session.
    if requested is not None and (requested != DEFAULT_SESSION or caller.key is None):
        return await reading_target(caller.scope, requested)
    current = connection_session(caller)
    if current is None:
        raise ToolError(
            "no thoughts recorded on this connection yet: record one, or pass the sessionId of an "
            "earlier session"
        )
    return current


def register_resources(server: MCPServer[Any], ledger: Ledger) -> None:
    """Expose the ledger's sessions: a listing and each session by id.

    Raises:
        ValueError: The SDK refused a registration (a programming error).
    """

    async def listing(cursor: str | None) -> str:
        scope = ledger.as_principal(principal_of_request())
        try:
            page = await scope.sessions(limit=SESSIONS_LISTED, cursor=cursor)
        except InvalidInputError as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except LedgerError as exc:
            raise ResourceError(str(exc)) from exc
        listing: JsonDict = {"sessions": [_summary(state) for state in page.sessions]}
        if page.next_cursor is not None:
            listing["nextCursor"] = page.next_cursor
            listing["next"] = SESSIONS_PAGE_URI.format(cursor=page.next_cursor)
        return json.dumps(listing, indent=2, ensure_ascii=False)

    @server.resource(
        SESSIONS_URI,
        name="sessions",
        title="Thinking sessions",
        description=f"The newest {SESSIONS_LISTED} sessions you may read, newest first; "
        "'next' names the page after",
        mime_type="application/json",
    )
    async def list_sessions() -> str:
        return await listing(None)

    @server.resource(
        SESSIONS_PAGE_URI,
        name="sessions-page",
        title="Thinking sessions (a later page)",
        description="The sessions after a page's nextCursor, newest first",
        mime_type="application/json",
    )
    async def list_sessions_after(cursor: str) -> str:
        return await listing(cursor)

    @server.resource(
        SESSION_URI,
        name="session",
        title="Thinking session",
        description="One session: every thought with its fields, and its branches",
        mime_type="application/json",
    )
    async def read_session(session_id: str) -> str:
        try:
            scope = ledger.as_principal(principal_of_request())
            session_id = await reading_target(scope, session_id)
            head = await scope.head(session_id)
            if head.version > WHOLE_READ_MAX:
                # The request's to change (another way to read it), not a failure of the
                # server's: invalid params, not the -32603 of a ResourceError.
                raise MCPError(
                    INVALID_PARAMS,
                    f"session {session_id!r} has {head.version:,} events: this resource holds a "
                    f"session whole, up to {WHOLE_READ_MAX:,}; read it page by page with the "
                    "thinking_history tool (limit, after, branch)",
                )
            state = await scope.state(session_id)
        except (SessionNotFoundError, InvalidInputError) as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except LedgerError as exc:
            raise ResourceError(str(exc)) from exc
        document = {
            **_summary(state),
            "metadata": dict(state.metadata),
            "predecessorId": state.predecessor_id,
            "thoughts": thought_history(state),
            "branchSets": branch_sets(state),
        }
        return json.dumps(document, indent=2, ensure_ascii=False)


def _summary(state: SessionState) -> JsonDict:
    return {
        "sessionId": state.session_id,
        "uri": SESSION_URI.format(session_id=state.session_id),
        "status": state.status,
        "version": state.version,
        "thoughtHistoryLength": state.thought_count,
        "branches": list(state.branches),
        "startedAt": _time(state.started_at),
        "updatedAt": _time(state.updated_at),
        "agent": state.metadata.get("agent"),
        "client": state.metadata.get("client"),
    }


def _time(moment: datetime | None) -> str | None:
    return format_time(moment) if moment is not None else None


__all__ = [
    "SESSIONS_LISTED",
    "SESSIONS_PAGE_URI",
    "SESSIONS_URI",
    "SESSION_URI",
    "register_resources",
    "thinking_history",
]
