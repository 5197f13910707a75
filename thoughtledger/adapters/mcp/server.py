"""``create_server(ledger)``: the MCP server over a ledger, with no module-level state.

Tools are typed functions (:mod:`thoughtledger.adapters.mcp.tools.thinking`,
:mod:`thoughtledger.adapters.mcp.tools.reading`) registered per server, with the official text,
compact schemas, output schemas and truthful annotations. Two thin adaptations of the SDK live here:
argument errors become one plain line naming every bad field (``Invalid sequential thinking params:
...``, as in the MCP API reference) instead of pydantic's report, and our own refusals reach the
model without the SDK's ``Error executing tool`` prefix.
"""

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import BaseModel, ValidationError

from thoughtledger.adapters.common.json_schema import compact_schema
from thoughtledger.adapters.mcp.tools import descriptions as text
from thoughtledger.adapters.mcp.tools.answers import (
    HISTORY_LISTED,
    ExternalAnswer,
    HistoryAnswer,
    InsightsAnswer,
    MinimalAnswer,
    OfficialAnswer,
    SessionAnswer,
    StatusAnswer,
    batch_answer,
    output_schema,
)
from thoughtledger.adapters.mcp.tools.batch import BATCH_TOOL, sequential_thinking_batch
from thoughtledger.adapters.mcp.tools.context import AppState, ProfileName, RunsName
from thoughtledger.adapters.mcp.tools.insights import thinking_insights
from thoughtledger.adapters.mcp.tools.lax_types import plain_wording
from thoughtledger.adapters.mcp.tools.reading import register_resources, thinking_history
from thoughtledger.adapters.mcp.tools.render import ThoughtSink
from thoughtledger.adapters.mcp.tools.thinking import (
    sequential_thinking,
    sequential_thinking_external,
    sequentialthinking,
)
from thoughtledger.api import Ledger, ThoughtWriter, check_agent
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.thought_types import describe_errors

SERVER_NAME = "thoughtledger"
OFFICIAL_TOOL = "sequentialthinking"
HISTORY_TOOL = "thinking_history"
STATUS_TOOL = "sequential_thinking"
EXTERNAL_TOOL = "sequential_thinking_external"
INSIGHTS_TOOL = "thinking_insights"
TOOL_NAMES = (OFFICIAL_TOOL, HISTORY_TOOL, STATUS_TOOL, EXTERNAL_TOOL, INSIGHTS_TOOL, BATCH_TOOL)
"""Every tool the server can list."""
DEFAULT_TOOLS = (OFFICIAL_TOOL, HISTORY_TOOL)
"""Listed unless ``--tools`` says otherwise: the official tool and the read tool."""
PROFILES: tuple[ProfileName, ...] = ("minimal", "official", "full")
RUNS: tuple[RunsName, ...] = ("separate", "continuous")
DescriptionsName = Literal["official", "compact"]
"""How the tools describe themselves: the official text, or one within OpenAI's limits."""
DESCRIPTIONS: tuple[DescriptionsName, ...] = ("official", "compact")
WriterFactory = Callable[[], contextlib.AbstractAsyncContextManager[ThoughtWriter]]
"""Opens a model client for one lifespan and closes it at the end (``LLMWriter`` is one)."""

# The thinking tools append to a log: not read-only, never destructive (a cleared session's
# history stays readable), not idempotent (a repeated call records a second thought), closed world.
THINKING = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
READING = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
PROFILE_ANSWERS: dict[ProfileName, type[BaseModel]] = {
    "minimal": MinimalAnswer,
    "official": OfficialAnswer,
    "full": SessionAnswer,
}
# How argument errors are introduced, per tool (the MCP API reference's wording for the thinking
# tools).
_INVALID_PARAMS = {
    OFFICIAL_TOOL: "Invalid sequential thinking params",
    STATUS_TOOL: "Invalid sequential thinking params",
    EXTERNAL_TOOL: "Invalid sequential thinking params",
    BATCH_TOOL: "Invalid sequential thinking params",
    HISTORY_TOOL: "Invalid thinking_history params",
}


class LedgerMCPServer(MCPServer[AppState]):
    """``MCPServer`` with errors a model can act on, in one plain line.

    The SDK reports bad arguments as pydantic's multi-line report and prefixes every tool error
    with ``Error executing tool <name>:``; both are rewritten here, in the one method every
    ``tools/call`` passes through. Crashes keep the SDK's behaviour: a generic message, the
    traceback in the server log.
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[AppState, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool, rewriting anticipated errors (see the class docstring).

        Raises:
            ToolError: Unknown tool, bad arguments, or a refusal from the tool (plain message).
            UnexpectedToolError: The tool crashed (generic message; traceback logged).
            MCPError: A protocol error raised by the tool.
        """
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                label = _INVALID_PARAMS.get(name, f"Invalid {name} params")
                raise ToolError(f"{label}: {describe_errors(cause, plain_wording)}") from cause
            if isinstance(cause, ToolError) and not isinstance(cause, UnexpectedToolError):
                raise ToolError(str(cause)) from cause
            raise


