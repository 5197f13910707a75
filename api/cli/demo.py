"""``thoughtledger demo``: record a realistic session into a scratch ledger, then show it."""

import argparse
import tempfile
from pathlib import Path
from typing import Any

from api.bootstrap import open_ledger
from api.cli.common import EXIT_OK, Commands, Ui, add_json_option, command
from api.cli.tree import session_tree

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
    parser = command(
        commands, "demo", "record a sample session into a scratch ledger and show it", run
    )
    parser.set_defaults(db=None)
    parser.description = (
        "Record a sample session (revisions, branches, a raised estimate) and show it. It goes "
        "into a new scratch SQLite file unless --db names a ledger; $THOUGHTLEDGER_URL is "
        "ignored, so a demo never lands in your real ledger by accident."
    )
    add_json_option(parser)


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Record the sample session and print its tree and what to try next.

    Raises:
        LedgerError: The ledger failed.
    """
    url = args.db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='thoughtledger-demo-')) / 'demo.db'}"
    async with open_ledger(url, ttl=None) as ledger:
        session = await ledger.new_session(metadata=METADATA)
        for thought in THOUGHTS:
            await session.think(**{"next_thought_needed": True, **thought})
        state = await session.state()
    if args.json:
        ui.json({"db": url, "sessionId": state.session_id, "events": state.version})
        return EXIT_OK
    ui.out.print(f"Recorded a sample session in {url}\n")
    ui.show(session_tree(state))
    short = state.session_id[:18]  # a unique prefix is enough, and easier on the eye
    ui.out.print("\nNext, try:", style="bold")
    for line in (
        f"thoughtledger show {short} --db {url} --at 4",
        f"thoughtledger replay {short} --db {url}",
        f"thoughtledger diff {short} 3 6 --db {url}",
        f"thoughtledger stats --db {url}",
        f"thoughtledger verify --db {url}",
    ):
        ui.out.print(f"  {line}", highlight=False)
    return EXIT_OK
