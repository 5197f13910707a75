"""``thoughtledger diff``: what changed in a session between two versions."""

import argparse
from typing import Any

from rich.text import Text

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    check_version,
    clip,
    command,
    ledger_from,
    resolve_session,
    when,
    whole,
)
from thoughtledger.adapters.cli.replay import describe
from thoughtledger.projections.actions import actions_in
from thoughtledger.projections.answers import full_history
from thoughtledger.projections.state import SessionState, empty, replay


def register(commands: Commands) -> None:
    """Add the ``diff`` command."""
    parser = command(commands, "diff", run)
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    parser.add_argument("start", metavar="A", type=whole(0), help="the earlier version (0: empty)")
    parser.add_argument("end", metavar="B", type=whole(1), help="the later version")
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the events between the versions and how the session's figures moved.

    Raises:
        UsageError: Unknown session, or A not below B.
        InvalidInputError: B is past the session's end.
        LedgerError: The ledger failed.
    """
    if args.start >= args.end:
        raise UsageError(f"A must be below B (got {args.start} and {args.end})")
    async with ledger_from(args, read_only=True) as ledger:
        session_id = await resolve_session(ledger, args.session)
        await check_version(ledger, session_id, args.end, f"version B ({args.end})")
        records = await ledger.events(session_id, as_of_version=args.end)
    before = replay(records[: args.start], empty(session_id))
    after = replay(records[args.start :], before)
    changed = records[args.start :]
    acted = len(actions_in(records[: args.start]))
    old, new = _figures(before, acted), _figures(after, acted + len(actions_in(changed)))
    if args.json:
        ui.json(
            {
                "sessionId": session_id,
                "from": args.start,
                "to": args.end,
                "events": full_history(changed),
                "before": old,
                "after": new,
            }
        )
        return EXIT_OK
    ui.out.print(
        Text.assemble(
            ("session ", "bold"),
            (session_id, "bold cyan"),
            f": version {args.start} → {args.end} ({len(changed)} events)",
        )
    )
    for record in changed:
        ui.out.print(
            Text.assemble(
                ("+ ", "green"),
                (f"v{record.version} {when(record.recorded_at)} {record.event_type}  ", "dim"),
                clip(describe(record), 200),
            )
        )
    table = ui.table("", f"at {args.start}", f"at {args.end}")
    for key in ("thoughts", "revisions", "branches", "actions", "totalThoughts", "status"):
        mark = "" if old[key] == new[key] else " *"
        table.add_row(key, str(old[key]), f"{new[key]}{mark}")
    ui.show(table)
    return EXIT_OK


def _figures(state: SessionState, actions: int) -> dict[str, Any]:
    return {
        "thoughts": len(state.thoughts),
        "revisions": state.revisions,
        "branches": len(state.branches),
        "actions": actions,
        "totalThoughts": state.last.total_thoughts if state.last else None,
        "status": state.status,
    }
