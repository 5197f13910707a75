"""Thoughts that name no session on a transport without connections: which run they continue.

A 2026-07-28 client (the SDK's default ``Client(url)``) and stateless HTTP send no connection
identity, and a model does not always pass back the ``sessionId`` its answers carry. Such a call
continues one of its caller's recent runs (per principal with ``--auth``, one anonymous caller
without; a run is recent when a call, named or not, recorded a thought in it), chosen by the
thought itself:

* a plain thought numbered 1 (not a revision, not a branch) starts a new run under
  ``--runs separate`` (``continuous``: it joins the current run, as the official server would);
* any other thought continues the one recent run it follows: the run whose last thought is
  numbered one less, or else the one run holding the thought it revises or branches from (or the
  branch it extends); a ``clearSession`` call retires the current run;
* a thought that follows none of them, or several (two agents in step under one principal), is
  refused with nothing written, naming the runs, so that two agents are never mixed silently.

Without any recent run here (a first call, a restarted server, another server process sharing
the ledger) only a plain thought 1 or a ``clearSession`` call starts one; any other thought is
refused, asking for ``sessionId``, rather than split off into a session of its own.
"""

from collections.abc import Sequence

from mcp.server.mcpserver.exceptions import ToolError

from thoughtledger.adapters.mcp.tools.context import Caller
from thoughtledger.api import ThinkCommand, starts_a_run
from thoughtledger.ledger.errors import SessionNotFoundError
from thoughtledger.projections.state import SessionState


async def implicit_target(caller: Caller, command: ThinkCommand, *, clear: bool) -> str | None:
    """Return the run an unnamed call without a connection continues (``None``: a new one).

    Args:
        caller: The call (its principal's directory holds the recent runs).
        command: The thought.
        clear: Whether the call clears the session it continues.

    Raises:
        ToolError: The thought follows none of the recent runs, or several; nothing was written.
        StoreError: The store failed.
    """
    runs = caller.directory.runs()
    if not runs:
        if clear or starts_a_run(command):
            return None
        # A restarted server, or another process sharing the ledger: the run this thought
        # continues is not known here, and starting one would split the caller's thinking.
        raise ToolError(_unknown(command))
    current = runs[-1]
    if clear:
        return current
    if starts_a_run(command):
        return None if caller.app.runs == "separate" else current
    states: list[SessionState] = []
    for session_id in reversed(runs):
        try:
            state = await caller.scope.facts(session_id)
        except SessionNotFoundError:
            continue
        # A finished run is continued only while it is the current one: an agent that ended
        # one run and started the next is not offered the old one again.
        if session_id == current or not _finished(state):
            states.append(state)
    for fits in (_next_number, _refers_to):
        chosen = [state.session_id for state in states if fits(state, command)]
        if len(chosen) == 1:
            return chosen[0]
        if chosen:
            raise ToolError(_several(command, chosen))
    now = next((state for state in states if state.session_id == current), None)
    raise ToolError(_none(command, now, current))


def _finished(state: SessionState) -> bool:
    last = state.last
    return state.ended is not None or (last is not None and not last.next_thought_needed)


def _next_number(state: SessionState, command: ThinkCommand) -> bool:
    last = state.last
    return last is not None and command.thought_number == last.thought_number + 1


def _refers_to(state: SessionState, command: ThinkCommand) -> bool:
    if command.branch_id is not None and command.branch_id in state.branches:
        return True
    highest = max((entry.thought_number for entry in state.thoughts), default=0)
    referred = [n for n in (command.revises_thought, command.branch_from_thought) if n is not None]
    return bool(referred) and all(n <= highest for n in referred)


def _several(command: ThinkCommand, session_ids: Sequence[str]) -> str:
    return (
        f"thought {command.thought_number} could continue more than one of your recent sessions "
        f"({', '.join(session_ids)}), so nothing was recorded: pass sessionId, the one your "
        "previous response gave, to say which"
    )


def _unknown(command: ThinkCommand) -> str:
    return (
        f"thought {command.thought_number} names no sessionId, and this server knows no session "
        "you continued without one, so nothing was recorded: pass sessionId, the one your "
        "previous response gave, or start a new session at thoughtNumber 1"
    )


def _none(command: ThinkCommand, state: SessionState | None, current: str) -> str:
    last = state.last if state is not None else None
    at = f", whose last thought is {last.thought_number}," if last is not None else ""
    return (
        f"thought {command.thought_number} does not follow your current session {current}{at} "
        "and no sessionId was given, so nothing was recorded: pass sessionId, the one your "
        "previous response gave, to continue a session, or start a new one at thoughtNumber 1"
    )


__all__ = ["implicit_target"]
