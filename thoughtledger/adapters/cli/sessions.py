"""``thoughtledger sessions``: every session, most recently active first."""

import argparse
from datetime import datetime
from typing import Any

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    add_session_filters,
    clip,
    command,
    ledger_from,
    when,
    whole,
)
from thoughtledger.api import StreamHead
from thoughtledger.ledger.envelope import format_time
from thoughtledger.projections.state import SessionState

STATUSES = ("open", "recorded", "revision", "branch", "complete", "cleared", "expired")
"""``open`` is any session that is not complete, cleared or expired."""


def register(commands: Commands) -> None:
    """Add the ``sessions`` command."""
    parser = command(commands, "sessions", run)
    add_session_filters(parser)
    parser.add_argument("--status", choices=STATUSES, help="only sessions in this status")
    parser.add_argument(
        "--limit", metavar="N", type=whole(1), default=50, help="show at most N (default 50)"
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the sessions as a table (or JSON).

    Raises:
        LedgerError: The ledger failed.
    """
    async with ledger_from(args, read_only=True) as ledger:
        every = await ledger.all_heads()
        heads = _heads(every, args.since, args.until)
        shown: list[SessionState] = []
        with ui.progress("Reading sessions", total=len(heads)) as step:
            for head in heads:
                step.advance()
                state = await ledger.state(head.session_id)
                if _wanted(state, args.status, args.agent, args.client):
                    shown.append(state)
                    if len(shown) == args.limit:
                        break
    if args.json:
        ui.json([_as_json(state) for state in shown])
        return EXIT_OK
    if not shown:
        ui.out.print("no sessions" + (" match" if every else " yet: try thoughtledger demo"))
        return EXIT_OK
    table = ui.table(
        "session",
        "agent",
        "client",
        "first thought",
        "thoughts",
        "revisions",
        "branches",
        "status",
        "started",
        "last activity",
    )
    for state in shown:
        table.add_row(
            state.session_id,
            clip(state.metadata.get("agent") or "-", 24),
            clip(state.metadata.get("client") or "-", 24),
            clip(state.thoughts[0].thought, 48) if state.thoughts else "-",
            str(len(state.thoughts)),
            str(state.revisions),
            str(len(state.branches)),
            state.status,
            when(state.started_at),
            when(state.updated_at),
        )
    ui.show(table)
    if len(shown) == args.limit and len(heads) > args.limit:
        ui.out.print(f"(the {args.limit} most recent; --limit N shows more)", style="dim")
    return EXIT_OK


def _heads(
    every: list[StreamHead], since: datetime | None, until: datetime | None
) -> list[StreamHead]:
    heads = [
        head
        for head in every
        if (since is None or head.started_at >= since)
        and (until is None or head.started_at < until)
    ]
    heads.sort(key=lambda head: (head.updated_at, head.session_id), reverse=True)
    return heads


def _wanted(state: SessionState, status: str | None, agent: str | None, client: str | None) -> bool:
    if agent is not None and state.metadata.get("agent") != agent:
        return False
    if client is not None and state.metadata.get("client") != client:
        return False
    if status == "open":
        return state.status not in ("complete", "cleared", "expired")
    return status is None or state.status == status


def _as_json(state: SessionState) -> dict[str, Any]:
    return {
        "sessionId": state.session_id,
        "firstThought": state.thoughts[0].thought if state.thoughts else None,
        "thoughts": len(state.thoughts),
        "revisions": state.revisions,
        "branches": len(state.branches),
        "status": state.status,
        "startedAt": format_time(state.started_at) if state.started_at else None,
        "updatedAt": format_time(state.updated_at) if state.updated_at else None,
        "agent": state.metadata.get("agent"),
        "client": state.metadata.get("client"),
        "owner": state.owner,
    }