def create_server(
    ledger: Ledger,
    *,
    profile: ProfileName = "official",
    tools: Sequence[str] = DEFAULT_TOOLS,
    thought_sink: ThoughtSink | None = None,
    transport: str = "in-process",
    writer: ThoughtWriter | None = None,
    open_writer: WriterFactory | None = None,
    descriptions: DescriptionsName = "official",
    runs: RunsName = "separate",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    agent: str | None = None,
) -> MCPServer[AppState]:
    """Build the MCP server over ``ledger`` (which the caller opens and closes).

    Args:
        ledger: Where thoughts are recorded and read back.
        profile: What ``sequentialthinking`` answers: ``minimal`` (the minimal-response spec's four
            keys),
            ``official`` (the official server's view) or ``full`` (the session pattern's view); each
            with ``sessionId``.
        tools: Which tools to list, in order (see :data:`TOOL_NAMES`).
        thought_sink: Where to render each recorded thought (the serve entry point passes a
            stderr writer unless ``DISABLE_THOUGHT_LOGGING=true``); ``None`` renders nothing.
        transport: Recorded in new sessions' metadata for connections without headers.
        writer: Who writes ``sequential_thinking_external``'s thoughts (``use_llm`` true), shared
            by every lifespan and closed by the caller; for example a
            :class:`~thoughtledger.adapters.llm.LLMWriter`.
        open_writer: Instead of ``writer``: opens one per lifespan, closed when the lifespan
            ends (``thoughtledger serve`` passes ``LLMWriter``, configured from the environment).
            With neither, ``use_llm`` calls fail with a tool error saying the server was started
            without a model client; manual mode (``use_llm: false``) still records.
        descriptions: ``official`` (the official server's words, for drop-in parity) or
            ``compact``: every tool's description within the 1,024 characters OpenAI's API
            accepts, the official advice moved into the parameters' descriptions.
        runs: ``separate``: on a connection's own session, a plain thought numbered 1 after
            earlier thoughts starts a new session that records the one it follows (one session
            per run of an agent); ``continuous``: one accumulating history, as the official
            server keeps.
        token_verifier: Who HTTP bearer tokens stand for (the SDK's ``TokenVerifier``: a
            :class:`~thoughtledger.adapters.auth.verifier.FileTokenVerifier`, or one asking an OAuth
            authorization server); given with ``auth``, every HTTP request needs a token it accepts.
            The principal is the token's ``subject``, else its ``client_id``; its role comes from
            the ``thoughtledger:<role>`` scopes (see :mod:`thoughtledger.api.access`).
        auth: The SDK's ``AuthSettings`` (``issuer_url``, ``resource_server_url`` = the served
            ``/mcp`` URL); both or neither of ``token_verifier`` and ``auth``.
        agent: The agent of the sessions a call starts without naming its own (in its
            ``_meta``, see :func:`thoughtledger.api.session_agent`); with authentication the
            principal is the agent.

    Returns:
        The server; sessions are resources under ``thoughtledger://sessions``.

    Raises:
        InvalidInputError: An unknown profile, tool name, descriptions style or runs mode, or
            no tool; only one of ``token_verifier`` and ``auth``; both ``writer`` and
            ``open_writer``; or an invalid agent name.
    """
    if agent is not None:
        check_agent(agent)
    if runs not in RUNS:
        raise InvalidInputError(f"unknown runs {runs!r}: use {', '.join(RUNS)}")
    if writer is not None and open_writer is not None:
        raise InvalidInputError("pass writer or open_writer, not both")
    if (token_verifier is None) != (auth is None):
        raise InvalidInputError("pass token_verifier and auth together, or neither")
    if profile not in PROFILES:
        raise InvalidInputError(f"unknown profile {profile!r}: use {', '.join(PROFILES)}")
    if descriptions not in DESCRIPTIONS:
        raise InvalidInputError(
            f"unknown descriptions {descriptions!r}: use {', '.join(DESCRIPTIONS)}"
        )
    chosen = list(dict.fromkeys(tools))
    if not chosen:
        raise InvalidInputError("list at least one tool")
    if unknown := [name for name in chosen if name not in TOOL_NAMES]:
        raise InvalidInputError(f"unknown tools {unknown}: choose from {', '.join(TOOL_NAMES)}")

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> AsyncIterator[AppState]:
        async with contextlib.AsyncExitStack() as stack:
            own = None if open_writer is None else await stack.enter_async_context(open_writer())
            yield AppState(
                ledger=ledger,
                profile=profile,
                # One lifespan per stdio process or in-process client: its connection's identity.
                connection_key=uuid.uuid4().hex,
                transport=transport,
                thought_sink=thought_sink,
                writer=writer if own is None else own,
                runs=runs,
                agent=agent,
            )

    builders: dict[str, Callable[[], Tool]] = {
        OFFICIAL_TOOL: lambda: _official_tool(
            profile, history=HISTORY_TOOL in chosen, compact=descriptions == "compact"
        ),
        HISTORY_TOOL: lambda: _tool(
            thinking_history,
            "Thinking history",
            text.HISTORY_DESCRIPTION,
            READING,
            HistoryAnswer,
            listed=HISTORY_LISTED,
        ),
        STATUS_TOOL: lambda: _tool(
            sequential_thinking,
            "Sequential thinking (snake_case)",
            text.STATUS_DESCRIPTION,
            THINKING,
            StatusAnswer,
        ),
        EXTERNAL_TOOL: lambda: _tool(
            sequential_thinking_external,
            "Sequential thinking (external)",
            text.EXTERNAL_DESCRIPTION,
            THINKING,
            ExternalAnswer,
        ),
        INSIGHTS_TOOL: lambda: _tool(
            thinking_insights,
            "Insights from past runs",
            text.INSIGHTS_DESCRIPTION,
            READING,
            InsightsAnswer,
        ),
        BATCH_TOOL: lambda: _batch_tool(profile),
    }
    server = LedgerMCPServer(
        SERVER_NAME,
        version=_version(),
        lifespan=lifespan,
        tools=[builders[name]() for name in chosen],
        token_verifier=token_verifier,
        auth=auth,
    )
    register_resources(server, ledger)
    return server


