"""What every tool call reaches: the lifespan state, the connection's identity, its session."""

from dataclasses import dataclass, field
from typing import Any, Literal

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context

from thoughtledger.adapters.mcp.tools.render import ThoughtSink
from thoughtledger.adapters.mcp.tools.sessions import Directories, SessionDirectory
from thoughtledger.api import (
    AGENT_META_KEY,
    Ledger,
    Principal,
    Profile,
    Scope,
    ThoughtWriter,
    principal_of,
    session_agent,
)

RunsName = Literal["separate", "continuous"]
"""How a connection's thinking is split into sessions: one per run (a plain thought numbered 1
starts the next) or one accumulating history (the official server's)."""
ProfileName = Profile
"""Which projection ``sequentialthinking`` answers with: the minimal-response spec, the official
view, or the session pattern in full (as :data:`thoughtledger.api.Profile` names them)."""


@dataclass
class AppState:
    """The lifespan state: one per stdio process, per HTTP server, per in-process client.

    Attributes:
        ledger: Where thoughts are recorded (shared, owned by whoever opened it).
        profile: The answer projection of ``sequentialthinking``.
        connection_key: Identity of the connection on transports without headers (stdio,
            in-process): minted when the lifespan starts, so one per process or client.
        transport: Recorded in a new session's metadata when no headers tell otherwise.
        thought_sink: Where each recorded thought is rendered, if anywhere.
        directories: Which session each connection and name currently continues, per
            principal.
        runs: Whether a plain thought numbered 1 on a connection's session that holds thoughts
            starts a new session (``separate``) or joins it (``continuous``).
        metadata: Session-start facts already worked out, per connection and tool.
        writer: Who writes ``sequential_thinking_external``'s thoughts when ``use_llm`` is true
            (a language model); ``None``: the server was started without one.
        agent: The agent of sessions whose calls name none (``serve --agent``), if any.
    """

    ledger: Ledger
    profile: ProfileName
    connection_key: str
    transport: str
    thought_sink: ThoughtSink | None = None
    directories: Directories = field(default_factory=Directories)
    metadata: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    writer: ThoughtWriter | None = None
    runs: RunsName = "separate"
    agent: str | None = None


AppContext = Context[AppState, Any]


@dataclass(frozen=True, slots=True)
class Caller:
    """One tool call's view of its request, read once (the SDK's context is slow to walk).

    Attributes:
        app: The lifespan state.
        key: What identifies the calling connection, or ``None`` where nothing does.
        over_http: Whether the call came over HTTP.
        ctx: The request, for what is rarely needed.
        scope: The ledger as the calling principal may use it: every read and write of the
            call goes here, one scope a call (its owner look-ups are kept for the call).
    """

    app: AppState
    key: str | None
    over_http: bool
    ctx: AppContext
    scope: Scope

    @classmethod
    def of(cls, ctx: AppContext) -> "Caller":
        """Read the call's state and connection identity from its request context.

        stdio and in-process connections carry no headers and have one lifespan each; a
        handshake-era HTTP client sends the ``mcp-session-id`` the server issued (unknown ids get
        404 before they reach a tool). 2026-07-28 HTTP clients and stateless HTTP have no
        connection at all.
        """
        request = ctx.request_context
        app = request.lifespan_context
        headers = getattr(request.request, "headers", None)
        if headers is None:
            return cls(
                app,
                app.connection_key,
                over_http=False,
                ctx=ctx,
                scope=app.ledger.as_principal(None),
            )
        http_session = headers.get("mcp-session-id")
        return cls(
            app,
            f"http:{http_session}" if http_session else None,
            over_http=True,
            ctx=ctx,
            scope=app.ledger.as_principal(principal_of_request()),
        )

    @property
    def principal(self) -> Principal | None:
        """Who the call's bearer token stands for (``None``: the ledger's own user, allowed all).

        ``None`` without authentication: stdio, in-process, HTTP without ``--auth``.
        """
        return self.scope.principal

    @property
    def directory(self) -> SessionDirectory:
        """The calling principal's directory of handles (see :mod:`.tools.sessions`)."""
        return self.app.directories.of(self.principal.name if self.principal else None)

    def session_metadata(self, tool: str) -> dict[str, str]:
        """Facts recorded when a call starts a session: tool, transport, client and agent.

        The agent is :func:`thoughtledger.api.session_agent`'s: the principal, else the name
        under ``_meta["thoughtledger/agent"]``, else the server's ``--agent``.

        Raises:
            InvalidInputError: The call's ``_meta`` names its agent with an invalid name.
        """
        meta = self.ctx.request_context.meta
        agent = session_agent(
            self.principal, (meta or {}).get(AGENT_META_KEY), default=self.app.agent
        )
        facts = self._connection_facts(tool)
        return facts if agent is None else {**facts, "agent": agent}

    def _connection_facts(self, tool: str) -> dict[str, str]:
        # What the connection alone decides, worked out once per connection and tool.
        cache_key = (self.key, tool) if self.key is not None else None
        if cache_key is not None and (known := self.app.metadata.get(cache_key)) is not None:
            return known
        facts = {"tool": tool, "transport": "http" if self.over_http else self.app.transport}
        params = self.ctx.request_context.session.client_params
        if params is not None:
            facts["client"] = f"{params.client_info.name} {params.client_info.version}".strip()
        if cache_key is not None:
            # Bounded like the directory: a long-lived HTTP server sees many connections.
            if len(self.app.metadata) >= self.app.directories.capacity:
                self.app.metadata.clear()
            self.app.metadata[cache_key] = facts
        return facts


def principal_of_request() -> Principal | None:
    """The principal the current HTTP request's verified bearer token stands for, if any.

    The SDK's bearer middleware verified the token and keeps it for the request; an OAuth
    token names its user in ``subject`` and the client acting for it in ``client_id``: the
    user is the principal.
    """
    token = get_access_token()
    return None if token is None else principal_of(token)


__all__ = [
    "AppContext",
    "AppState",
    "Caller",
    "ProfileName",
    "RunsName",
    "principal_of_request",
]
