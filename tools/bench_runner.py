"""The runner of ``tools/bench``: each row printed and kept as soon as it is measured.

A bench that raises, or gives no row in time, ends with one failed row; the next bench still
runs, and the JSON report is rewritten after every row, so a crash keeps what was measured.
"""

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TextIO

from bench_core import DURABILITY, Result

Bench = Callable[[argparse.Namespace], AsyncGenerator[Result, None]]
"""A bench: given the command's options, yields its rows one at a time, as each is measured."""

FAILED = "FAILED"
_ERROR_CHARS = 400


def verdict(row: Result) -> str:
    """``FAILED``, ``ok`` (target met), ``MISSED`` (target missed) or ``info`` (no target)."""
    if "error" in row:
        return FAILED
    target, ratio = row.get("target"), row.get("ratio")
    if target is None or ratio is None:
        return "info"
    met = ratio <= target if row.get("lower_is_better") else ratio >= target
    return "ok" if met else "MISSED"


def _print_row(row: Result, out: TextIO) -> None:
    if row["verdict"] == FAILED:
        print(f"{row['bench']}: {FAILED}  {row['error']}", file=out, flush=True)
        return
    target = row.get("target")
    sign = "<=" if row.get("lower_is_better") else ">="
    goal = f"target {sign} {target}" if target is not None else "no target"
    ratio = row.get("ratio")
    print(f"{row['name']}", file=out)
    if ratio is not None:
        print(f"    ratio {ratio}  ({goal})  {row['verdict']}", file=out)
    hidden = ("name", "ratio", "target", "lower_is_better", "baseline", "bench", "verdict")
    details = {k: v for k, v in row.items() if k not in hidden}
    print("    " + "  ".join(f"{k}={v}" for k, v in details.items()), file=out)
    if "baseline" in row:
        print(f"    baseline: {row['baseline']}", file=out)
    out.flush()


def _one_line(exc: BaseException) -> str:
    """The error, where it was raised (the innermost frame), in one line."""
    if isinstance(exc, TimeoutError) and not str(exc):
        text = "TimeoutError: no answer within the bench's own wait"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    # The innermost line of a bench says what it was doing; a library's rarely does.
    ours = [frame for frame in frames if Path(frame.filename).name.startswith("bench")]
    where = (ours or frames)[-1:]
    if where:
        text += f" (at {Path(where[0].filename).name}:{where[0].lineno})"
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 3] + "..."


def _write_json(path: Path, results: list[Result], *, complete: bool) -> None:
    """Replace the report whole (written aside, then renamed): never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {"durability": DURABILITY, "complete": complete, "results": results}
    aside = path.with_name(path.name + ".part")
    aside.write_text(json.dumps(report, indent=2, default=str) + "\n")
    os.replace(aside, path)


def _summary(results: list[Result], out: TextIO) -> None:
    counts = {word: 0 for word in ("ok", "info", "MISSED", FAILED)}
    for row in results:
        counts[row["verdict"]] += 1
    print(
        f"\nsummary: {len(results)} rows: "
        + ", ".join(f"{count} {word}" for word, count in counts.items()),
        file=out,
    )
    for row in results:
        if row["verdict"] == "MISSED":
            sign = "<=" if row.get("lower_is_better") else ">="
            print(
                f"  MISSED  {row['name']}: ratio {row['ratio']}, target {sign} {row['target']}",
                file=out,
            )
    for row in results:
        if row["verdict"] == FAILED:
            print(f"  {FAILED}  {row['bench']}: {row['error']}", file=out)
    out.flush()


async def run(
    benches: Mapping[str, Bench],
    args: argparse.Namespace,
    *,
    json_path: Path | None = None,
    row_timeout: float | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Run ``benches`` in order, printing (and saving) each row as soon as it is measured.

    A bench that raises, or gives no row within ``row_timeout`` seconds, ends with one failed row
    (its error in one line); the next bench still runs.

    Args:
        benches: The benches to run, by name, in order.
        args: The command's options, passed to each bench.
        json_path: Where to keep the JSON report, rewritten after every row.
        row_timeout: The most seconds a bench may take to give its next row; ``None``: no bound.
        out: Where the rows and the summary are printed.

    Returns:
        1 when a row failed, else 0 (a missed target is reported, not an error).
    """
    print(f"durability: {DURABILITY}", file=out, flush=True)
    results: list[Result] = []

    def keep(row: Result) -> None:
        results.append(row)
        _print_row(row, out)
        if json_path is not None:
            _write_json(json_path, results, complete=False)

    for name, bench in benches.items():
        rows = bench(args)
        bound = asyncio.timeout(row_timeout)
        try:
            while True:
                bound = asyncio.timeout(row_timeout)
                async with bound:
                    row = await anext(rows)
                keep({**row, "bench": name, "verdict": verdict(row)})
        except StopAsyncIteration:
            pass
        except Exception as exc:  # the entry point: one bench's failure is its row
            error = (
                f"TimeoutError: no row within --row-timeout {row_timeout:g} s"
                if bound.expired()
                else _one_line(exc)
            )
            keep({"name": name, "bench": name, "verdict": FAILED, "error": error})
        finally:
            await rows.aclose()
    _summary(results, out)
    if json_path is not None:
        _write_json(json_path, results, complete=True)
        print(f"figures written to {json_path}", file=out, flush=True)
    return 1 if any(row["verdict"] == FAILED for row in results) else 0


def listed(measure: Callable[[argparse.Namespace], Awaitable[list[Result]]]) -> Bench:
    """A bench from a function returning all its rows at once (printed when it returns)."""

    async def rows(args: argparse.Namespace) -> AsyncGenerator[Result, None]:
        for row in await measure(args):
            yield row

    return rows