def _official_tool(profile: ProfileName, *, history: bool, compact: bool) -> Tool:
    if compact:
        description = text.COMPACT_DESCRIPTION
        if history:
            description += text.COMPACT_HISTORY_NOTE.format(tool=HISTORY_TOOL)
    else:
        description = text.OFFICIAL_DESCRIPTION + text.SESSIONS_NOTE
        if history:
            description += text.HISTORY_NOTE.format(tool=HISTORY_TOOL)
    tool = _tool(
        sequentialthinking, "Sequential Thinking", description, THINKING, PROFILE_ANSWERS[profile]
    )
    if compact:
        # Only the published words change: validation reads the function's signature.
        for name, spec in tool.parameters["properties"].items():
            spec["description"] = text.COMPACT_PARAMETERS.get(name, spec["description"])
    return tool


def _batch_tool(profile: ProfileName) -> Tool:
    each = PROFILE_ANSWERS[profile]
    tool = _tool(
        sequential_thinking_batch,
        "Sequential thinking (batch)",
        text.BATCH_DESCRIPTION,
        THINKING,
        batch_answer(each),
    )
    # Each answer's class docstring is for us, as a top-level one is (see output_schema).
    schema = tool.fn_metadata.output_schema or {}
    schema.get("$defs", {}).get(each.__name__, {}).pop("description", None)
    return tool


def _tool(
    fn: Callable[..., Any],
    title: str,
    description: str,
    annotations: ToolAnnotations,
    answer: type[BaseModel],
    *,
    listed: Sequence[str] | None = None,
) -> Tool:
    tool = Tool.from_function(fn, title=title, description=description, annotations=annotations)
    # Every schema word is paid for on each tools/list: drop pydantic's titles and null branches.
    tool.parameters = compact_schema(tool.parameters)
    # The functions return a ready CallToolResult; the schema is published, and the SDK's client
    # (like any careful client) checks structured content against it.
    tool.fn_metadata.output_schema = output_schema(answer, listed=listed)
    return tool


def _version() -> str:
    try:
        return version("thoughtledger")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


__all__ = [
    "BATCH_TOOL",
    "DEFAULT_TOOLS",
    "DESCRIPTIONS",
    "EXTERNAL_TOOL",
    "HISTORY_TOOL",
    "INSIGHTS_TOOL",
    "OFFICIAL_TOOL",
    "PROFILES",
    "RUNS",
    "STATUS_TOOL",
    "TOOL_NAMES",
    "DescriptionsName",
    "LedgerMCPServer",
    "WriterFactory",
    "create_server",
]
