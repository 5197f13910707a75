"""``thoughtledger record FILE|-``: record thought calls from JSON Lines, atomically per session.

The file is read whole first (see :mod:`thoughtledger.adapters.cli.record_lines` for its lines
and how they are grouped): a line whose session cannot be told refuses the file, and nothing is
written. Then each session's thoughts are checked and recorded in one append
(``ledger.batches``): a bad line refuses its own session only, with its line number and field,
and the other sessions are recorded; the command then says which were refused and exits 1.
"""

import argparse
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

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
    settle_loop_marks,
)
from thoughtledger.api import Ledger
from thoughtledger.ledger.errors import InvalidInputError, LedgerError

if TYPE_CHECKING:
    from thoughtledger.adapters.cli.record_lines import Batch

METADATA = {"tool": "record", "transport": "cli"}
"""Recorded when a session starts from a file (with its agent and client, when named)."""
MAX_SHOWN = 20
"""Sessions listed one a line on a terminal (piped, every one is: a script reads them)."""


def register(commands: Commands) -> None:
    """Add the ``record`` command."""
    parser = command(
        commands,
        "record",
        run,
        reads=False,
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        help="one call's arguments a line, as MCP's sequentialthinking takes them, optionally "
        "with sessionId; lines without one start a new session at each thoughtNumber 1",
    )
    parser.add_argument(
        "--agent",
        metavar="NAME",
        type=_named("agent"),
        help="record the sessions the file starts as this agent's (a line's _meta "
        '"thoughtledger/agent" names its own)',
    )
    parser.add_argument(
        "--client",
        metavar="NAME",
        type=_named("client"),
        help="record the sessions the file starts as from this client (a line's _meta "
        '"thoughtledger/client" names its own)',
    )
    add_json_option(parser)


def _named(fact: str) -> Callable[[str], str]:
    def parse(given: str) -> str:
        from thoughtledger.adapters.cli.record_lines import check_name

        try:
            return check_name(given, fact)
        except InvalidInputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


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
    given = {"agent": args.agent, "client": args.client}
    defaults = {fact: value for fact, value in given.items() if value is not None}
    async with ledger_from(args, read_only=False) as ledger:
        batches = await _resolved(ledger, batches)
        checked = [(batch, batch.commands(ledger.max_thought_bytes)) for batch in batches]
        total = sum(len(commands) for _batch, commands in checked)
        with ui.progress(f"Recording {name}", total=total) as step:
            for batch, commands in checked:
                where = {"sessionId": batch.session_id, "lines": [batch.lines[0], batch.lines[-1]]}
                if batch.refusal is None:
                    try:
                        outcomes = await ledger.batches.think(
                            batch.session_id,
                            commands,
                            metadata={**METADATA, **defaults, **batch.facts},
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
        if recorded:
            await settle_loop_marks(ledger, ui)
    _report(ui, args.json, name, recorded, refused)
    return EXIT_FAILURE if refused else EXIT_OK


async def _resolved(ledger: Ledger, batches: list["Batch"]) -> list["Batch"]:
    """The batches with each ``sessionId`` read as every command reads a session's name.

    An exact id, or a unique prefix of one, continues that session; a name matching several
    sessions refuses its batch; a name matching none starts a session under it. Batches whose
    names come to the same session are recorded as one, their lines in file order.
    """
    merged: dict[str, Batch] = {}
    resolved: list[Batch] = []
    for batch in batches:
        if batch.session_id is None:
            resolved.append(batch)
            continue
        # A new session per name is usual here: no suggestions (each would read many heads).
        match = await ledger.find_session(batch.session_id, suggest=False)
        if match.several:
            batch.refuse(
                batch.lines[0],
                f"sessionId {batch.session_id!r} matches several sessions "
                f"({', '.join(match.several[:3])}, ...): give more of it",
            )
        elif match.session_id is not None:
            batch.session_id = match.session_id
        known = merged.get(batch.session_id)
        if known is None:
            merged[batch.session_id] = batch
            resolved.append(batch)
        else:
            known.absorb(batch)
    return resolved


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
        shown = recorded if ui.plain else recorded[:MAX_SHOWN]
        for item in shown:
            first, last = item["lines"]
            lines = f"line {first}" if first == last else f"lines {first}-{last}"
            ui.out.print(
                f"{item['recordedIn']}  {plural(item['thoughts'], 'thought')} ({lines})",
                soft_wrap=True,
                highlight=False,
            )
        if len(shown) < len(recorded):
            ui.out.print(
                f"… and {plural(len(recorded) - len(shown), 'more session')} (--json lists "
                "every one)",
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


__all__ = ["MAX_SHOWN", "METADATA", "register", "run"]
