"""``thoughtledger demo``: record a realistic session, show it, and say how to look further.

It records into ``--db`` when given, else into ``demo.db`` in the user's cache folder (one file,
a session more each time, rather than a folder left behind in the temporary folder per run);
never into ``$THOUGHTLEDGER_URL``'s ledger, so trying the demo cannot add a sample to a real
ledger unless ``--db`` names it. A URL holding a password is never printed: the commands it
suggests then read the URL from ``$THOUGHTLEDGER_URL``.
"""

import argparse
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from thoughtledger.adapters.cli.catalogue import summary
from thoughtledger.adapters.cli.common import (
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    shared_options,
)
from thoughtledger.adapters.cli.first_run import demo_path
from thoughtledger.adapters.cli.tree import session_tree
from thoughtledger.api import open_ledger
from thoughtledger.ledger.masking import mask_url

METADATA = {"agent": "sre-assistant", "client": "thoughtledger demo", "transport": "in-process"}

# An on-call agent works out why checkout slows down every afternoon: it revises a premature
# conclusion, explores two fixes on branches, raises its estimate, and finishes with a plan.
THOUGHTS: list[dict[str, Any]] = [
    {
        "thought": "Checkout p95 latency jumps from 180 ms to 2.4 s every day around 14:00 UTC. "
        "Candidates: load, a scheduled job, or a slow dependency.",
        "thought_number": 1,
        "total_thoughts": 5,
    },
    {
        "thought": "Traffic at 14:00 is only 15% above the morning peak, which the service "
        "handles easily, so load alone does not explain it.",
        "thought_number": 2,
        "total_thoughts": 5,
    },
    {
        "thought": "The nightly-report job was moved to 14:00 last month and runs heavy "
        "aggregates on the same Postgres primary. Suspect lock contention on orders.",
        "thought_number": 3,
        "total_thoughts": 5,
    },
    {
        "thought": "Correction: the 15% was for all endpoints. Checkout alone rises 60% at "
        "14:00 (EU lunch), so load still contributes, on top of the job.",
        "thought_number": 4,
        "total_thoughts": 6,
        "is_revision": True,
        "revises_thought": 2,
    },
    {
        "thought": "Option A: point the report at the read replica. If p95 stays flat at "
        "14:00 tomorrow, the job was the cause.",
        "thought_number": 5,
        "total_thoughts": 7,
        "branch_from_thought": 3,
        "branch_id": "replica",
    },
    {
        "thought": "Option B: the report scans orders for 40 s; an index on "
        "orders(created_at) cuts that to 300 ms.",
        "thought_number": 5,
        "total_thoughts": 7,
        "branch_from_thought": 3,
        "branch_id": "index",
    },
    {
        "thought": "The index builds CONCURRENTLY in about 4 minutes on a production copy, "
        "without blocking writes.",
        "thought_number": 6,
        "total_thoughts": 7,
        "branch_from_thought": 3,
        "branch_id": "index",
    },
    {
        "thought": "Only the replica takes the job off checkout's path entirely; the index is "
        "cheap insurance. Do both, replica first.",
        "thought_number": 7,
        "total_thoughts": 8,
    },
    {
        "thought": "Plan: move the report to the replica today, add the index tomorrow, alert "
        "on checkout p95 > 500 ms at 14:00, and add 60% headroom for the lunch peak.",
        "thought_number": 8,
        "total_thoughts": 8,
        "next_thought_needed": False,
    },
]


def register(commands: Commands) -> None:
    """Add the ``demo`` command."""
    parser = commands.add_parser(
        "demo",
        help=summary("demo"),
        description=(
            "Record a sample session (a revision, two branches, a raised estimate), show it, and "
            "print the commands to look at it further. It goes into --db FILE when given "
            "(created if missing; an existing ledger gets one more session), else into demo.db "
            "in your cache folder (one more session each time). $THOUGHTLEDGER_URL is never "
            "used: a demo lands in a ledger only when --db names it."
        ),
    )
    shared_options(parser).add_argument(
        "--db",
        metavar="FILE",
        help="where to record: a file path (demo.db), sqlite:///path.db or "
        "postgresql://user@host/db (default: demo.db in your cache folder; $THOUGHTLEDGER_URL "
        "is not used)",
    )
    add_json_option(parser)
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Record the sample session and print its tree and what to try next.

    Raises:
        LedgerError: The ledger failed.
    """
    db: str = args.db or str(demo_path())
    async with open_ledger(db, ttl=None) as ledger:
        session = await ledger.new_session(metadata=METADATA)
        for thought in THOUGHTS:
            await session.think(**{"next_thought_needed": True, **thought})
        state = await session.state()
        marks = await ledger.loops.marks(state.session_id)
    where = _where(db)
    persisted = urlsplit(db).scheme != "memory"
    secret = mask_url(db) != db
    commands = _suggested(state.session_id, None if secret else db)
    if args.json:
        ui.json(
            {
                "db": mask_url(db),
                "path": where,
                "sessionId": state.session_id,
                "events": state.version,
                "next": commands if persisted else [],
            }
        )
        return EXIT_OK
    ui.out.print(f"Recorded a sample session in {where}\n", highlight=False, soft_wrap=True)
    ui.show(session_tree(state, marks=marks))
    if not persisted:
        ui.out.print("\n(memory:// keeps nothing: give --db FILE to look at it again)")
        return EXIT_OK
    ui.out.print("\nNext, try:", style="bold")
    if secret:
        # The URL holds a password: neither printed here nor put on a command line, where
        # every user of the machine could read it (ps).
        ui.out.print(
            "  (with $THOUGHTLEDGER_URL set to the ledger's URL: it holds a password, so it is not "
            "shown, and belongs in the environment rather than on a command line)",
            style="dim",
            highlight=False,
            soft_wrap=True,
        )
    for line in commands:
        # soft_wrap: a command cut by a newline at the terminal's edge no longer pastes whole.
        ui.out.print(f"  {line}", highlight=False, soft_wrap=True)
    return EXIT_OK


def _suggested(session_id: str, db: str | None) -> list[str]:
    """The commands to look further, with ``--db`` unless the URL is to stay unprinted."""
    short = session_id[:18]  # a unique prefix is enough, and easier on the eye
    option = "" if db is None else f" --db {shlex.quote(db)}"
    return [
        f"thoughtledger show {short}{option} --at 5",
        f"thoughtledger diff {short} 4 7{option}",
        f"thoughtledger replay {short}{option}",
        f"thoughtledger stats{option}",
        f"thoughtledger verify{option}",
    ]


def _where(db: str) -> str:
    """The file a SQLite ledger is in (absolute), or the URL with any password hidden."""
    parts = urlsplit(db)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        return str(Path(parts.path if scheme == "file" else db).resolve())
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        # sqlite:///relative.db and sqlite:////absolute.db, as SQLAlchemy reads them.
        path = db.split("://", 1)[1].split("?", 1)[0].removeprefix("/")
        return str(Path(path).resolve())
    return mask_url(db)
