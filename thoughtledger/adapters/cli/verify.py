"""``thoughtledger verify``: walk the hash chains and name the first bad event of each."""

import argparse
from typing import Any

from thoughtledger.adapters.cli.common import (
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
from thoughtledger.api import Ledger, VerifyReport


def register(commands: Commands) -> None:
    """Add the ``verify`` command."""
    parser = command(commands, "verify", run)
    parser.description = (
        "Walk every hash chain: an event edited, removed or reordered without recomputing the "
        "hashes fails it, naming the first bad event (exit 1). That catches accidents and "
        "careless edits, not whoever can write to the database, who can recompute every hash; "
        "--checkpoint, with a signed checkpoint kept out of their reach, catches that too."
    )
    parser.add_argument(
        "session", metavar="SESSION", nargs="?", help="one session (default: every session)"
    )
    parser.add_argument("--all", action="store_true", help="every session (the default)")
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="also prove the ledger still holds exactly the events this signed checkpoint "
        "covers (catches a consistent rewrite, a deleted session, a cut tail, a reordering)",
    )
    parser.add_argument("--pubkey", metavar="FILE", help="the key that signed --checkpoint")
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
    if (args.checkpoint is None) != (args.pubkey is None):
        raise UsageError("--checkpoint and --pubkey go together")
    signed = None
    if args.checkpoint is not None:
        from thoughtledger.adapters.cli.proofs import read_text, read_verifier

        signed = (read_text(args.checkpoint, "checkpoint"), read_verifier(args.pubkey))
    async with ledger_from(args, read_only=True) as ledger:
        if args.session:
            reports = [await ledger.verify(await resolve_session(ledger, args.session))]
        else:
            reports = await _verify_all(ledger, ui)
        against = await ledger.proofs.verify_checkpoint(*signed) if signed else None
    bad = [report for report in reports if not report.ok]
    events = sum(report.checked for report in reports)
    failed = bool(bad) or (against is not None and not against.ok)
    if args.json:
        answer: dict[str, Any] = {
            "ok": not failed,
            "sessions": len(reports),
            "eventsVerified": events,
            "broken": [_as_json(report) for report in bad],
        }
        if against is not None:
            answer["checkpoint"] = {
                "ok": against.ok,
                "origin": against.checkpoint.origin,
                "treeSize": against.checkpoint.size,
                "held": against.held,
                "reason": against.reason,
            }
        ui.json(answer)
    else:
        for report in bad:
            ui.out.print(f"BROKEN {first_bad(report)}", style="bold red", highlight=False)
        verdict = "every chain verifies" if not bad else f"{len(bad)} broken"
        if against is not None:
            size = against.checkpoint.size
            verdict += (
                f"; the first {plural(size, 'event')} match the signed checkpoint"
                if against.ok
                else f"; CHECKPOINT FAILED: {against.reason}"
            )
        ui.out.print(
            f"{'ok' if not failed else 'FAILED'}: {plural(len(reports), 'session')}, "
            f"{plural(events, 'event')} verified; {verdict}",
            style="green" if not failed else "red",
            highlight=False,
        )
    if bad:
        more = f" (and {plural(len(bad) - 1, 'more session')})" if len(bad) > 1 else ""
        raise CliError(f"tampering detected: {first_bad(bad[0])}{more}")
    if against is not None and not against.ok:
        raise CliError(f"tampering detected: {against.reason}")
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
    with ui.progress("Verifying chains") as step:

        def walked(events: int, total: int) -> None:
            step.bar.update(step.task, completed=events, total=total)

        return await ledger.verify_all(progress=walked)


def _as_json(report: VerifyReport) -> dict[str, Any]:
    return {
        "sessionId": report.session_id,
        "version": report.first_bad_version,
        "eventId": report.first_bad_event_id,
        "position": report.first_bad_position,
        "reason": report.reason,
    }
