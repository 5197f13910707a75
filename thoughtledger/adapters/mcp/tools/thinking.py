"""The thinking tools: ``sequentialthinking`` (official) and the MCP API reference's pair.

Each is a function the SDK turns into a tool; the server (see
:mod:`thoughtledger.adapters.mcp.server`)
reads its schema from the signature, which is generated from the definition of a thought
(:mod:`thoughtledger.adapters.mcp.tools.parameters`). They share one path into
the ledger, :func:`record`, so every tool validates, resolves its session and appends the same way.
"""

import json
from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from thoughtledger.adapters.mcp.tools import descriptions as text
from thoughtledger.adapters.mcp.tools.context import AppContext, Caller, ProfileName
from thoughtledger.adapters.mcp.tools.lax_types import LaxFlag, LaxText
from thoughtledger.adapters.mcp.tools.parameters import (
    OFFICIAL_CORE_ORDER,
    SNAKE_CORE_ORDER,
    parameter,
    thought_fields,
    thought_parameters,
    with_parameters,
)
from thoughtledger.adapters.mcp.tools.progress import progress_requested, think_streaming
from thoughtledger.adapters.mcp.tools.render import render_thought
from thoughtledger.adapters.mcp.tools.targets import IMPLICIT, thinking_target
from thoughtledger.api import (
    DEFAULT_TEMPERATURE,
    ProviderNotConfiguredError,
    ThinkOutcome,
    checked_command,
    think_with_writer,
)
from thoughtledger.ledger.errors import LedgerError
from thoughtledger.projections.answers import (
    JsonDict,
    external_view,
    minimal_response,
    official_view,
    session_view,
    status_view,
)

NO_MODEL_CLIENT = (
    "this server was started without a model client, so no model can write the thought; "
    "call again with use_llm false to record your thought as written"
)
"""Why ``use_llm`` failed on a server given no writer (``create_server`` without one)."""

DEFAULT_SESSION = "default"
"""The MCP API reference's session name for "the caller's own session" (here: the connection's)."""


async def sequentialthinking(*, ctx: AppContext, **arguments: Any) -> CallToolResult:
    """Record one thought and answer with the server's profile (official view by default).

    Takes every field of a thought (camelCase), ``sessionId`` and ``clearSession`` (see
    :data:`OFFICIAL_PARAMETERS`).

    Raises:
        ToolError: The thought breaks a rule, the session id is malformed or the ledger failed;
            nothing was appended.
    """
    caller = Caller.of(ctx)
    outcome = await record(
        caller,
        "sequentialthinking",
        thought_fields(arguments),
        requested=arguments["session_id"],
        clear=bool(arguments["clear_session"]),
    )
    if caller.key is None and arguments["session_id"] is not None:
        # A model that passed sessionId once and omits it next continues where it was.
        caller.directory.ran(outcome.session_id)
    return answer(profile_view(caller.app.profile, outcome))


def profile_view(profile: ProfileName, outcome: ThinkOutcome) -> JsonDict:
    """``sequentialthinking``'s answer to one recorded thought, as the server's profile reads it."""
    if profile == "minimal":
        return {**minimal_response(outcome.entry), "sessionId": outcome.session_id}
    if profile == "full":
        return session_view(outcome.state)
    return {**official_view(outcome.state), "sessionId": outcome.session_id}


OFFICIAL_PARAMETERS = [
    *thought_parameters(OFFICIAL_CORE_ORDER, text.OFFICIAL_PARAMETERS, camel=True),
    parameter(
        "session_id",
        Annotated[LaxText | None, Field(validation_alias="sessionId", description=text.SESSION_ID)],
        None,
    ),
    parameter(
        "clear_session",
        Annotated[
            LaxFlag | None, Field(validation_alias="clearSession", description=text.CLEAR_SESSION)
        ],
        None,
    ),
]
"""``sequentialthinking``'s parameters: the official server's, then the session pattern's two."""
with_parameters(sequentialthinking, OFFICIAL_PARAMETERS)


async def sequential_thinking(*, ctx: AppContext, **arguments: Any) -> CallToolResult:
    """Record one thought and answer the MCP API reference's status view.

    Takes every field of a thought (snake_case) and ``session_id`` (see
    :data:`STATUS_PARAMETERS`).

    Raises:
        ToolError: The thought breaks a rule, the session id is malformed or the ledger failed;
            nothing was appended.
    """
    caller = Caller.of(ctx)
    session_id: str = arguments["session_id"]
    outcome = await record(
        caller,
        "sequential_thinking",
        thought_fields(arguments),
        requested=_named(caller, session_id),
    )
    view = status_view(outcome.state, session_id_shown=False)
    if session_id != DEFAULT_SESSION:
        view["session_id"] = outcome.session_id
    return answer(view)


_SNAKE_SESSION = parameter(
    "session_id",
    Annotated[LaxText, Field(description=text.SNAKE["session_id"])],
    DEFAULT_SESSION,
)
STATUS_PARAMETERS = [
    *thought_parameters(SNAKE_CORE_ORDER, text.SNAKE, camel=False),
    _SNAKE_SESSION,
]
"""``sequential_thinking``'s parameters, as the MCP API reference lists them."""
with_parameters(sequential_thinking, STATUS_PARAMETERS)


