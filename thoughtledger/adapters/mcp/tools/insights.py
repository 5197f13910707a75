"""The ``thinking_insights`` tool: an agent looks back at its own past runs.

Two questions in one tool, listed under ``--tools all`` (the default list stays the official
tool and ``thinking_history``): *where did I reason about this before?* (``query``: the ledger's
full-text index, best match first, with snippets; follow a hit with ``thinking_history``) and
*how do my runs usually go?* (the figures ``thoughtledger stats`` gives: completion and revision
rates, typical length, estimate drift, branching, and loops: sessions where a thought repeated
an earlier one, and repeats in all).

Both cover the caller's own sessions, the agent a session it starts would record
(:func:`thoughtledger.api.session_agent`): with ``--auth`` its principal (an auditor too: the
tool is an agent's look at itself, not an audit), else the agent its call names in ``_meta``
or the server's ``--agent``. With none of these, no agent is known and the figures and hits are
the whole ledger's: over stdio the ledger is the caller's own, and over HTTP without ``--auth``
anyone reaching the port may read every session anyway.
"""

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from thoughtledger.adapters.mcp.tools.context import AppContext, Caller
from thoughtledger.adapters.mcp.tools.lax_types import LaxText
from thoughtledger.adapters.mcp.tools.thinking import answer
from thoughtledger.api import AGENT_META_KEY, session_agent
from thoughtledger.ledger.errors import LedgerError

INSIGHTS_HITS = 5
"""Hits in an answer unless the caller asks for more."""

INSIGHTS_MOST_HITS = 20
"""Most hits one answer may hold: each costs the model's context."""

MAX_QUERY_CHARS = 1000
"""Longest query (a search is words, not a document)."""

_FIGURES = (
    "sessions",
    "thoughts",
    "completionRate",
    "revisionRate",
    "branchRate",
    "thoughtsP50",
    "thoughtsP95",
    "driftMean",
    "driftP50",
)
"""The figures an agent is given: how its runs end, how long they are, how its estimates move."""


async def thinking_insights(
    query: Annotated[
        LaxText | None,
        Field(
            max_length=MAX_QUERY_CHARS,
            description='Words to find in your past thoughts ("phrase", prefix*, -excluded)',
        ),
    ] = None,
    limit: Annotated[
        int, Field(ge=1, le=INSIGHTS_MOST_HITS, description="Most thoughts found to return")
    ] = INSIGHTS_HITS,
    *,
    ctx: AppContext,
) -> CallToolResult:
    """Return the figures of the caller's past runs and, for a query, its thoughts that match.

    Raises:
        ToolError: An invalid query (no word to find) or agent name, or a ledger failure.
    """
    caller = Caller.of(ctx)
    scope = caller.scope
    try:
        meta = ctx.request_context.meta
        agent = session_agent(
            caller.principal, (meta or {}).get(AGENT_META_KEY), default=caller.app.agent
        )
        stats = await scope.figures(agent=agent)
        overall = stats.as_json()["overall"]
        loops = await scope.loops(agent=agent)
        figures = {name: overall[name] for name in _FIGURES}
        figures["sessionsWithLoops"] = loops.sessions_with_loops
        figures["repeats"] = loops.repeats
        result: dict[str, Any] = {"figures": figures}
        if agent is not None:
            result["agent"] = agent
        if query is not None:
            page = await scope.search(query, agent=agent, limit=limit)
            found = page.as_json(whole=False)
            result["found"] = found["results"]
            result["more"] = found["nextCursor"] is not None
    except LedgerError as exc:
        raise ToolError(str(exc)) from exc
    return answer(result)


__all__ = ["INSIGHTS_HITS", "INSIGHTS_MOST_HITS", "MAX_QUERY_CHARS", "thinking_insights"]
