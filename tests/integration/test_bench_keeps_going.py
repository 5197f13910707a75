"""``tools/bench``'s runner: a bench that fails is reported and the next one still runs."""

import argparse
import asyncio
import importlib.util
import io
import json
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from types import ModuleType
from typing import Any

from thoughtledger import open_ledger

ROOT = Path(__file__).resolve().parents[2]
Result = dict[str, Any]
THOUGHTS = 20


def _bench() -> ModuleType:
    """tools/bench.py (tools/ holds scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "thoughtledger_bench", ROOT / "tools" / "bench.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _thoughts(count: int) -> list[dict[str, Any]]:
    return [
        {
            "thought": f"Thought {n}: what changed since the last step",
            "thought_number": n,
            "total_thoughts": count,
            "next_thought_needed": n < count,
        }
        for n in range(1, count + 1)
    ]


async def _refused(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    """A bench whose work the ledger refuses: thought number 0 breaks a rule."""
    async with open_ledger("memory://") as ledger:
        session = await ledger.new_session()
        await session.think(
            thought="zero", thought_number=0, total_thoughts=1, next_thought_needed=False
        )
    yield {"name": "never measured", "ratio": 1.0, "target": None}


async def _silent(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    """A bench that never answers, as a server that hangs."""
    await asyncio.Event().wait()
    yield {"name": "never measured", "ratio": 1.0, "target": None}


async def _appends(_args: argparse.Namespace) -> AsyncGenerator[Result, None]:
    """A real figure: 20 thoughts one call each against the same 20 in one batch."""
    async with open_ledger("memory://") as ledger:
        single = await ledger.new_session()
        start = time.perf_counter()
        for thought in _thoughts(THOUGHTS):
            await single.think(**thought)
        singles = time.perf_counter() - start
        batch = await ledger.new_session()
        start = time.perf_counter()
        await batch.think_batch(_thoughts(THOUGHTS))
        batched = time.perf_counter() - start
    yield {
        "name": "appends in memory",
        "ours_ms": round(batched * 1000, 3),
        "baseline": "one call each",
        "baseline_ms": round(singles * 1000, 3),
        "ratio": round(singles / batched, 3),
        "target": None,
    }


def test_a_failing_bench_is_reported_and_the_next_still_runs(tmp_path: Path) -> None:
    bench = _bench()
    out = io.StringIO()
    report = tmp_path / "figures.json"
    code = asyncio.run(
        bench.run(
            {"refused": _refused, "silent": _silent, "appends": _appends},
            argparse.Namespace(),
            json_path=report,
            row_timeout=0.5,
            out=out,
        )
    )
    printed = out.getvalue()
    rows = json.loads(report.read_text())["results"]
    assert code == 1
    failed, hung, measured = rows
    assert failed["bench"] == "refused"
    assert failed["verdict"] == "FAILED"
    assert "InvalidThoughtError" in failed["error"]
    assert "\n" not in failed["error"]
    assert f"refused: FAILED  {failed['error']}" in printed
    assert hung["verdict"] == "FAILED"
    assert hung["error"] == "TimeoutError: no row within --row-timeout 0.5 s"
    assert measured["name"] == "appends in memory"
    assert measured["verdict"] == "info"
    assert measured["ours_ms"] > 0
    assert f"ours_ms={measured['ours_ms']}" in printed
    summary = printed.split("summary:")[1]
    assert "3 rows: 0 ok, 1 info, 0 MISSED, 2 FAILED" in summary
    assert "FAILED  refused: InvalidThoughtError" in summary
    assert "FAILED  silent: TimeoutError" in summary
    assert "never measured" not in printed


def test_every_bench_is_in_the_usage_and_the_help() -> None:
    bench = _bench()
    usage = bench.parser().format_help()
    for name in bench.BENCHES:
        assert f"tools/bench {name} " in usage or f"tools/bench {name}\n" in usage, name
