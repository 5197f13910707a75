"""``thoughtledger verify``: walk the hash chains and name the first bad event of each."""

import argparse
from typing import Any

from api.cli.common import (
    EXIT_OK,
    CliError,
    Commands,
    Ui,
    UsageError,
    add_json_option,
    command,
    ledger_from,
    plural,
    resolve_session,
)
from api.service import Ledger
from ledger.chain import VerifyReport


def register(commands: Commands) -> None:
    """Add the ``verify`` command."""
    parser = command(
        commands, "verify", "check that no recorded event was edited, removed or reordered", run
    )
    parser.add_argument(
        "session", metavar="SESSION", nargs="?", help="one session (default: every session)"
    )
    parser.add_argument("--all", action="store_true", help="every session (the default)")
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Verify one session or all; exit 1 naming the first bad event when a chain is broken.

    Raises:
        UsageError: Both a session and --all, or an unknown session.
        CliError: A chain does not verify.
        LedgerError: The ledger failed.
    """
    if args.session and args.all:
        raise UsageError("give a SESSION or --all, not both")
    async with ledger_from(args, read_only=True) as ledger:
        if args.session:
            reports = [await ledger.verify(await resolve_session(ledger, args.session))]
        else:
            reports = await _verify_all(ledger, ui)
    bad = [report for report in reports if not report.ok]
    events = sum(report.checked for report in reports)
    if args.json:
        ui.json(
            {
                "ok": not bad,
                "sessions": len(reports),
                "eventsVerified": events,
                "broken": [_as_json(report) for report in bad],
            }
        )
    else:
        for report in bad:
            ui.out.print(f"BROKEN {first_bad(report)}", style="bold red", highlight=False)
        verdict = "every chain verifies" if not bad else f"{len(bad)} broken"
        ui.out.print(
            f"{'ok' if not bad else 'FAILED'}: {plural(len(reports), 'session')}, "
            f"{plural(events, 'event')} verified; {verdict}",
            style="green" if not bad else "red",
            highlight=False,
        )
    if bad:
        more = f" (and {plural(len(bad) - 1, 'more session')})" if len(bad) > 1 else ""
        raise CliError(f"tampering detected: {first_bad(bad[0])}{more}")
    return EXIT_OK


def first_bad(report: VerifyReport) -> str:
    """Name a broken session's first bad event, and why it is bad."""
    where = [f"version {report.first_bad_version}"]
    if report.first_bad_event_id is not None:
        where.append(f"event {report.first_bad_event_id}")
    if report.first_bad_position is not None:
        where.append(f"position {report.first_bad_position}")
    return f"session {report.session_id}: {', '.join(where)}: {report.reason}"


async def _verify_all(ledger: Ledger, ui: Ui) -> list[VerifyReport]:
    heads = await ledger.all_heads()
    reports: list[VerifyReport] = []
    with ui.progress("Verifying chains", total=len(heads)) as step:
        for head in heads:
            reports.append(await ledger.verify(head.session_id))
            step.advance()
    return reports


def _as_json(report: VerifyReport) -> dict[str, Any]:
    return {
        "sessionId": report.session_id,
        "version": report.first_bad_version,
        "eventId": report.first_bad_event_id,
        "position": report.first_bad_position,
        "reason": report.reason,
    }
