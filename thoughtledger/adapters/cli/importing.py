"""``thoughtledger import``: load an export, checking everything before writing anything.

First the file alone (:mod:`thoughtledger.api.transfer.check`): every line parsed, every
chain
verified from its first event, times in order, sizes within what the API records, and the manifest
accounting for every session, before the ledger is even opened. Then the file against the ledger,
and only then the writing, whole sessions at a time
(:mod:`thoughtledger.api.transfer.importing`).
Any refusal before the writing writes nothing.
"""

import argparse
import sys
from pathlib import Path

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    command,
    ledger_from,
    plural,
    settle_loop_marks,
)
from thoughtledger.api import check_file


def register(commands: Commands) -> None:
    """Add the ``import`` command."""
    parser = command(
        commands,
        "import",
        run,
        reads=False,
    )
    parser.add_argument("file", metavar="FILE", help="a file written by thoughtledger export")
    parser.add_argument(
        "--without-manifest",
        action="store_true",
        help="accept a file with no manifest (written before exports had one); whether it "
        "was cut short cannot be checked",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="require the file to be exactly the log this signed checkpoint covers (a whole "
        "export): a forged, altered, dropped or reordered event refuses it",
    )
    parser.add_argument("--pubkey", metavar="FILE", help="the key that signed --checkpoint")
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Import the file; refuse it whole when anything in it, or about it, is wrong.

    Raises:
        UsageError: The path is missing or a directory.
        ImportRefusedError: The file is not a whole, untampered export within the API's limits,
            or it conflicts with the ledger (nothing written); or writing stopped midway (whole
            sessions written).
        LedgerError: The ledger failed before anything was written.
    """
    path, size = _input(args.file)
    if (args.checkpoint is None) != (args.pubkey is None):
        raise UsageError("--checkpoint and --pubkey go together")
    signed = None
    if args.checkpoint is not None:
        from thoughtledger.adapters.cli.proofs import read_text, read_verifier

        signed = (read_text(args.checkpoint, "checkpoint"), read_verifier(args.pubkey))
    with ui.progress(f"Checking {path.name}", total=size, in_bytes=True) as step:
        checked = check_file(path, step, without_manifest=args.without_manifest)
    if signed is not None:
        from thoughtledger.api import check_checkpoint

        check_checkpoint(checked, *signed)
    if not checked.has_manifest:
        sys.stderr.write(
            f"thoughtledger: warning: {path} has no manifest: whether it was cut short cannot "
            "be checked\n"
        )
    async with ledger_from(args, read_only=False) as ledger:
        pending = await ledger.transfer.pending_import(checked)
        with ui.progress(f"Importing {path.name}", total=pending.missing) as step:
            written = await ledger.transfer.write_import(pending, step)
        if written:
            await settle_loop_marks(ledger, ui)
    sessions, events = len(checked.sessions), checked.events
    if args.json:
        ui.json(
            {
                "file": str(path),
                "sessions": sessions,
                "events": events,
                "imported": written,
                "alreadyPresent": events - written,
            }
        )
    elif written:
        ui.out.print(
            f"imported {plural(written, 'event')} of {plural(sessions, 'session')} from {path} "
            f"({events - written} already in the ledger); every chain verifies"
        )
    else:
        ui.out.print(
            f"nothing to import: the ledger already holds all {plural(events, 'event')} of "
            f"{plural(sessions, 'session')} in {path}"
        )
    return EXIT_OK


def _input(given: str) -> tuple[Path, int]:
    path = Path(given)
    if path.is_dir():
        raise UsageError(f"{path} is a directory; name an export file")
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    return path, path.stat().st_size
