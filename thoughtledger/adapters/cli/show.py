"""``thoughtledger show``: one session as a tree, now or as it was at a version or a time.

A long session, or any session given ``--limit``/``--after``, is shown a page at a time (see
:meth:`thoughtledger.api.Ledger.history`): memory and output are bounded by the page, not
the session. A page carries the annotations of its thoughts, as of the page's version, and the
actions an agent took after them; a whole session, each action under the thought it followed.
"""

import argparse
import shlex
from collections.abc import Mapping
from datetime import datetime
from itertools import chain

from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    check_version,
    command,
    ledger_from,
    parse_time,
    resolve_session,
    whole,
)
from thoughtledger.adapters.cli.lineage import lineage_json, lineage_lines
from thoughtledger.adapters.cli.tree import page_lines, session_json, session_tree
from thoughtledger.adapters.cli.verify import first_bad
from thoughtledger.api import HistoryPage, Ledger
from thoughtledger.projections.actions import action_json
from thoughtledger.projections.annotations import annotation_json, on_page
from thoughtledger.projections.entries import Annotation, ForkPoint
from thoughtledger.projections.state import SessionState
from thoughtledger.projections.usage import usage_by_model, usage_note


def register(commands: Commands) -> None:
    """Add the ``show`` command."""
    parser = command(commands, "show", run)
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--at", metavar="VERSION", type=whole(1), help="as it was after its first VERSION events"
    )
    when.add_argument(
        "--as-of",
        metavar="TIME",
        type=parse_time,
        help="as it was at TIME (UTC unless a zone is given: 2024-05-01T14:02, 14:02, 2h)",
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=whole(1),
        help="show the first N thoughts (or the N after --after) as a list; "
        f"{PAGE} when only --after is given or the session is long",
    )
    parser.add_argument(
        "--after",
        metavar="CURSOR",
        help="continue after the page that printed this cursor (it keeps that page's --at/--as-of)",
    )
    parser.epilog = (
        f"A session of more than {WHOLE_MAX:,} events is shown a page at a time even without "
        f"--limit: its first {PAGE} thoughts, then on stderr the exact command for the next page. "
        "Piped or not, the output stays one page: bounded by the page, never by the session "
        "(to write a whole session, use export)."
    )
    add_json_option(parser)


PAGE = 100
"""Thoughts on a page of ``show`` when ``--limit`` is not given."""

