"""``thoughtledger export``: sessions to a JSON Lines file, losslessly, hashes included.

The file ends with a manifest (see :mod:`thoughtledger.api.transfer.jsonl`), written after
every
event, so that an import can tell a whole export from one cut short. ``-o -`` writes to standard
output; the summary then goes to standard error.
"""

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from thoughtledger.adapters.cli import export_otlp, export_rows
from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Step,
    Ui,
    UsageError,
    add_json_option,
    command,
    ledger_from,
    plural,
    resolve_session,
)
from thoughtledger.adapters.cli.outfile import atomic_file, exists, output_path, standard_output
from thoughtledger.api import Ledger, ManifestSession, manifest_line, to_line


def register(commands: Commands) -> None:
    """Add the ``export`` command."""
    parser = command(commands, "export", run)
    parser.add_argument("sessions", metavar="SESSION", nargs="*", help="sessions to export")
    parser.add_argument("--all", action="store_true", help="export every session")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the file to write (FILE.jsonl), or - for standard output",
    )
    # Before --format html, the page had an option of its own: still taken, no longer shown.
    parser.add_argument("--html", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    add_json_option(parser)
    export_rows.add_options(parser)
    export_otlp.add_options(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Write the sessions' events and the manifest; a file appears only once complete.

    Raises:
        UsageError: No sessions and no --all (or both), an unknown session, --html with -o or
            --format, --annotations or --actions without rows, or an output path that is a
            directory, lies in no directory, or is the ledger itself.
        CliError: The file exists (without --force), or cannot be written (nothing is left
            behind).
        LedgerError: The ledger failed.
    """
    if bool(args.sessions) == args.all:
        raise UsageError("name the sessions to export, or give --all (not both)")
    export_rows.check_options(args)
    if args.otlp is not None:
        return await export_otlp.run_otlp(args, ui)
    if args.format == "html" and args.html is None:
        if args.output is None or args.output == "-":
            raise UsageError("name the page to write: --format html -o FILE.html")
        return await _html(args, ui, args.output)
    if args.html is not None:
        if args.output is not None:
            raise UsageError("give -o FILE or --html FILE.html, not both")
        if args.format != "jsonl":  # else the page would be written and --format dropped
            raise UsageError(
                f"--html writes a web page, not {args.format}: drop --format, or -o FILE "
                f"--format {args.format} for rows"
            )
        return await _html(args, ui, args.html)
    if args.output is None:
        raise UsageError(
            "name the file to write with -o FILE (or -o - for standard output), "
            "or --format html -o FILE.html for the session page"
        )
    if args.format in export_rows.ROW_FORMATS:
        return await export_rows.run_rows(args, ui)
    if args.format == "mermaid":
        return await _mermaid(args, ui)
    target = None if args.output == "-" else output_path(args.output, "ledger.jsonl")
    async with ledger_from(args, read_only=True) as ledger:
        if target is not None:
            if ledger.transfer.is_own_file(target):
                raise UsageError(f"{target} is the ledger's own database; choose another file")
            if not args.force and (target.exists() or target.is_symlink()):
                raise exists(target)
        if args.sessions:
            chosen = await _chosen(ledger, args.sessions)
        else:
            chosen = [head.session_id for head in await ledger.all_heads()]
        with _opened(target, force=args.force) as out:
            with ui.progress("Exporting", total=len(chosen)) as step:
                manifest = await _write(ledger, chosen, out, step)
            out.write(manifest_line(manifest))
    events = sum(entry.events for entry in manifest)
    where = "standard output" if target is None else str(target)
    # With -o -, standard output is the export: the summary goes beside the progress bar.
    if args.json:
        summary = {"file": where, "sessions": len(manifest), "events": events}
        if target is None:
            sys.stderr.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
        else:
            ui.json(summary)
    else:
        console = ui.err if target is None else ui.out
        console.print(
            f"exported {plural(events, 'event')} of {plural(len(manifest), 'session')} to {where}"
        )
    return EXIT_OK


@contextlib.contextmanager
def _opened(target: Path | None, *, force: bool) -> Iterator[TextIO]:
    if target is None:
        with standard_output() as out:
            yield out
    else:
        with atomic_file(target, overwrite=force) as out:
            yield out


async def _chosen(ledger: Ledger, given: list[str]) -> list[str]:
    chosen: list[str] = []
    for name in given:
        session_id = await resolve_session(ledger, name)
        if session_id not in chosen:
            chosen.append(session_id)
    return chosen


async def _write(
    ledger: Ledger, chosen: list[str], out: TextIO, step: Step
) -> list[ManifestSession]:
    """Write each session's events to ``out``; return the manifest's entries.

    A long session comes in several slices (see :meth:`.Transfer.export`): its entry grows with
    each, and the progress moves on when the next session begins.
    """
    manifest: list[ManifestSession] = []
    begun = 0
    async with contextlib.aclosing(ledger.transfer.export(chosen)) as slices:
        async for records in slices:
            # Sessions start at version 1, so a slice starting there (or empty) is a new one.
            if not records or records[0].version == 1:
                if begun:
                    step.advance()
                begun += 1
            for record in records:
                out.write(to_line(record))
            if records:  # always, as sessions never lose events; a manifest entry needs one
                last = records[-1]
                held = 0
                if (
                    records[0].version > 1
                    and manifest
                    and manifest[-1].session_id == last.session_id
                ):
                    held = manifest.pop().events
                manifest.append(
                    ManifestSession(
                        session_id=last.session_id,
                        version=last.version,
                        hash=last.hash,
                        events=held + len(records),
                    )
                )
    if begun:
        step.advance()
    return manifest


async def _mermaid(args: argparse.Namespace, ui: Ui) -> int:
    """Write each session's graph as a Mermaid flowchart (one after another)."""
    from thoughtledger.adapters.ui.graph import mermaid, session_graph
    from thoughtledger.adapters.ui.payload import session_payload

    target = None if args.output == "-" else output_path(args.output, "session.mmd")
    async with ledger_from(args, read_only=True) as ledger:
        if target is not None and not args.force and (target.exists() or target.is_symlink()):
            raise exists(target)
        chosen = await _chosen(ledger, args.sessions) if args.sessions else []
        chosen = chosen or [head.session_id for head in await ledger.all_heads()]
        charts = [
            mermaid(
                session_graph(session_payload(sid, await ledger.events(sid), ())["events"]),
                title=f"session {sid}",
            )
            for sid in chosen
        ]
    with _opened(target, force=args.force) as out:
        out.write("\n".join(charts))
    if target is not None:
        ui.out.print(f"exported the graph of {plural(len(charts), 'session')} to {target}")
    return EXIT_OK


async def _html(args: argparse.Namespace, ui: Ui, given: str) -> int:
    """Write the sessions' page: each session's events embedded, its script allowed by hash."""
    from thoughtledger.adapters.ui.export import html_export
    from thoughtledger.adapters.ui.payload import session_payload

    target = output_path(given, "session.html")
    async with ledger_from(args, read_only=True) as ledger:
        if ledger.transfer.is_own_file(target):
            raise UsageError(f"{target} is the ledger's own database; choose another file")
        if not args.force and (target.exists() or target.is_symlink()):
            raise exists(target)
        chosen = (
            await _chosen(ledger, args.sessions)
            if args.sessions
            else [head.session_id for head in await ledger.all_heads()]
        )
        payloads = []
        with ui.progress("Exporting", total=len(chosen)) as step:
            for session_id in chosen:
                records = await ledger.events(session_id)
                marks = await ledger.loops.marks(session_id, to_version=records[-1].version)
                payloads.append(session_payload(session_id, records, marks))
                step.advance()
    title = f"thoughtledger: session {chosen[0]}" if len(chosen) == 1 else "thoughtledger sessions"
    with atomic_file(target, overwrite=args.force) as out:
        out.write(html_export(payloads, title=title))
    events = sum(len(payload["events"]) for payload in payloads)
    if args.json:
        ui.json({"file": str(target), "sessions": len(payloads), "events": events})
    else:
        ui.out.print(
            f"exported {plural(events, 'event')} of {plural(len(payloads), 'session')} "
            f"to {target} (a web page)"
        )
    return EXIT_OK
