"""``stats`` through ``main``: the SQL figures equal a plain Python computation, on each backend."""

import asyncio
import csv
import importlib.util
import io
import itertools
import math
import re
import shutil
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli, sqlite_url
from tests.support.samples import SAMPLE, Clock, record_sample
from thoughtledger import open_ledger, open_store
from thoughtledger.api.figures import ledger_stats
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import THOUGHT_TYPES, Generation, SessionStarted, ThoughtGenerated
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.ledger.store.stats_rows import StatsFilter
from thoughtledger.projections.state import empty, replay

Streams = dict[str, list[RecordedEvent]]
Keep = Callable[[list[RecordedEvent]], bool]


def load_generator() -> Callable[[Path, int], Coroutine[Any, Any, None]]:
    """``generate_ledger`` of tools/bench_stats.py (tools/ holds scripts, not a package)."""
    path = Path(__file__).resolve().parents[2] / "tools" / "bench_stats.py"
    spec = importlib.util.spec_from_file_location("thoughtledger_bench_stats", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generate: Callable[[Path, int], Coroutine[Any, Any, None]] = module.generate_ledger
    return generate


# -- the reference: every figure from replayed sessions, one Python loop, no shared code ---------


def percentile(values: list[int], percent: int) -> int | None:
    ordered = sorted(values)
    return ordered[math.ceil(Fraction(percent, 100) * len(ordered)) - 1] if ordered else None


def millis(moment: datetime) -> int:
    """The time in whole milliseconds, rounded half up (as the analytics define it)."""
    since = moment - datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=500)
    return since // timedelta(milliseconds=1)


def reference(streams: Streams, keep: Keep = lambda records: True) -> dict[str, Any]:
    sessions: list[dict[str, Any]] = []
    gaps: list[int] = []
    for session_id, records in streams.items():
        if not keep(records):
            continue
        state = replay(records, empty(session_id))
        first = records[0].event
        metadata = first.metadata if isinstance(first, SessionStarted) else {}
        thoughts = state.thoughts
        sessions.append(
            {
                "agent": metadata.get("agent"),
                "client": metadata.get("client"),
                "day": records[0].recorded_at.astimezone(UTC).date().isoformat(),
                "events": len(records),
                "thoughts": len(thoughts),
                "revisions": state.revisions,
                "branches": len(state.branches),
                "completed": bool(thoughts) and not thoughts[-1].next_thought_needed,
                "drift": thoughts[-1].total_thoughts - thoughts[0].total_thoughts
                if thoughts
                else None,
            }
        )
        gaps += [
            millis(b.recorded_at) - millis(a.recorded_at)
            for a, b in itertools.pairwise(records)
            if a.event_type in THOUGHT_TYPES and b.event_type in THOUGHT_TYPES
        ]

    def group(items: list[dict[str, Any]]) -> dict[str, Any]:
        thoughts = sum(s["thoughts"] for s in items)
        branching = sum(1 for s in items if s["branches"])
        branches = sum(s["branches"] for s in items)
        drifts = [s["drift"] for s in items if s["drift"] is not None]
        counts = [s["thoughts"] for s in items]

        def share(part: int, whole: int) -> float:
            return round(part / whole, 4) if whole else 0.0

        return {
            "sessions": len(items),
            "events": sum(s["events"] for s in items),
            "thoughts": thoughts,
            "completion_rate": share(sum(s["completed"] for s in items), len(items)),
            "revision_rate": share(sum(s["revisions"] for s in items), thoughts),
            "branch_rate": share(branching, len(items)),
            "branches": branches,
            "fan_out": share(branches, branching),
            "thoughts_p50": percentile(counts, 50) or 0,
            "thoughts_p95": percentile(counts, 95) or 0,
            "drift_mean": round(sum(drifts) / len(drifts), 4) if drifts else None,
            "drift_p50": percentile(drifts, 50),
            "drift_p95": percentile(drifts, 95),
        }

    by_agent: defaultdict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    by_day: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in sessions:
        by_agent[item["agent"] or "", item["client"] or ""].append(item)
        by_day[item["day"]].append(item)
    p50, p95 = percentile(gaps, 50), percentile(gaps, 95)
    return {
        "overall": {
            **group(sessions),
            "gap_p50_seconds": None if p50 is None else p50 / 1000,
            "gap_p95_seconds": None if p95 is None else p95 / 1000,
        },
        "by_agent": [
            {"agent": items[0]["agent"], "client": items[0]["client"], **group(items)}
            for _, items in sorted(by_agent.items())
        ],
        "by_day": [{"day": day, **group(items)} for day, items in sorted(by_day.items())],
    }


