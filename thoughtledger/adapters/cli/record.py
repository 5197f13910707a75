"""``thoughtledger record FILE|-``: record thought calls from JSON Lines, atomically per session.

The file is read whole first (see :mod:`thoughtledger.adapters.cli.record_lines` for its lines and
how
they are grouped): a line whose session cannot be told refuses the file, and nothing is written.
Then each session's thoughts are checked and recorded in one append (``ledger.batches``): a bad
line refuses its own session only, with its line number and field, and the other sessions are
recorded; the command then says which were refused and exits 1.
"""

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from thoughtledger.adapters.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    command,
    ledger_from,
    plural,
)
from thoughtledger.ledger.errors import LedgerError

METADATA = {"tool": "record", "transport": "cli"}
"""Recorded when a session starts from a file."""


def register(commands: Commands) -> None:
    """Add the ``record`` command."""
    parser = command(
        commands,
        "record",
        "record thought calls from JSON Lines (- reads stdin), each session in one transaction",
        run,
        reads=False,
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        help="one call's arguments a line, as MCP's sequentialthinking takes them, optionally "
        "with sessionId; lines without one start a new session at each thoughtNumber 1",
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Record every session of the file whose lines are all valid; report the others.

    Raises:
        UsageError: No such file, or a line that names no session the command can tell (too
            long, not a JSON object, a malformed ``sessionId``), or a file over the bounds;
            nothing was recorded.
        LedgerError: The ledger cannot be opened; nothing was recorded.
    """
    # Loaded here: the lines are read with the MCP tools' own types.
    from thoughtledger.adapters.cli.record_lines import read_batches

    name = "stdin" if args.file == "-" else args.file
    with ExitStack() as stack:
        stream: BinaryIO = (
            sys.stdin.buffer if args.file == "-" else stack.enter_context(_open(name))
        )
        batches = read_batches(stream, name)
    recorded: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    async with ledger_from(args, read_only=False) as ledger:
        checked = [(batch, batch.commands(ledger.max_thought_bytes)) for batch in batches]
        total = sum(len(commands) for _batch, commands in checked)
        with ui.progress(f"Recording {name}", total=total) as step:
            for batch, commands in checked:
                where = {"sessionId": batch.session_id, "lines": [batch.lines[0], batch.lines[-1]]}
                if batch.refusal is None:
                    try:
                        outcomes = await ledger.batches.think(
                            batch.session_id, commands, metadata=METADATA
                        )
                    except LedgerError as exc:
                        batch.refusal = f"lines {batch.lines[0]}-{batch.lines[-1]}: {exc}"
                    else:
                        recorded.append(
                            {
                                **where,
                                "recordedIn": outcomes[-1].session_id,
                                "thoughts": len(commands),
                            }
                        )
                        step.advance(len(commands))
                        continue
                refused.append({**where, "error": batch.refusal})
    _report(ui, args.json, name, recorded, refused)
    return EXIT_FAILURE if refused else EXIT_OK


def _open(name: str) -> BinaryIO:
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{path} is a directory; name a JSON Lines file, or - for stdin")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def _report(
    ui: Ui, as_json: bool, name: str, recorded: list[dict[str, Any]], refused: list[dict[str, Any]]
) -> None:
    thoughts = sum(item["thoughts"] for item in recorded)
    if as_json:
        ui.json({"file": name, "thoughts": thoughts, "recorded": recorded, "refused": refused})
    else:
        for item in recorded:
            first, last = item["lines"]
            lines = f"line {first}" if first == last else f"lines {first}-{last}"
            ui.out.print(
                f"{item['recordedIn']}  {plural(item['thoughts'], 'thought')} ({lines})",
                soft_wrap=True,
                highlight=False,
            )
        ui.out.print(
            f"recorded {plural(thoughts, 'thought')} in {plural(len(recorded), 'session')} "
            f"from {name}" + (f"; refused {plural(len(refused), 'session')}" if refused else ""),
            soft_wrap=True,
            highlight=False,
        )
    for item in refused:
        named = item["sessionId"]
        whose = f"session {named}" if named else f"the run from line {item['lines'][0]}"
        ui.err.print(
            f"thoughtledger: error: {whose} refused, nothing of it recorded: {item['error']}",
            soft_wrap=True,
            highlight=False,
        )


__all__ = ["METADATA", "register", "run"]
