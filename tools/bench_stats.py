"""Benchmark of `thoughtledger stats`: our analytics against a raw payload loop over the same rows.

Usage:
    tools/bench_stats.py [--events N] [--json FILE]

The ledger is generated straight into an SQLite file (executemany, valid hash chains, realistic
sessions with revisions, branches, several agents and days), so a million events take seconds.
"""

import argparse
import asyncio
import json
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from thoughtledger.api.figures import ledger_stats
from thoughtledger.ledger.chain import GENESIS_HASH, compute_hash
from thoughtledger.ledger.content import strip
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.events import REDACTABLE_FROM, THOUGHT_TYPES
from thoughtledger.ledger.store.sqlite import SqliteEventStore

AGENTS = [("planner", "claude-desktop"), ("coder", "cursor"), ("reviewer", "claude-code")]
EPOCH = datetime(2024, 5, 1, tzinfo=UTC)
Row = tuple[Any, ...]


def _session(
    rng: random.Random, index: int, budget: int, lengths: tuple[int, int]
) -> list[tuple[str, str]]:
    """The (type, payload) pairs of one plausible session, at most ``budget`` events long."""
    agent, client = AGENTS[index % len(AGENTS)]
    metadata = f'{{"agent":"{agent}","client":"{client}","transport":"stdio"}}'
    events = [("session.started", f'{{"metadata":{metadata}}}')]
    total = rng.randint(3, 8)
    length = min(budget - 1, rng.randint(*lengths))
    branch_from = rng.randint(1, 3) if rng.random() < 0.3 else 0
    for number in range(1, length + 1):
        more = "false" if number == length and rng.random() < 0.7 else "true"
        raised = f',"requested_total_thoughts":{total}' if number > total else ""
        total = max(total, number)
        kind, extra = "thought.recorded", ""
        if number > 2 and rng.random() < 0.15:
            kind = "thought.revised"
            extra = f',"is_revision":true,"revises_thought":{rng.randint(1, number - 1)}'
        elif branch_from and number > branch_from and rng.random() < 0.25:
            kind = "branch.opened"
            extra = f',"branch_from_thought":{branch_from},"branch_id":"alt-{number}"'
        # Field order as the event models serialise them (see
        # thoughtledger.ledger.codec.encode_payload).
        payload = (
            f'{{"thought":"Step {number}: weigh the evidence and decide what to check next.",'
            f'"thought_number":{number},"total_thoughts":{total},"next_thought_needed":{more}'
            f"{raised}{extra}}}"
        )
        events.append((kind, payload))
    return events


def _time_text(micros: int) -> str:
    """``format_time`` of EPOCH + ``micros``, without a datetime per event."""
    seconds, fraction = divmod(micros, 1_000_000)
    days, seconds = divmod(seconds, 86_400)
    day = _DAYS.get(days)
    if day is None:
        day = _DAYS[days] = format_time(EPOCH + timedelta(days=days))[:10]
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{day}T{hours:02d}:{minutes:02d}:{seconds:02d}.{fraction:06d}Z"


_DAYS: dict[int, str] = {}


def generate_rows(
    events: int, *, seed: int = 7, lengths: tuple[int, int] = (4, 16)
) -> Iterator[tuple[list[Row], Row]]:
    """Yield each generated session as (its ``tl_events`` rows, its head: id, version, hash,
    first and last times).

    Sessions hold between ``lengths[0]`` and ``lengths[1]`` thoughts (plus their start).
    """
    rng = random.Random(seed)
    written, index = 0, 0
    while written < events:
        session_id = f"gen-{index:07d}"
        micros = ((index % 96) * 3600 + rng.randint(0, 3000)) * 1_000_000
        events_of: list[tuple[str, str, str, str]] = []
        for kind, payload in _session(rng, index, events - written, lengths):
            micros += rng.randint(500_000, 40_000_000)
            bits = f"{rng.getrandbits(128):032x}"
            event_id = f"{bits[:8]}-{bits[8:12]}-{bits[12:16]}-{bits[16:20]}-{bits[20:]}"
            events_of.append((event_id, _time_text(micros), kind, payload))
        rows = chained_rows(session_id, events_of)
        written += len(rows)
        index += 1
        yield rows, (session_id, len(rows), rows[-1][8], rows[0][3], rows[-1][3])


