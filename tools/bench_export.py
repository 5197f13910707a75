"""Benchmarks of the exports: OTLP spans per second, and the memory a Parquet export takes.

Usage:
    tools/bench_export.py [--thoughts N] [--events N] [--json FILE]

otlp: `export --all --otlp URL` of N thoughts (in generated sessions), run in a child process,
to a loopback OTLP/HTTP receiver in this one that reads and acknowledges each request. Three
baselines sent the same spans in the same run, in turn, three rounds: the same export with the
SDK's exporter in place of the hand-written encoder (what the encoder buys), the decoding path
the export took before (each session's stream read into its models), and the SDK's own exporter
sending the spans already built (encoding and HTTP only). Also each way's peak RSS growth.
Target: >= 20k spans/s.

parquet: `export --all --format parquet` of N events in a child process; the figure is the
growth of its peak RSS during the export over its RSS just before (after opening the ledger
and importing pyarrow; the peak is reset there, Linux only). Target: <= +100 MB at 1M events.
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_stats import generate_ledger

ROOT = Path(__file__).resolve().parent.parent


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


# Each way of sending runs in a child process of its own (the receiver stays in this one, as a
# collector would be another process), after the imports it needs; it prints the spans it sent,
# the seconds it took, its RSS before and its peak RSS during (the peak reset first, Linux only).
_OTLP_CHILD = """
import asyncio, io, json, sys, time, contextlib
sys.path.insert(0, {root!r})
from thoughtledger import open_ledger
from thoughtledger.adapters.cli import main
from thoughtledger.adapters.otel import exporter
from thoughtledger.adapters.otel.exporter import OtlpSender
from thoughtledger.adapters.otel.spans import SEMCONV_SCHEMA_URL, Conventions, session_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags
mode, db, url = {mode!r}, {db!r}, {url!r}
class SdkSender:
    # The maintained path: the SDK's own finished spans, encoded and sent by its exporter.
    def __init__(self, url, *, service_name="thoughtledger", version=""):
        self._exporter = OTLPSpanExporter(endpoint=url)
        self._resource = Resource.create({{"service.name": service_name}})
        self._scope = InstrumentationScope("thoughtledger", version, SEMCONV_SCHEMA_URL)
        self._kinds = {{"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}}
    def _context(self, span, span_id):
        flags = TraceFlags(TraceFlags.SAMPLED)
        return SpanContext(span.trace_id, span_id, is_remote=False, trace_flags=flags)
    def encode(self, spans):
        return [
            ReadableSpan(
                name=span.name,
                context=self._context(span, span.span_id),
                parent=None if span.parent_span_id is None
                else self._context(span, span.parent_span_id),
                resource=self._resource,
                attributes=span.attributes,
                events=[Event(name, attrs, timestamp=at) for name, at, attrs in span.events],
                links=[Link(self._context(span, l.span_id), l.attributes) for l in span.links],
                kind=self._kinds[span.kind],
                start_time=span.start_ns,
                end_time=span.end_ns,
                instrumentation_scope=self._scope,
            )
            for span in spans
        ]
    def send_encoded_now(self, built):
        for index in range(0, len(built), 2048):
            result = self._exporter.export(built[index : index + 2048])
            assert result == SpanExportResult.SUCCESS, result
    async def send_encoded(self, built):
        await asyncio.to_thread(self.send_encoded_now, built)
    def close(self):
        self._exporter.shutdown()
def status(field):
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field))
async def decoded():
    # What export --otlp did before: each session's stream read and decoded into its models.
    async with open_ledger(db, read_only=True) as ledger:
        sender, sent, pending = OtlpSender(url), 0, []
        async for records in ledger.transfer.export():
            pending += session_spans(records, Conventions())
            if len(pending) >= 8192:
                await sender.send(pending)
                sent, pending = sent + len(pending), []
        await sender.send(pending)
        sender.close()
        return sent + len(pending)
async def sdk_spans():
    async with open_ledger(db, read_only=True) as ledger:
        spans = [
            span async for records in ledger.transfer.export()
            for span in session_spans(records, Conventions())
        ]
    sender = SdkSender(url)
    return sender, sender.encode(spans)
if mode == "sdk":
    sender, built = asyncio.run(sdk_spans())
if mode == "cli-sdk":
    exporter.OtlpSender = SdkSender  # the same export, without the hand-written encoder
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # resets the peak RSS to the current RSS (Linux)
before = status("VmRSS:")
start = time.perf_counter()
if mode in ("cli", "cli-sdk"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["export", "--all", "--otlp", url, "--db", db, "--json"])
    assert code == 0, code
    sent = json.loads(out.getvalue())["spans"]
elif mode == "decoded":
    sent = asyncio.run(decoded())
else:
    sender.send_encoded_now(built)
    sent = len(built)
