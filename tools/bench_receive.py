"""The OTLP receiver's bench: reasoning parts ingested per second, beside export --otlp's rate.

    tools/bench receive [--receive-parts N] [--pg URL]

A ``thoughtledger receive`` child process takes OTLP/HTTP protobuf requests of 512 spans, each
span one ``chat`` call whose ``gen_ai.output.messages`` holds one reasoning part, over 16
conversations (and, as a figure, 256), posted one after another as an exporter sends its
batches. The rate is parts recorded per second; the baseline, measured in the
same run, is ``export --all --otlp``'s spans per second on a ledger of as many thoughts (the way
out, to the same kind of loopback receiver). The peak RSS growth is the receiver's own, from
after its first request to the end.
"""

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench_export import _otlp_child, _Sink
from bench_stats import generate_ledger

ROOT = Path(__file__).resolve().parent.parent
BATCH = 512
CONVERSATIONS = (16, 256)
"""Conversations a batch's spans belong to: 16, as an exporter of one process serving a few
conversations at once sends them (the row with the targets); 256, two spans a session, as a
collector merging many senders might (a figure: each session is one append of its own)."""
TARGET_PER_S = 20_000
TARGET_RATIO = 0.5


def _bodies(parts: int, conversations: int) -> list[bytes]:
    """The requests, built before timing with the official messages (one part per span)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    bodies = []
    for start in range(0, parts, BATCH):
        request = ExportTraceServiceRequest()
        resource = request.resource_spans.add()
        resource.resource.attributes.add(key="service.name", value=AnyValue(string_value="bench"))
        spans = resource.scope_spans.add()
        for n in range(start, min(start + BATCH, parts)):
            text = f"Step {n}: weigh the cache against the index before the next query."
            messages = [{"role": "assistant", "parts": [{"type": "reasoning", "content": text}]}]
            span = spans.spans.add(
                name="chat bench-model",
                trace_id=n.to_bytes(16, "big"),
                span_id=(n + 1).to_bytes(8, "big"),
                start_time_unix_nano=1_700_000_000_000_000_000 + n,
            )
            facts = {
                "gen_ai.output.messages": json.dumps(messages),
                "gen_ai.conversation.id": f"conv-{n % conversations}",
                "gen_ai.request.model": "bench-model",
            }
            span.attributes.extend(
                KeyValue(key=key, value=AnyValue(string_value=value))
                for key, value in facts.items()
            )
        bodies.append(bytes(request.SerializeToString()))
    return bodies


def _status(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field))


def _ingest(db: str, bodies: list[bytes], warm: bytes) -> tuple[float, float]:
    """Post ``bodies`` to a ``receive`` child on ``db``; its seconds and peak RSS growth (MB)."""
    import httpx2

    env = {**os.environ, "PYTHONPATH": str(ROOT), "DISABLE_THOUGHT_LOGGING": "true"}
    child = subprocess.Popen(  # noqa: S603  # our own interpreter and command
        [sys.executable, "-m", "thoughtledger.adapters.cli", "receive", "--port", "0", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        found = re.search(r"url=(\S+)", line)
        if found is None:
            raise RuntimeError(f"receive did not start: {line!r}")
        url = found.group(1)
        headers = {"Content-Type": "application/x-protobuf"}
        with httpx2.Client(timeout=120) as http:
            http.post(url, content=warm, headers=headers).raise_for_status()
            with open(f"/proc/{child.pid}/clear_refs", "w") as handle:
                handle.write("5")  # the peak RSS from here (Linux)
            before = _status(child.pid, "VmRSS:")
            start = time.perf_counter()
            for body in bodies:
                answer = http.post(url, content=body, headers=headers)
                answer.raise_for_status()
            seconds = time.perf_counter() - start
            peak = _status(child.pid, "VmHWM:")
        return seconds, (peak - before) / 1024
    finally:
        child.terminate()
        child.wait(timeout=60)


def _export_rate(thoughts: int) -> float:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "export.db"
            asyncio.run(generate_ledger(path, int(thoughts * 1.1)))
            url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
            count, seconds, _ = _otlp_child("cli", f"sqlite:///{path}", url)
    finally:
        server.shutdown()
        server.server_close()
    return count / seconds


async def bench_receive(parts: int, pg: str | None, rounds: int = 3) -> list[dict[str, Any]]:
    """The receiver's rate on SQLite (and PostgreSQL) beside export --otlp's, in one run."""
    warm = _bodies(BATCH, 1)[0]
    backends: dict[tuple[str, int], list[tuple[float, float]]] = {}
    export_rates: list[float] = []
    schemas: list[str] = []
    for _ in range(rounds):
        export_rates.append(await asyncio.to_thread(_export_rate, parts))
        for conversations in CONVERSATIONS:
            bodies = _bodies(parts, conversations)
            with tempfile.TemporaryDirectory() as tmp:
                db = f"sqlite:///{Path(tmp) / 'receive.db'}"
                backends.setdefault(("sqlite", conversations), []).append(
                    await asyncio.to_thread(_ingest, db, bodies, warm)
                )
            if pg is not None:
                schema = f"bench_receive_{uuid.uuid4().hex[:8]}"
                schemas.append(schema)
                db = f"{pg}?schema={schema}"
                backends.setdefault(("postgres", conversations), []).append(
                    await asyncio.to_thread(_ingest, db, bodies, warm)
                )
    if schemas and pg is not None:
        import asyncpg

        connection = await asyncpg.connect(pg.replace("postgresql+asyncpg://", "postgresql://"))
        for schema in schemas:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await connection.close()
    export = statistics.median(export_rates)
    rows = []
    for (backend, conversations), runs in backends.items():
        rate = statistics.median(parts / seconds for seconds, _ in runs)
        row: dict[str, Any] = {
            "name": f"receive, {parts} reasoning parts in batches of {BATCH} spans over "
            f"{conversations} conversations, {backend} (parts/s) vs export --all --otlp (spans/s)",
            "ours_per_s": round(rate),
            "baseline": "export --all --otlp of as many thoughts, in the same run",
            "baseline_per_s": round(export),
            "ratio": round(rate / export, 3),
            "peak_rss_growth_mb": round(statistics.median(growth for _, growth in runs), 1),
        }
        if conversations == CONVERSATIONS[0]:
            row.update(target=TARGET_RATIO, target_per_s=TARGET_PER_S)
        rows.append(row)
    return rows


__all__ = ["bench_receive"]