def started_by(records: list[RecordedEvent], **metadata: str) -> bool:
    first = records[0].event
    return isinstance(first, SessionStarted) and all(
        first.metadata.get(key) == value for key, value in metadata.items()
    )


async def streams_of(url: str) -> Streams:
    store = await open_store(url)
    streams: Streams = defaultdict(list)
    try:
        after = 0
        while page := await store.read_all(after_position=after, limit=5000):
            for record in page:
                streams[record.session_id].append(record)
            after = page[-1].position
    finally:
        await store.aclose()
    return dict(streams)


def stats(capsys: pytest.CaptureFixture[str], url: str, *options: str) -> dict[str, Any]:
    # Loops are counted by default, from the stored marks: test_cli_loops holds their figures.
    ran = cli(capsys, "stats", "--db", url, "--json", *options)
    assert ran.code == 0, ran.err
    figures: dict[str, Any] = ran.json()
    del figures["filter"]
    del figures["byModel"]  # per-model usage is tested in test_external_cli
    assert figures.pop("byLabel") == []  # these ledgers hold no annotation (test_cli_annotate)
    assert figures.pop("loops")["sessions"] == figures["overall"]["sessions"]
    snake: dict[str, Any] = _snake_keys(figures)  # as the reference below names the fields
    return snake


def _snake_keys(data: Any) -> Any:
    """``data`` with camelCase keys back as snake_case, after checking none is snake_case."""
    if isinstance(data, dict):
        assert not any("_" in key for key in data), sorted(data)  # camelCase, as every command
        return {re.sub("([A-Z])", r"_\1", k).lower(): _snake_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_snake_keys(item) for item in data]
    return data


# -- the tests ----------------------------------------------------------------------------------


def test_stats_equal_a_pure_python_computation(
    capsys: pytest.CaptureFixture[str],
    ledger_url: str,
) -> None:
    asyncio.run(record_sample(ledger_url))
    expected = reference(asyncio.run(streams_of(ledger_url)))
    assert stats(capsys, ledger_url) == expected
    overall = expected["overall"]
    assert (overall["sessions"], overall["branches"], overall["drift_p95"]) == (5, 2, 1)
    assert (overall["gap_p50_seconds"], overall["gap_p95_seconds"]) == (2.125, 30.0)
    assert [item["agent"] for item in expected["by_agent"]] == [
        None,
        "coder",
        "coder",
        "planner",
        "planner",
    ]


@pytest.mark.parametrize(
    ("options", "keep"),
    [
        (["--agent", "planner"], lambda r: started_by(r, agent="planner")),
        (["--client", "desktop"], lambda r: started_by(r, client="desktop")),
        (["--since", "2024-05-02"], lambda r: r[0].recorded_at >= datetime(2024, 5, 2, tzinfo=UTC)),
        (["--until", "2024-05-02"], lambda r: r[0].recorded_at < datetime(2024, 5, 2, tzinfo=UTC)),
        (["--agent", "nobody"], lambda r: False),
    ],
    ids=["agent", "client", "since", "until", "nothing"],
)
def test_filtered_stats_count_only_the_chosen_sessions(
    capsys: pytest.CaptureFixture[str],
    ledger_url: str,
    options: list[str],
    keep: Keep,
) -> None:
    asyncio.run(record_sample(ledger_url))
    expected = reference(asyncio.run(streams_of(ledger_url)), keep)
    assert stats(capsys, ledger_url, *options) == expected


