"""The ``redaction`` rows of tools/bench: what the redactable layout (payload schema 2) costs.

Every figure is a ratio against a baseline measured in the same run: walking every session's hash
chain (``verify``) and decoding every event (``read_all``) on a ledger of schema-1 payloads, the
layout before redaction existed, against the same sessions written in schema 2 (each thought's
text under a salted digest). Both ledgers are generated with real hashes before the clock starts,
and measured in alternating rounds, in CPU time (best of the rounds).
"""

import json
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_stats import chained_rows, generate_rows, stored

from thoughtledger.ledger.content import seal_content
from thoughtledger.ledger.events import THOUGHT_TYPES
from thoughtledger.ledger.store.sqlite import SqliteEventStore

Result = dict[str, Any]
Row = tuple[Any, ...]


def _v2_rows(rows: list[Row]) -> list[Row]:
    """One generated session's rows, each thought re-encoded in schema 2 and chained anew."""
    events = [
        (event_id, at, kind, _v2(kind, payload))
        for _, _, event_id, at, _, kind, payload, *_ in rows
    ]
    return chained_rows(rows[0][0], events, schema_version=2)


def _v2(kind: str, payload: str) -> str:
    if kind not in THOUGHT_TYPES:
        return payload
    fields = json.loads(payload)
    text = fields.pop("thought")
    return seal_content(json.dumps(fields, separators=(",", ":")), {"thought": text})


def _sessions(events: int, schema: int) -> Iterator[tuple[list[Row], Row]]:
    for rows, head in generate_rows(events, lengths=(80, 118)):
        if schema == 2:
            rows = _v2_rows(rows)
            head = (*head[:2], rows[-1][8], *head[3:])
        yield rows, head


async def _ledger(path: Path, events: int, schema: int) -> list[str]:
    store = await SqliteEventStore.open(path)
    await store.aclose()
    db = sqlite3.connect(path, isolation_level=None)
    sessions = []
    try:
        db.execute("BEGIN")
        for rows, head in _sessions(events, schema):
            db.executemany(
                "INSERT INTO tl_events (session_id, version, event_id, recorded_at, "
                "schema_version, event_type, payload, prev_hash, hash) "
                "VALUES (?,?,?,?,?,?,?,?,?)",
                map(stored, rows),
            )
            sessions.append(head[0])
        db.execute("COMMIT")
    finally:
        db.close()
    return sessions


async def _round(path: Path, sessions: list[str], events: int) -> tuple[float, float]:
    """Events per CPU second of verifying every session, and of decoding the whole log.

    CPU time, not wall time: on a shared machine the wall clock swings with the load, and
    both ledgers are read from a warm page cache.
    """
    store = await SqliteEventStore.open(path)
    try:
        start = time.process_time()
        for session_id in sessions:
            assert (await store.verify(session_id)).ok
        verify = events / (time.process_time() - start)
        start, after, seen = time.process_time(), 0, 0
        while page := await store.read_all(after_position=after, limit=20_000):
            after, seen = page[-1].position, seen + len(page)
        decode = events / (time.process_time() - start)
        assert seen == events
    finally:
        await store.aclose()
    return verify, decode


async def bench_redaction(events: int = 200_000, rounds: int = 3) -> list[Result]:
    """The redaction rows: verify and decode rates of schema 2 against schema 1 (best rounds)."""
    best = {1: [0.0, 0.0], 2: [0.0, 0.0]}
    with tempfile.TemporaryDirectory() as tmp:
        ledgers = {}
        for schema in (1, 2):
            path = Path(tmp) / f"schema{schema}.db"
            ledgers[schema] = (path, await _ledger(path, events, schema))
        for _ in range(rounds):  # alternated, so that a drift of the machine falls on both
            for schema, (path, sessions) in ledgers.items():
                verify, decode = await _round(path, sessions, events)
                best[schema] = [max(best[schema][0], verify), max(best[schema][1], decode)]
    (verify1, decode1), (verify2, decode2) = best[1], best[2]
    return [
        {
            "name": f"redaction: verify every chain, {events:,} events in schema 2 (SQLite, CPU)",
            "ours_per_s": round(verify2),
            "baseline": "the same sessions in schema 1 (no content digest), same code",
            "baseline_per_s": round(verify1),
            "ratio": round(verify2 / verify1, 3),
            "target": 0.7,
        },
        {
            "name": f"redaction: decode {events:,} events of schema 2 (read_all, SQLite, CPU)",
            "ours_per_s": round(decode2),
            "baseline": "the same sessions in schema 1, same code",
            "baseline_per_s": round(decode1),
            "ratio": round(decode2 / decode1, 3),
            "target": 0.8,
        },
    ]


__all__ = ["bench_redaction"]
