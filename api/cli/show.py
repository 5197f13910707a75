"""``thoughtledger show``: one session as a tree, now or as it was at a version or a time."""

import argparse
from datetime import datetime

from api.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    command,
    ledger_from,
    parse_time,
    resolve_session,
    whole,
)
from api.cli.tree import session_json, session_tree
from api.service import Ledger
from projections.state import SessionState
from projections.usage import usage_by_model, usage_note


def register(commands: Commands) -> None:
    """Add the ``show`` command."""
    parser = command(commands, "show", "show a session as a tree of its thoughts", run)
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--at", metavar="VERSION", type=whole(1), help="as it was after its first VERSION events"
    )
    when.add_argument(
        "--as-of",
        metavar="TIME",
        type=parse_time,
        help="as it was at TIME (UTC unless a zone is given: 2024-05-01T14:02, 14:02, 2h)",
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the session's tree (or JSON).

    Raises:
        UsageError: Unknown session, or a version past its end.
        LedgerError: The ledger failed.
    """
    async with ledger_from(args, read_only=True) as ledger:
        state, latest = await load(ledger, args.session, at=args.at, as_of=args.as_of)
    if args.json:
        ui.json(session_json(state))
        return EXIT_OK
    ui.show(session_tree(state))
    written = [entry.generation for entry in state.thoughts if entry.generation is not None]
    for usage in usage_by_model(written):
        ui.out.print(f"written by {usage_note(usage)}", style="dim")
    if latest != state.version:
        ui.out.print(
            f"(as of version {state.version} of {latest}; without --at/--as-of: the session now)",
            style="dim",
        )
    return EXIT_OK


async def load(
    ledger: Ledger, given: str, *, at: int | None, as_of: datetime | None
) -> tuple[SessionState, int]:
    """The session ``given`` names, as of ``at`` or ``as_of``, and the version it is at now.

    Raises:
        UsageError: Unknown session.
        SessionNotFoundError: No events yet at ``as_of``.
        InvalidInputError: A version past its end.
        LedgerError: The ledger failed.
    """
    session_id = await resolve_session(ledger, given)
    return await ledger.state_with_latest(session_id, as_of_version=at, as_of_time=as_of)