def test_the_in_memory_store_answers_with_the_same_figures() -> None:
    async def figures() -> tuple[dict[str, Any], Streams]:
        clock = Clock()
        store = MemoryEventStore(clock=clock)
        ledger = Ledger(store, ttl=None, clock=clock)
        for session_id, metadata, thoughts in SAMPLE:
            for arguments in thoughts:
                await ledger.session(session_id, metadata=metadata).think(**arguments)
        await ledger.clear_session("s-c")
        streams = {s: await store.read_stream(s) for s, _, _ in SAMPLE}
        filtered = await ledger_stats(store.stats, StatsFilter(agent="coder"))
        return (await ledger_stats(store.stats)).as_dict() | {"coder": filtered.as_dict()}, streams

    answer, streams = asyncio.run(figures())
    coder = answer.pop("coder")
    assert answer == reference(streams)
    assert coder == reference(streams, lambda r: started_by(r, agent="coder"))


def test_stats_print_tables_and_csv(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    asyncio.run(record_sample(url))
    text = cli(capsys, "stats", "--db", url).out
    assert "completion rate        40.0% of sessions end with no next thought" in text
    assert "time between thoughts  p50 2.125 s · p95 30 s" in text
    assert "by agent / client" in text
    assert any(line.split()[:3] == ["2024-05-02", "3", "7"] for line in text.splitlines())
    rows = list(csv.DictReader(io.StringIO(cli(capsys, "stats", "--db", url, "--csv").out)))
    assert [row["scope"] for row in rows] == ["all"] + ["agent"] * 5 + ["day"] * 2
    assert rows[0]["sessions"] == "5"
    assert rows[0]["gap_p95_s"] == "30.0"
    assert (rows[-1]["day"], rows[-1]["sessions"]) == ("2024-05-02", "3")


def test_stats_of_an_empty_ledger_are_zeros(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    asyncio.run(create_empty(sqlite_url(tmp_path / "empty.db")))
    figures = stats(capsys, sqlite_url(tmp_path / "empty.db"))
    assert figures["overall"]["sessions"] == 0
    assert figures["overall"]["gap_p50_seconds"] is None
    assert figures["by_agent"] == figures["by_day"] == []
    assert (
        "sessions               0"
        in cli(capsys, "stats", "--db", sqlite_url(tmp_path / "empty.db")).out
    )


async def create_empty(url: str) -> None:
    """Open a new ledger for writing (which creates it) and close it at once."""
    await (await open_store(url)).aclose()


GENERATED = 20_000
COPIES = 50
"""The million-event ledger: the generated one, fifty times over."""
COUNTS = ("sessions", "events", "thoughts", "branches")
"""The figures that grow with the copies; every rate, percentile and mean stays as it was."""


@pytest.fixture(scope="module")
def generated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated ledger of 20,000 events (tools/bench_stats.py), made once for the module."""
    path = tmp_path_factory.mktemp("generated") / "generated.db"
    asyncio.run(load_generator()(path, GENERATED))
    asyncio.run(_marks_taken_in(path))
    return path


async def _marks_taken_in(path: Path) -> None:
    """Take the generated events into the loop marks, as a writer (record, serve) leaves them."""
    async with open_ledger(sqlite_url(path)) as ledger:
        await ledger.loops.catch_up()


def multiplied(original: Path, path: Path, copies: int) -> None:
    """Write at ``path`` the ledger at ``original`` with ``copies - 1`` more copies of each session.

    The copies are made in SQL (the generator takes a minute for a million events) under new
    session and event ids, keeping payloads, times and hashes: the figures cannot tell them from
    their originals, only ``verify`` could. Each copy's loop marks are the original's, and the
    marks' position moves to the new end when the original's was at its end.
    """
    shutil.copyfile(original, path)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        # A scratch file: no syncs, and no log of the 500 MB written (a WAL would write them twice).
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        ((events,),) = db.execute("SELECT max(position) FROM tl_events")
        ((through,),) = db.execute("SELECT position FROM tl_loops_through")
        db.execute("CREATE TEMP TABLE original_loops AS SELECT * FROM tl_loops")
        db.execute("BEGIN")
        for copy in range(1, copies):
            db.execute(
                "INSERT INTO tl_events (session_id, version, event_id, recorded_at,"
                " schema_version, event_type, payload, prev_hash, hash)"
                # A fresh id, in the binary form the log keeps ids in (schema step 18).
                " SELECT session_id || ?1, version, randomblob(16),"
                " recorded_at, schema_version, event_type, payload, prev_hash, hash"
                " FROM tl_events WHERE position <= ?2 ORDER BY position",
                (f"-{copy}", events),
            )
            db.execute(
                "INSERT INTO tl_loops (session_id, version, repeats_version, similarity)"
                " SELECT session_id || ?1, version, repeats_version, similarity"
                " FROM original_loops",
                (f"-{copy}",),
            )
        if through == events:
            db.execute(
                "UPDATE tl_loops_through SET position = (SELECT max(position) FROM tl_events)"
            )
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode = WAL")  # as the store made it
    finally:
        db.close()


def scaled(figures: dict[str, Any], copies: int) -> dict[str, Any]:
    """``stats`` figures of a ledger holding each session ``copies`` times."""

    def group(item: dict[str, Any]) -> dict[str, Any]:
        return {key: value * copies if key in COUNTS else value for key, value in item.items()}

    return {
        "overall": group(figures["overall"]),
        "by_agent": [group(item) for item in figures["by_agent"]],
        "by_day": [group(item) for item in figures["by_day"]],
    }


def test_stats_on_a_generated_ledger_are_correct(
    capsys: pytest.CaptureFixture[str], generated_db: Path
) -> None:
    figures = stats(capsys, sqlite_url(generated_db))
    assert figures["overall"]["events"] == GENERATED
    assert figures == reference(asyncio.run(streams_of(sqlite_url(generated_db))))


@pytest.mark.slow
def test_stats_over_a_million_events_are_the_generated_ledgers_times_the_copies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, generated_db: Path
) -> None:
    path = tmp_path / "million.db"
    multiplied(generated_db, path, COPIES)
    figures = stats(capsys, sqlite_url(path))
    assert figures["overall"]["events"] == GENERATED * COPIES == 1_000_000
    assert sum(day["events"] for day in figures["by_day"]) == 1_000_000
    assert figures == scaled(stats(capsys, sqlite_url(generated_db)), COPIES)


def generated(number: int, kind: str, **extra: Any) -> ThoughtGenerated:
    return ThoughtGenerated(
        thought=f"model thought {number}",
        thought_number=number,
        total_thoughts=4,
        next_thought_needed=True,
        kind=kind,  # type: ignore[arg-type]  # one of the ThoughtKind literals, given as str
        guidance="keep going",
        generation=Generation(
            model="small",
            provider="local",
            prompt_sha256="0" * 64,
            context_version=number,
            structured=True,
            latency_ms=120,
            attempts=1,
        ),
        **extra,
    )


def test_thoughts_a_model_wrote_count_as_the_kind_they_were_classified_as(
    capsys: pytest.CaptureFixture[str],
    ledger_url: str,
) -> None:
    async def record() -> None:
        store = await open_store(ledger_url)
        try:
            await store.append(
                "s-g",
                [
                    SessionStarted(metadata={"agent": "writer"}),
                    generated(1, "thought.recorded"),
                    generated(2, "thought.revised", is_revision=True, revises_thought=1),
                    generated(3, "branch.opened", branch_from_thought=1, branch_id="b"),
                ],
                expected_version=0,
            )
        finally:
            await store.aclose()

    asyncio.run(record())
    figures = stats(capsys, ledger_url)
    assert figures == reference(asyncio.run(streams_of(ledger_url)))
    overall = figures["overall"]
    assert (overall["thoughts"], overall["revision_rate"], overall["branches"]) == (3, 0.3333, 1)
    shown = cli(capsys, "show", "s-g", "--db", ledger_url).out
    assert "#2 ↺ revises #1: [small] model thought 2" in shown
    assert "⑂ branch b from #1" in shown