WHOLE_MAX = 10_000
"""Longest session (in events) ``show`` draws whole as a tree; longer ones are paged."""


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the session's tree (or JSON), or one page of its thoughts.

    Raises:
        UsageError: Unknown session, or a version past its end.
        LedgerError: The ledger failed, or a bad cursor.
    """
    async with ledger_from(args, read_only=True) as ledger:
        session_id = await resolve_session(ledger, args.session)
        await check_version(ledger, session_id, args.at, f"--at {args.at}")
        paged = args.limit is not None or args.after is not None
        if not paged:
            head = await ledger.head(session_id)
            paged = head is not None and head.version > WHOLE_MAX
        if paged:
            page = await ledger.history(
                session_id,
                limit=args.limit or PAGE,
                after=args.after,
                as_of_version=args.at,
                as_of_time=args.as_of,
            )
            notes = await _page_notes(ledger, page)
            facts = await ledger.facts(session_id)
            point = facts.fork if facts is not None else None
        else:
            state, latest = await ledger.state_with_latest(
                session_id, as_of_version=args.at, as_of_time=args.as_of
            )
            marks = await ledger.loops.marks(session_id, to_version=state.version)
            actions = await ledger.actions(session_id, as_of_version=state.version)
            # What is shown is read from rows anyone with the file could have edited: said
            # before anything is shown, as verify and the browser view's badge say it.
            report = await ledger.verify(session_id)
            if not report.ok:
                ui.err.print(
                    f"thoughtledger: warning: this session's chain does not verify, so what "
                    f"follows may have been edited: {first_bad(report)}",
                    style="bold red",
                    highlight=False,
                    soft_wrap=True,
                )
        forks = [head.session_id for head in await ledger.forks(session_id)]
    if paged:
        return _print_page(args, ui, page, notes, point)
    if args.json:
        ui.json({**session_json(state, marks, actions), **lineage_json(state, forks)})
        return EXIT_OK
    ui.show(session_tree(state, marks=marks, actions=actions))
    for line in lineage_lines(state, forks):
        ui.out.print(line, style="dim", highlight=False)
    written = [entry.generation for entry in state.thoughts if entry.generation is not None]
    for usage in usage_by_model(written):
        ui.out.print(f"written by {usage_note(usage)}", style="dim")
    if latest != state.version:
        ui.out.print(
            f"(as of version {state.version} of {latest}; without --at/--as-of: the session now)",
            style="dim",
        )
    return EXIT_OK


async def _page_notes(ledger: Ledger, page: HistoryPage) -> Mapping[int, tuple[Annotation, ...]]:
    """The annotations of the thoughts on ``page``, as they were at the page's version.

    A session's facts hold every annotation (they are few), whatever its length: read from the
    session's head, not from its history.

    Raises:
        LedgerError: The ledger failed.
    """
    facts = await ledger.facts(page.session_id)
    numbers = (item["thoughtNumber"] for item in page.items)
    return on_page(facts.annotations if facts else (), numbers, page.version)


def _print_page(
    args: argparse.Namespace,
    ui: Ui,
    page: HistoryPage,
    notes: Mapping[int, tuple[Annotation, ...]],
    point: ForkPoint | None,
) -> int:
    if args.json:
        ui.json(
            {
                "sessionId": page.session_id,
                "version": page.version,
                "latestVersion": page.latest_version,
                "status": page.status,
                "thoughtHistoryLength": page.thought_count,
                "thoughts": page.items,
                "annotations": [
                    annotation_json(note)
                    for note in sorted(chain(*notes.values()), key=lambda note: note.version)
                ],
                "actions": [action_json(action) for action in page.actions],
                "more": page.more,
                "nextCursor": page.next_cursor,
                "forkOf": None
                if point is None
                else {"sessionId": point.session_id, "version": point.version, "hash": point.hash},
            }
        )
    else:
        for line in page_lines(page, notes, forked=point is not None):
            ui.out.print(line, soft_wrap=True)
        if point is not None:
            # A page lists the fork's own thoughts, in its own versions; its first ones are
            # its source's, in the source's, and shown there.
            ui.out.print(
                f"forked from {point.session_id} at version {point.version}: its earlier "
                f"thoughts are the source's (thoughtledger show {point.session_id} --at "
                f"{point.version})",
                style="dim",
                highlight=False,
                soft_wrap=True,
            )
    if page.next_cursor is not None:
        command = ["thoughtledger", "show", page.session_id, "--after", page.next_cursor]
        if args.limit is not None:
            command += ["--limit", str(args.limit)]
        if args.json:
            command.append("--json")
        if args.db is not None:
            command += ["--db", args.db]
        if args.read_url is not None:
            command += ["--read-url", args.read_url]
        ui.err.print(f"more thoughts: {shlex.join(command)}", soft_wrap=True, highlight=False)
    return EXIT_OK


async def load(
    ledger: Ledger, given: str, *, at: int | None, as_of: datetime | None
) -> tuple[SessionState, int]:
    """The session ``given`` names, as of ``at`` or ``as_of``, and the version it is at now.

    Raises:
        UsageError: Unknown session.
        SessionNotFoundError: No events yet at ``as_of``.
        InvalidInputError: A version past its end.
        LedgerError: The ledger failed.
    """
    session_id = await resolve_session(ledger, given)
    return await ledger.state_with_latest(session_id, as_of_version=at, as_of_time=as_of)
