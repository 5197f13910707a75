"""``sequential_thinking_batch``: several thoughts in one call, recorded in one transaction.

Listed only when asked for (``--tools all``, or by name): the default ``tools/list`` every
conversation pays for stays as it was. Each item of ``thoughts`` takes ``sequentialthinking``'s
thought arguments, with the same (lax) types and words, generated from the definition of a
thought like every thinking tool's; ``sessionId`` sits beside ``thoughts``, once for the batch.
Every thought is checked before anything is recorded (the SDK checks the types, then each thought
is checked as one call would be); one refused thought refuses the batch, named as
``thoughts.<index>`` (types) or ``thoughts[<index>]`` (rules). The answer holds, under
``answers``, what ``sequentialthinking`` would have answered each thought, in order.
"""

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from thoughtledger.adapters.mcp.tools import descriptions as text
from thoughtledger.adapters.mcp.tools.batch_item import BatchThought
from thoughtledger.adapters.mcp.tools.context import AppContext, Caller
from thoughtledger.adapters.mcp.tools.lax_types import LaxText
from thoughtledger.adapters.mcp.tools.parameters import parameter, thought_fields, with_parameters
from thoughtledger.adapters.mcp.tools.render import render_thought
from thoughtledger.adapters.mcp.tools.targets import IMPLICIT, thinking_target
from thoughtledger.adapters.mcp.tools.thinking import answer, profile_view
from thoughtledger.api import MAX_BATCH_THOUGHTS, ThinkCommand, check_batch, checked_command
from thoughtledger.ledger.errors import LedgerError

BATCH_TOOL = "sequential_thinking_batch"


async def sequential_thinking_batch(*, ctx: AppContext, **arguments: Any) -> CallToolResult:
    """Record several thoughts in one transaction; answer each as ``sequentialthinking`` would.

    Raises:
        ToolError: A thought breaks a rule (named by its index), the session id is malformed
            or the ledger failed; nothing of the batch was appended.
    """
    caller = Caller.of(ctx)
    app = caller.app
    requested: str | None = arguments["session_id"]
    limit = app.ledger.max_thought_bytes

    def validate(item: BaseModel) -> ThinkCommand:
        return checked_command(thought_fields(dict(item)), max_thought_bytes=limit)

    try:
        commands = check_batch(arguments["thoughts"], validate)
        handle, session_id = await thinking_target(caller, requested, commands[0], clear=False)
        outcomes = await caller.scope.think_batch(
            session_id,
            commands,
            metadata=caller.session_metadata(BATCH_TOOL),
            # As for one thought: one session per run only on the connection's own session.
            new_run=requested is None and app.runs == "separate",
        )
    except LedgerError as exc:
        raise ToolError(str(exc)) from exc
    landed = outcomes[-1].session_id
    if handle == IMPLICIT:
        caller.directory.ran(landed, instead_of=session_id)
    elif handle is not None:
        caller.directory.bind(handle, landed)
    if caller.key is None and requested is not None:
        caller.directory.ran(landed)
    if app.thought_sink is not None:
        for outcome in outcomes:
            app.thought_sink(render_thought(outcome.entry))
    return answer(
        {"sessionId": landed, "answers": [profile_view(app.profile, o) for o in outcomes]}
    )


BATCH_PARAMETERS = [
    parameter(
        "thoughts",
        Annotated[
            list[BatchThought],  # type: ignore[valid-type]  # a generated model: a class to pydantic
            Field(min_length=1, max_length=MAX_BATCH_THOUGHTS, description=text.BATCH_THOUGHTS),
        ],
    ),
    parameter(
        "session_id",
        Annotated[LaxText | None, Field(validation_alias="sessionId", description=text.SESSION_ID)],
        None,
    ),
]
"""``sequential_thinking_batch``'s parameters: the thoughts, then the session they continue."""
with_parameters(sequential_thinking_batch, BATCH_PARAMETERS)


__all__ = ["BATCH_PARAMETERS", "BATCH_TOOL", "BatchThought", "sequential_thinking_batch"]
