"""Benchmarks of the exports: OTLP spans per second, and the memory a Parquet export takes.

Usage:
    tools/bench_export.py [--thoughts N] [--events N] [--json FILE]

otlp: N thoughts (in generated sessions) sent as spans to a loopback OTLP/HTTP receiver that
reads and acknowledges each request; the baseline is the SDK's own exporter sending the same
spans already built (encoding and HTTP only), measured in the same run. Target: >= 20k spans/s.

parquet: `export --all --format parquet` of N events in a child process; the figure is the
growth of its peak RSS during the export over its RSS just before (after opening the ledger
and importing pyarrow; the peak is reset there, Linux only). Target: <= +100 MB at 1M events.
"""

import argparse
import asyncio
import json
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

from api import open_ledger
from api.otel.exporter import OtlpSender
from api.otel.spans import Conventions, session_spans

ROOT = Path(__file__).resolve().parent.parent


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


async def bench_otlp(thoughts: int) -> dict[str, Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "otlp.db"
            # Sessions of 4 to 16 thoughts plus a start: about 1.1 events per thought.
            await generate_ledger(path, int(thoughts * 1.1))
            async with open_ledger(f"sqlite:///{path}", read_only=True) as ledger:
                sender = OtlpSender(url)
                start = time.perf_counter()
                spans = []
                async for records in ledger.export():
                    spans += session_spans(records, Conventions())
                sender.send_now(spans)
                ours = time.perf_counter() - start
                built = [sender._convert(span) for span in spans]
                start = time.perf_counter()
                for index in range(0, len(built), 2048):
                    sender._exporter.export(built[index : index + 2048])
                baseline = time.perf_counter() - start
                sender.close()
    finally:
        server.shutdown()
        server.server_close()
    count = len(spans)
    return {
        "name": f"export --otlp ({count} spans)",
        "ours_per_s": round(count / ours),
        "baseline": "the SDK exporter sending the same spans, already built",
        "baseline_per_s": round(count / baseline),
        "ratio": round(baseline / ours, 3),
        "target_per_s": 20_000,
    }


_CHILD = """
import asyncio, sys
sys.path.insert(0, {root!r})
import pyarrow, pyarrow.parquet
from api import open_ledger
from api.cli import main
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
    print(
        f"{otlp['name']}: ours {otlp['ours_per_s']} spans/s, baseline {otlp['baseline_per_s']}"
        f" spans/s ({otlp['baseline']}), ratio {otlp['ratio']} (target >= "
        f"{otlp['target_per_s']}/s): "
        + ("ok" if otlp["ours_per_s"] >= otlp["target_per_s"] else "BELOW")
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
        args.json.write_text(json.dumps([otlp, parquet], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