def stored(row: Row) -> Row:
    """A :func:`chained_rows` row as the SQLite log keeps it: event id and hashes in binary."""
    session_id, version, event_id, at, schema_version, kind, payload, prev, digest = row
    return (
        session_id,
        version,
        uuid.UUID(event_id).bytes,
        at,
        schema_version,
        kind,
        payload,
        bytes.fromhex(prev),
        bytes.fromhex(digest),
    )


def chained_rows(
    session_id: str, events: Iterable[tuple[str, str, str, str]], *, schema_version: int = 1
) -> list[Row]:
    """``tl_events`` rows (without position) of a session's events, each sealed onto the last.

    Args:
        session_id: The session.
        events: Each event's id, recorded time (stored text), type and payload, in order.
        schema_version: The payloads' schema (from 2, a thought's hash covers its committed
            form, see :mod:`thoughtledger.ledger.content`).
    """
    rows: list[Row] = []
    prev = GENESIS_HASH
    redactable = schema_version >= REDACTABLE_FROM
    for version, (event_id, at, kind, payload) in enumerate(events, start=1):
        digest = compute_hash(
            prev_hash=prev,
            session_id=session_id,
            version=version,
            event_id=event_id,
            recorded_at=at,
            event_type=kind,
            schema_version=schema_version,
            payload=strip(payload) if redactable and kind in THOUGHT_TYPES else payload,
        )
        rows.append(
            (session_id, version, event_id, at, schema_version, kind, payload, prev, digest)
        )
        prev = digest
    return rows


async def generate_ledger(
    path: Path, events: int, *, seed: int = 7, lengths: tuple[int, int] = (4, 16)
) -> None:
    """Create an SQLite ledger at ``path`` holding exactly ``events`` generated events."""
    store = await SqliteEventStore.open(path)
    await store.aclose()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        for rows, _head in generate_rows(events, seed=seed, lengths=lengths):
            db.executemany(
                "INSERT INTO tl_events (session_id, version, event_id, recorded_at, "
                "schema_version, event_type, payload, prev_hash, hash) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                map(stored, rows),
            )
        db.execute("COMMIT")
    finally:
        db.close()


def _raw_loop(path: Path) -> float:
    db = sqlite3.connect(path)
    start = time.perf_counter()
    count = 0
    for (payload,) in db.execute("SELECT payload FROM tl_events"):
        json.loads(payload)
        count += 1
    elapsed = time.perf_counter() - start
    db.close()
    return count / elapsed


async def _ours(path: Path, events: int) -> float:
    store = await SqliteEventStore.open(path)
    try:
        start = time.perf_counter()
        stats = await ledger_stats(store.stats)
        elapsed = time.perf_counter() - start
    finally:
        await store.aclose()
    assert stats.overall.events == events
    return events / elapsed


async def bench_stats(events: int) -> list[dict[str, Any]]:
    """Time ``stats`` over ``events`` generated events against a raw SELECT + json.loads loop."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stats.db"
        await generate_ledger(path, events)
        # Best of two each, alternating, so the page cache and a drifting machine favour neither.
        ours = await _ours(path, events)
        raw = _raw_loop(path)
        ours = max(ours, await _ours(path, events))
        raw = max(raw, _raw_loop(path))
    return [
        {
            "name": f"stats sqlite ({events} events)",
            "ours_per_s": round(ours),
            "baseline": "raw sqlite3 SELECT payload + json.loads",
            "baseline_per_s": round(raw),
            "ratio": round(ours / raw, 3),
            "target": 0.5,
            "target_per_s": 300_000,
        }
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/bench_stats.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = asyncio.run(bench_stats(args.events))
    for row in rows:
        verdict = (
            "ok"
            if row["ratio"] >= row["target"] and row["ours_per_s"] >= row["target_per_s"]
            else "BELOW"
        )
        print(
            f"{row['name']}: ours {row['ours_per_s']}/s, baseline {row['baseline_per_s']}/s "
            f"({row['baseline']}), ratio {row['ratio']} (target {row['target']}, "
            f">= {row['target_per_s']}/s): {verdict}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
