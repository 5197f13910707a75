"""``thoughtledger redact``: remove thoughts' text, keeping every chain, tree and proof valid.

Records a ``thought.redacted`` event per thought (who: the operating-system user unless ``--by``
names someone; why: ``--reason``) and then removes the text from the stored event (see
:mod:`thoughtledger.api.redaction`). Running it again completes a redaction a crash
interrupted.
"""

import argparse

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    command,
    ledger_from,
    plural,
    resolve_session,
    whole,
)
from thoughtledger.api import RedactedThought, RedactionReport, default_author
from thoughtledger.ledger.events import MAX_REASON_CHARS


def register(commands: Commands) -> None:
    """Add the ``redact`` command."""
    parser = command(
        commands,
        "redact",
        run,
    )
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--thought",
        metavar="N",
        type=whole(1),
        help="every event carrying thought number N (main line and branches); "
        "default: every thought of the session",
    )
    which.add_argument(
        "--version", metavar="V", type=whole(1), help="only the thought event at version V"
    )
    parser.add_argument(
        "--reason",
        required=True,
        metavar="TEXT",
        help=f"why (recorded in the ledger; at most {MAX_REASON_CHARS} characters)",
    )
    parser.add_argument(
        "--by", metavar="NAME", help="who redacts (recorded; default: your user name)"
    )
    parser.add_argument(
        "--no-vacuum",
        action="store_true",
        help="on PostgreSQL, leave VACUUM tl_events and tl_search (which reclaim the old row "
        "versions that still hold the text) and the rebuild of the search index's GIN index "
        "(which drops its words) to the operator",
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Redact the chosen thoughts of the session.

    Raises:
        UsageError: Unknown session.
        InvalidInputError: No such thought or version, an empty reason, or only events written
            before redactable events existed (nothing written).
        LedgerError: The ledger failed.
    """
    # Looked up read-only first: an unknown session (or a missing ledger) changes nothing.
    async with ledger_from(args, read_only=True) as ledger:
        session_id = await resolve_session(ledger, args.session)
    async with ledger_from(args, read_only=False) as ledger:
        report = await ledger.redaction.redact(
            session_id,
            thought_number=args.thought,
            version=args.version,
            reason=args.reason,
            by=args.by if args.by is not None else default_author(),
            vacuum=not args.no_vacuum,
        )
    if args.json:
        ui.json(_json(report))
        return EXIT_OK
    numbers = sorted({item.thought_number for item in report.redacted})
    said = ", ".join(f"#{number}" for number in numbers)
    done = (
        f"redacted {plural(len(report.redacted), 'thought event')} ({said}) of session "
        f"{session_id}: {plural(report.stripped, 'text')} removed now"
    )
    if report.recorded == 0:
        done += " (the redaction was recorded before)"
    ui.out.print(done + "; every chain and proof still verifies", highlight=False)
    if report.refused:
        versions = ", ".join(f"v{item.version}" for item in report.refused)
        ui.out.print(
            f"not redacted: {versions}, written before redactable events existed",
            style="yellow",
            highlight=False,
        )
    return EXIT_OK


def _json(report: RedactionReport) -> dict[str, object]:
    def items(chosen: tuple[RedactedThought, ...]) -> list[dict[str, object]]:
        return [
            {"version": i.version, "thoughtNumber": i.thought_number, "eventId": i.event_id}
            for i in chosen
        ]

    return {
        "sessionId": report.session_id,
        "redacted": items(report.redacted),
        "recorded": report.recorded,
        "stripped": report.stripped,
        "refused": items(report.refused),
    }


__all__ = ["register", "run"]
