"""``thoughtledger export --format csv|parquet``: one flat row per thought, for dataframes.

With ``--annotations``, one row per annotation instead (the ``tl_annotations`` view's columns);
with ``--actions``, one row per action an agent took (the ``tl_actions`` view's).

The rows are those of the views (see :mod:`thoughtledger.ledger.store.sql_views`), folded from
the log page by page (:meth:`.Transfer.thought_rows` and its siblings), so the
export runs in bounded memory on every backend, an older schema included. CSV needs only the
standard library; Parquet needs the ``parquet`` extra
(:mod:`thoughtledger.adapters.cli.parquet_out`).
"""

import argparse
import csv
import json
import sys
from typing import Any, TextIO

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Ui,
    UsageError,
    ledger_from,
    plural,
    resolve_session,
)
from thoughtledger.adapters.cli.outfile import atomic_file, exists, output_path, standard_output
from thoughtledger.api import Ledger
from thoughtledger.projections.action_rows import ACTION_COLUMN_TYPES
from thoughtledger.projections.annotation_rows import ANNOTATION_COLUMN_TYPES
from thoughtledger.projections.thought_rows import THOUGHT_COLUMN_TYPES

ROW_FORMATS = ("csv", "parquet")
"""The formats of one row per thought (``jsonl``, the default, is the lossless export)."""

_KINDS = {
    # which rows: (the default file name, what a row is, its columns and their types)
    "thoughts": ("thoughts.csv", "thought", THOUGHT_COLUMN_TYPES),
    "annotations": ("annotations.csv", "annotation", ANNOTATION_COLUMN_TYPES),
    "actions": ("actions.csv", "action", ACTION_COLUMN_TYPES),
}


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--format`` to the ``export`` command."""
    parser.add_argument(
        "--format",
        choices=("jsonl", *ROW_FORMATS, "html", "mermaid"),
        default="jsonl",
        help="jsonl: every event, hashes included, to import elsewhere (default); "
        "csv or parquet: one row per thought, the columns of the tl_thoughts view; "
        "html: the sessions as one self-contained web page (tree, version slider; offline); "
        "mermaid: each session's graph of thoughts, revisions and branches (a flowchart)",
    )
    rows = parser.add_mutually_exclusive_group()
    rows.add_argument(
        "--annotations",
        action="store_true",
        help="with --format csv or parquet: one row per annotation of a thought instead, "
        "the columns of the tl_annotations view",
    )
    rows.add_argument(
        "--actions",
        action="store_true",
        help="with --format csv or parquet: one row per action an agent took instead (a tool "
        "call captured from its telemetry), the columns of the tl_actions view",
    )


def check_options(args: argparse.Namespace) -> None:
    """Refuse ``--annotations`` or ``--actions`` with a format that has no rows.

    Raises:
        UsageError: One of them was given with another format.
    """
    for name in ("annotations", "actions"):
        if getattr(args, name) and (args.format not in ROW_FORMATS or args.otlp is not None):
            raise UsageError(f"--{name} lists rows: give it with --format csv or parquet")


def _kind(args: argparse.Namespace) -> str:
    return "annotations" if args.annotations else "actions" if args.actions else "thoughts"


async def run_rows(args: argparse.Namespace, ui: Ui) -> int:
    """Write one row per thought of the chosen sessions as CSV or Parquet.

    Raises:
        UsageError: Parquet to standard output, an unknown session, or an output path that is
            a directory, lies in no directory, or is the ledger itself.
        CliError: The file exists (without --force), cannot be written, or pyarrow is missing.
        LedgerError: The ledger failed.
    """
    default, noun, _types = _KINDS[_kind(args)]
    target = None if args.output == "-" else output_path(args.output, default)
    if target is None and args.format == "parquet":
        raise UsageError("Parquet is a binary file: name one with -o FILE.parquet")
    async with ledger_from(args, read_only=True) as ledger:
        if target is not None:
            if ledger.transfer.is_own_file(target):
                raise UsageError(f"{target} is the ledger's own database; choose another file")
            if not args.force and (target.exists() or target.is_symlink()):
                raise exists(target)
        wanted = {await resolve_session(ledger, name) for name in args.sessions} or None
        total = sum(head.version for head in await ledger.all_heads())
        if target is None:
            with standard_output() as out:
                rows = await _write(ledger, args, out, ui, total, wanted)
        else:
            with atomic_file(target, overwrite=args.force) as out:
                rows = await _write(ledger, args, out, ui, total, wanted)
    where = "standard output" if target is None else str(target)
    if args.json:
        summary = {"file": where, "format": args.format, "rows": rows}
        if target is None:
            sys.stderr.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
        else:
            ui.json(summary)
    else:
        console = ui.err if target is None else ui.out
        console.print(f"exported {plural(rows, noun)} as {args.format} to {where}")
    return EXIT_OK


async def _write(
    ledger: Ledger,
    args: argparse.Namespace,
    out: TextIO,
    ui: Ui,
    total: int,
    wanted: set[str] | None,
) -> int:
    """Stream every page of rows to ``out``; return how many rows were written."""
    written = 0
    kind = _kind(args)
    types = _KINDS[kind][2]
    if args.format == "parquet":
        from thoughtledger.adapters.cli.parquet_out import ParquetRows

        out.flush()
        sink: Any = ParquetRows(out.buffer, types)  # the text file's own bytes
    else:
        sink = _CsvRows(out, tuple(types))
    transfer = ledger.transfer
    pages = {
        "thoughts": transfer.thought_rows,
        "annotations": transfer.annotation_rows,
        "actions": transfer.action_rows,
    }[kind]()
    try:
        with ui.progress("Exporting", total=total) as step:
            async for events, rows in pages:
                if wanted is not None:
                    rows = [row for row in rows if row[1] in wanted]
                sink.write(rows)
                written += len(rows)
                step.advance(events)
    finally:
        sink.close()
    return written


class _CsvRows:
    """CSV with a header row; booleans as ``true``/``false``, unknowns as empty fields."""

    def __init__(self, out: TextIO, columns: tuple[str, ...]) -> None:
        self._writer = csv.writer(out, lineterminator="\n")
        self._writer.writerow(columns)

    def write(self, rows: list[tuple[Any, ...]]) -> None:
        self._writer.writerows(
            [("true" if v else "false") if isinstance(v, bool) else v for v in row] for row in rows
        )

    def close(self) -> None:
        """Nothing to finish: every row is written as it comes."""


__all__ = ["ROW_FORMATS", "add_options", "check_options", "run_rows"]