async def sequential_thinking_external(*, ctx: AppContext, **arguments: Any) -> CallToolResult:
    """Record a thought a language model writes (or, with ``use_llm: false``, the caller's).

    On a session's first thought ``thought`` is the problem, afterwards guidance; the model's
    thought is recorded with who wrote it and at what cost (see
    :func:`thoughtledger.api.think_with_writer`). Takes :data:`EXTERNAL_PARAMETERS`.

    Raises:
        ToolError: The thought breaks a rule, the session id is malformed, the model's provider
            is not configured (the MCP API reference's "OpenAI API key not configured", ...), the
            model failed ("Failed to generate thought with LLM: ...") or the ledger failed; nothing
            was appended.
    """
    caller = Caller.of(ctx)
    session_id: str = arguments["session_id"]
    temperature: float | None = arguments["temperature"]
    outcome = await record(
        caller,
        "sequential_thinking_external",
        thought_fields(arguments),
        requested=_named(caller, session_id),
        use_llm=arguments["use_llm"],
        model=arguments["model"],
        temperature=DEFAULT_TEMPERATURE if temperature is None else temperature,
    )
    view = external_view(outcome.state, outcome.entry, session_id_shown=False)
    if session_id != DEFAULT_SESSION:
        view["session_id"] = outcome.session_id
    return answer(view)


EXTERNAL_PARAMETERS = [
    *thought_parameters(
        SNAKE_CORE_ORDER, {**text.SNAKE, "thought": text.SNAKE["external_thought"]}, camel=False
    ),
    _SNAKE_SESSION,
    parameter("model", Annotated[LaxText | None, Field(description=text.SNAKE["model"])], None),
    parameter(
        "temperature",
        Annotated[float | None, Field(ge=0, le=2, description=text.SNAKE["temperature"])],
        None,
    ),
    parameter("use_llm", Annotated[LaxFlag, Field(description=text.SNAKE["use_llm"])], True),
]
"""``sequential_thinking_external``'s parameters: ``sequential_thinking``'s, then the model's."""
with_parameters(sequential_thinking_external, EXTERNAL_PARAMETERS)


async def record(
    caller: Caller,
    tool: str,
    fields: Mapping[str, Any],
    *,
    requested: str | None,
    clear: bool = False,
    use_llm: bool = False,
    model: str | None = None,
    temperature: float | None = None,
) -> ThinkOutcome:
    """Append one thought for a tool call: resolve the session, think, rebind, render.

    Args:
        caller: The call.
        tool: The calling tool's name (recorded when a session starts here).
        fields: The thought's fields, snake_case, as the tool's lax types read them (see
            :func:`thought_fields`).
        requested: The session the caller named; ``None`` for the connection's own.
        clear: Retire the session first and continue under a new id.
        use_llm: Have a language model write the thought (``thought`` is then the problem or
            guidance); see :func:`thoughtledger.api.think_with_writer`.
        model: With ``use_llm``: the model or alias (``None``: the MCP API reference's
            ``LUX_MODEL_NORMAL``).
        temperature: With ``use_llm``: the sampling temperature.

    Raises:
        ToolError: The ledger refused or failed, or ``use_llm`` was asked of a server started
            without a model client (its message says why); nothing was appended.
    """
    app = caller.app
    scope = caller.scope
    try:
        # The SDK validated every field with the lax types: the command is not validated again.
        arguments = checked_command(fields, max_thought_bytes=app.ledger.max_thought_bytes)
        handle, session_id = await thinking_target(caller, requested, arguments, clear=clear)
        metadata = caller.session_metadata(tool)
        if use_llm:
            if app.writer is None:
                raise ProviderNotConfiguredError(NO_MODEL_CLIENT)
            # With a progress token the model's text is sent as it is written (see progress).
            think = (
                think_streaming(caller.ctx) if progress_requested(caller.ctx) else think_with_writer
            )
            outcome = await think(
                app.ledger,
                session_id,
                arguments,
                writer=app.writer,
                model=model,
                temperature=temperature,
                clear=clear,
                metadata=metadata,
                owner=scope.owner,
            )
        else:
            outcome = await scope.think(
                session_id,
                arguments,
                clear=clear,
                metadata=metadata,
                # One session per run: only for the connection's own session, which the agent
                # did not name (a named session is the caller's to continue as it likes).
                new_run=requested is None and app.runs == "separate",
            )
    except LedgerError as exc:
        raise ToolError(str(exc)) from exc
    if handle == IMPLICIT:
        caller.directory.ran(outcome.session_id, instead_of=session_id)
    elif handle is not None:
        caller.directory.bind(handle, outcome.session_id)
    if app.thought_sink is not None:
        app.thought_sink(render_thought(outcome.entry))
    return outcome


def answer(view: JsonDict) -> CallToolResult:
    """The official server's answer form: the view as pretty JSON text and as structured content."""
    # ensure_ascii=False: JSON.stringify keeps non-ASCII text as it is, and so do we.
    pretty = json.dumps(view, indent=2, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=pretty)], structured_content=view)


def _named(caller: Caller, session_id: str) -> str | None:
    # The MCP API reference's "default" is the caller's own session: the connection's where there is
    # one. Without a connection identity it stays the shared session named "default", as in the MCP
    # API reference.
    if session_id == DEFAULT_SESSION and caller.key is not None:
        return None
    return session_id


__all__ = [
    "DEFAULT_SESSION",
    "EXTERNAL_PARAMETERS",
    "NO_MODEL_CLIENT",
    "OFFICIAL_PARAMETERS",
    "STATUS_PARAMETERS",
    "answer",
    "profile_view",
    "record",
    "sequential_thinking",
    "sequential_thinking_external",
    "sequentialthinking",
    "thought_fields",
]