seconds = time.perf_counter() - start
print(sent, seconds, before, status("VmHWM:"))
"""


_TARGET_PER_S = 20_000


def _otlp_child(mode: str, db: str, url: str) -> tuple[int, float, float]:
    """Run one way of sending; return its spans, seconds and peak RSS growth (MB)."""
    done = subprocess.run(  # noqa: S603  # our own interpreter and script
        [sys.executable, "-c", _OTLP_CHILD.format(root=str(ROOT), mode=mode, db=db, url=url)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {mode} run failed: {done.stderr[-2000:]}")
    sent, seconds, before, peak = done.stdout.split()[-4:]
    return int(sent), float(seconds), (int(peak) - int(before)) / 1024


_MODES = ("cli", "cli-sdk", "decoded", "sdk")
_BASELINES = {
    "cli-sdk": "the same export with the SDK's exporter in place of the hand-written encoder",
    "decoded": "the decoding path (each session read into its models, same encoder)",
    "sdk": "the SDK's own exporter sending the same spans, already built",
}


async def bench_otlp(thoughts: int, rounds: int = 3) -> list[dict[str, Any]]:
    """``export --all --otlp`` of ``thoughts`` thoughts against three baselines, in one run.

    The baselines: the same export with the SDK's exporter (its finished spans, its encoder)
    in place of the hand-written encoder, which is what the encoder buys; the decoding path
    export --otlp took before (each session's stream read and decoded into its models, then
    the same spans and encoder); and the SDK's own exporter sending the same spans already
    built (its encoding and HTTP only). Each way runs ``rounds`` times, in turn; the figures
    are the medians, the ratio the median of each round's ratio.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "otlp.db"
            # Sessions of 4 to 16 thoughts plus a start: about 1.1 events per thought.
            await generate_ledger(path, int(thoughts * 1.1))
            db = f"sqlite:///{path}"
            runs: dict[str, list[tuple[int, float, float]]] = {mode: [] for mode in _MODES}
            for turn in range(rounds):
                # In turn, the order reversed every other round, so drift lands on every way.
                for mode in _MODES if turn % 2 == 0 else _MODES[::-1]:
                    runs[mode].append(await asyncio.to_thread(_otlp_child, mode, db, url))
    finally:
        server.shutdown()
        server.server_close()
    count = runs["cli"][0][0]
    seconds = statistics.median(run[1] for run in runs["cli"])
    growth = statistics.median(run[2] for run in runs["cli"])
    rows = []
    for mode, baseline in _BASELINES.items():
        assert all(run[0] == count for run in runs[mode]), mode  # the same spans, or no figure
        base_seconds = statistics.median(run[1] for run in runs[mode])
        ratio = statistics.median(
            base[1] / mine[1] for base, mine in zip(runs[mode], runs["cli"], strict=True)
        )
        rows.append(
            {
                "name": f"export --all --otlp, {count} spans (spans/s) vs {mode}",
                "ours_per_s": round(count / seconds),
                "baseline": baseline,
                "baseline_per_s": round(count / base_seconds),
                "ratio": round(ratio, 3),
                # The ratio that means 20k spans/s against this run's baseline.
                "target": round(_TARGET_PER_S * base_seconds / count, 3),
                "target_per_s": _TARGET_PER_S,
                "peak_rss_growth_mb": round(growth, 1),
                "baseline_peak_rss_growth_mb": round(
                    statistics.median(run[2] for run in runs[mode]), 1
                ),
            }
        )
    return rows


_CHILD = """
import asyncio, sys
sys.path.insert(0, {root!r})
import pyarrow, pyarrow.parquet
from thoughtledger import open_ledger
from thoughtledger.adapters.cli import main
async def warm():
    async with open_ledger({url!r}, read_only=True) as ledger:
        await ledger.all_heads()
def status(field):
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field))
asyncio.run(warm())
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # resets the peak RSS to the current RSS (Linux)
before = status("VmRSS:")
code = main(["export", "--all", "--format", "parquet", "-o", {out!r}, "--db", {url!r}])
after = status("VmHWM:")
print(code, before, after)
"""


async def bench_parquet(events: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.db"
        await generate_ledger(path, events)
        url, out = f"sqlite:///{path}", str(Path(tmp) / "rows.parquet")
        start = time.perf_counter()
        done = await asyncio.to_thread(
            subprocess.run,  # our own interpreter and script
            [sys.executable, "-c", _CHILD.format(root=str(ROOT), url=url, out=out)],
            capture_output=True,
            text=True,
            check=True,
        )
        seconds = time.perf_counter() - start
    code, before, after = (int(part) for part in done.stdout.split()[-3:])
    assert code == 0, done.stderr
    return {
        "name": f"export --format parquet ({events} events)",
        "peak_rss_growth_mb": round((after - before) / 1024, 1),
        "baseline": "RSS after opening the ledger and importing pyarrow",
        "baseline_mb": round(before / 1024, 1),
        "seconds": round(seconds, 1),
        "target_growth_mb": 100,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/bench_export.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--thoughts", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    otlp = asyncio.run(bench_otlp(args.thoughts))
    for row in otlp:
        print(
            f"{row['name']}: ours {row['ours_per_s']} spans/s (peak RSS +"
            f"{row['peak_rss_growth_mb']} MB), baseline {row['baseline_per_s']} spans/s (peak RSS +"
            f"{row['baseline_peak_rss_growth_mb']} MB)"
            f" ({row['baseline']}), ratio {row['ratio']} (target >= {row['target_per_s']}/s): "
            + ("ok" if row["ours_per_s"] >= row["target_per_s"] else "BELOW")
        )
    parquet = asyncio.run(bench_parquet(args.events))
    growth = parquet["peak_rss_growth_mb"]
    print(
        f"{parquet['name']}: peak RSS +{growth} MB over {parquet['baseline_mb']} MB"
        f" ({parquet['baseline']}), {parquet['seconds']} s (target <= +"
        f"{parquet['target_growth_mb']} MB): "
        + ("ok" if growth <= parquet["target_growth_mb"] else "ABOVE")
    )
    if args.json:
        args.json.write_text(json.dumps([*otlp, parquet], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
