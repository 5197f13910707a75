"""``thoughtledger export SESSION... | --all --otlp URL``: sessions as OpenTelemetry traces.

Each session becomes one trace (see :mod:`thoughtledger.adapters.otel.spans`) sent to an OTLP/HTTP
endpoint, such as a collector, Jaeger, Langfuse or Arize Phoenix. Ids derive from the events'
hashes, so sending again sends the same spans. Needs the ``otel`` extra.
"""

import argparse
import importlib.metadata

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Ui,
    UsageError,
    ledger_from,
    plural,
    resolve_session,
)
from thoughtledger.adapters.otel.log import TraceExport
from thoughtledger.adapters.otel.spans import Conventions
from thoughtledger.ledger.masking import mask_url


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--otlp`` to the ``export`` command."""
    parser.add_argument(
        "--otlp",
        metavar="URL",
        help="send the sessions as OpenTelemetry traces to this OTLP/HTTP endpoint "
        "(http://host:4318, or its /v1/traces URL) instead of writing a file",
    )


async def run_otlp(args: argparse.Namespace, ui: Ui) -> int:
    """Send every chosen session as one trace.

    Raises:
        UsageError: -o or --format given with --otlp, or an unknown session.
        InvalidInputError: The URL is not http(s).
        MissingExtraError: The ``otel`` extra is not installed.
        TelemetryExportError: The endpoint refused the spans or cannot be reached.
        LedgerError: The ledger failed.
    """
    from thoughtledger.adapters.otel.exporter import OtlpSender, traces_url

    if args.output is not None or args.format != "jsonl":
        raise UsageError("--otlp sends traces instead of writing a file: drop -o and --format")
    url = traces_url(args.otlp)
    async with ledger_from(args, read_only=True) as ledger:
        chosen = None
        if args.sessions:
            chosen = [await resolve_session(ledger, name) for name in args.sessions]
        export = await TraceExport.of(ledger, Conventions.from_env(), chosen)
        sender = OtlpSender(url, version=_version())
        try:
            with ui.progress("Sending", total=export.sessions) as step:
                sent = await export.send(sender, step)
        finally:
            sender.close()
    sessions = export.sessions
    if args.json:
        ui.json({"endpoint": mask_url(url), "sessions": sessions, "spans": sent})
    else:
        shown = mask_url(url)
        ui.out.print(f"sent {plural(sent, 'span')} of {plural(sessions, 'session')} to {shown}")
    return EXIT_OK


def _version() -> str:
    try:
        return importlib.metadata.version("thoughtledger")
    except importlib.metadata.PackageNotFoundError:
        return ""


__all__ = ["add_options", "run_otlp"]
