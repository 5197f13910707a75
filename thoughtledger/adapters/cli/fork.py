"""``thoughtledger fork``: start a new session where another one was, at any of its versions.

The fork's first event names its source, the version and the source's hash there; its state is
the source's as of that version, then its own thoughts (continue it by its id over MCP, or with
``Ledger.session``). Nothing is copied and the source is untouched.
"""

import argparse

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    command,
    ledger_from,
    resolve_session,
    whole,
)


def register(commands: Commands) -> None:
    """Add the ``fork`` command."""
    parser = command(
        commands,
        "fork",
        run,
    )
    parser.add_argument("session", metavar="SESSION", help="source session id (or a unique prefix)")
    parser.add_argument(
        "--at",
        metavar="V",
        type=whole(1),
        help="the source's version to start from (default: its current version)",
    )
    parser.add_argument(
        "--agent", metavar="NAME", help="record the fork as this agent's session (default: none)"
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Fork the session and print the fork's id.

    Raises:
        UsageError: Unknown session.
        InvalidInputError: A version the source does not have (nothing written).
        LedgerError: The ledger failed.
    """
    # Looked up read-only first: an unknown session (or a missing ledger) changes nothing.
    async with ledger_from(args, read_only=True) as ledger:
        source = await resolve_session(ledger, args.session)
    metadata = {"agent": args.agent} if args.agent else {}
    async with ledger_from(args, read_only=False) as ledger:
        fork = await ledger.fork(source, at_version=args.at, metadata=metadata)
        state = await fork.state()
    point = state.fork
    assert point is not None  # noqa: S101  # a fork's first event names its source
    if args.json:
        ui.json(
            {
                "sessionId": state.session_id,
                "forkOf": point.session_id,
                "forkVersion": point.version,
                "forkHash": point.hash,
                "thoughtCount": state.thought_count,
            }
        )
        return EXIT_OK
    ui.out.print(
        f"forked {point.session_id} at version {point.version} (hash {point.hash[:12]}): "
        f"new session {state.session_id} with {state.thought_count} thoughts",
        highlight=False,
    )
    return EXIT_OK


__all__ = ["register", "run"]
