"""``thoughtledger annotate``: record a reviewer's finding on a thought (a label, a score, a note).

Appends a ``thought.annotated`` event to the session (who: the operating-system user unless
``--by`` names someone); ``show``, ``stats``, the exports and the views show it, and ``redact
--version V`` removes its note (see :mod:`thoughtledger.api.annotation`).
"""

import argparse

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    command,
    ledger_from,
    resolve_session,
    whole,
)
from thoughtledger.api import default_author
from thoughtledger.ledger.events import MAX_LABEL_CHARS, MAX_NOTE_CHARS


def register(commands: Commands) -> None:
    """Add the ``annotate`` command."""
    parser = command(
        commands,
        "annotate",
        run,
    )
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    parser.add_argument("thought", metavar="THOUGHT", type=whole(1), help="the thought's number")
    parser.add_argument(
        "--label",
        required=True,
        metavar="L",
        help=f"what was found (letters, digits and _.:/-, at most {MAX_LABEL_CHARS})",
    )
    parser.add_argument(
        "--note",
        metavar="TEXT",
        help=f"why, in words (at most {MAX_NOTE_CHARS} characters; redactable)",
    )
    parser.add_argument("--score", metavar="N", type=float, help="a number the reviewer gives")
    parser.add_argument(
        "--by", metavar="NAME", help="who annotates (recorded; default: your user name)"
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Annotate the thought.

    Raises:
        UsageError: Unknown session.
        InvalidInputError: No such thought, or a malformed label, note or score (nothing
            written).
        LedgerError: The ledger failed.
    """
    # Looked up read-only first: an unknown session (or a missing ledger) changes nothing.
    async with ledger_from(args, read_only=True) as ledger:
        session_id = await resolve_session(ledger, args.session)
    async with ledger_from(args, read_only=False) as ledger:
        annotation = await ledger.annotate(
            session_id,
            args.thought,
            label=args.label,
            note=args.note,
            score=args.score,
            by=args.by if args.by is not None else default_author(),
        )
    if args.json:
        ui.json(
            {
                "sessionId": session_id,
                "version": annotation.version,
                "thoughtNumber": annotation.thought_number,
                "label": annotation.label,
                "score": annotation.score,
                "note": annotation.note or None,
                "by": annotation.by,
            }
        )
        return EXIT_OK
    ui.out.print(
        f"annotated thought #{annotation.thought_number} of session {session_id} as "
        f"{annotation.label!r} (version {annotation.version})",
        highlight=False,
    )
    return EXIT_OK


__all__ = ["register", "run"]
