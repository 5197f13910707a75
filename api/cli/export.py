"""``thoughtledger export``: sessions to a JSON Lines file, losslessly, hashes included."""

import argparse
from pathlib import Path

from api.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    all_heads,
    command,
    ledger_from,
    plural,
    resolve_session,
)
from api.cli.jsonl import atomic_file, to_line
from api.service import Ledger
from ledger.store.sqlite import SqliteEventStore


def register(commands: Commands) -> None:
    """Add the ``export`` command."""
    parser = command(
        commands, "export", "write sessions to a JSON Lines file, hashes included", run
    )
    parser.add_argument("sessions", metavar="SESSION", nargs="*", help="sessions to export")
    parser.add_argument("--all", action="store_true", help="export every session")
    parser.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="the file to write (FILE.jsonl)"
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Write the sessions' events to the output file, which appears only once complete.

    Raises:
        UsageError: No sessions and no --all (or both), an unknown session, or an output path
            that is a directory, lies in no directory, or is the ledger itself.
        CliError: The file cannot be written (nothing is left behind).
        LedgerError: The ledger failed.
    """
    if bool(args.sessions) == args.all:
        raise UsageError("name the sessions to export, or give --all (not both)")
    target = _output(args.output)
    async with ledger_from(args, read_only=True) as ledger:
        store = ledger.store
        if isinstance(store, SqliteEventStore) and _is_database(target, store.path):
            raise UsageError(f"{target} is the ledger's own database; choose another file")
        if args.sessions:
            chosen = await _chosen(ledger, args.sessions)
        else:
            chosen = [head.session_id for head in await all_heads(ledger)]
        events = 0
        with atomic_file(target) as out, ui.progress("Exporting", total=len(chosen)) as step:
            for session_id in chosen:
                for record in await store.read_stream(session_id):
                    out.write(to_line(record))
                    events += 1
                step.advance()
    if args.json:
        ui.json({"file": str(target), "sessions": len(chosen), "events": events})
    else:
        ui.out.print(
            f"exported {plural(events, 'event')} of {plural(len(chosen), 'session')} to {target}"
        )
    return EXIT_OK


async def _chosen(ledger: Ledger, given: list[str]) -> list[str]:
    chosen: list[str] = []
    for name in given:
        session_id = await resolve_session(ledger, name)
        if session_id not in chosen:
            chosen.append(session_id)
    return chosen


def _output(given: str) -> Path:
    target = Path(given)
    if target.is_dir():
        raise UsageError(f"{target} is a directory; name a file, such as {target / 'ledger.jsonl'}")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {target}: {target.parent} is not a directory")
    return target


def _is_database(target: Path, database: Path) -> bool:
    own = database.resolve()
    return target.resolve() in (
        own,
        own.with_name(own.name + "-wal"),
        own.with_name(own.name + "-shm"),
    )
