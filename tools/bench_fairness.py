"""Another principal's latency while one principal does its worst within its rights.

A SQLite ledger holds a session of ``--fairness-thoughts`` thoughts (default 200,000) of the
principal ``mallory`` (a writer) and a small one of ``alice``. ``serve --http --auth`` (with every
tool) and ``ui --auth`` run over it in child processes, as a team runs them. Then, in one run:

* **baseline**: alice alone for :data:`BASELINE_SECONDS`: on ``serve``, a ``sequentialthinking``
  call every :data:`INTERVAL` through the MCP SDK's client; on the ui, a read of her session page
  every :data:`INTERVAL`; each latency counts from when the call was due (no coordinated
  omission);
* **attacked**: the same calls for :data:`ATTACK_SECONDS` while mallory, from another process,
  opens live sockets on ``/ws`` and ``/api/ws`` and event streams of its own huge session until
  refused (and holds them), opens MCP sessions until refused, signs in to the ui again and
  again, opens the live feed of its huge session again and again, and floods both servers with
  searches.

Each row is alice's p99 attacked against her p99 alone (a ratio in the same run), with the p99
budget (:data:`P99_BUDGET_MS`) and her failed calls (there must be none).

Usage: tools/bench fairness [--fairness-thoughts N] [--quick]
"""

import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

Result = dict[str, Any]
_ROOT = str(Path(__file__).resolve().parent.parent)
INTERVAL = 0.05
"""Seconds between the calls alice means to make on each server (20 a second)."""
WARM_UP_SECONDS = 6.0
"""Alice's calls before anything is measured: a server's first requests on a large ledger pay
for what it reads once (measured apart by ``tools/bench touch`` and ``derived``)."""
BASELINE_SECONDS = 6.0
ATTACK_SECONDS = 10.0
P99_BUDGET_MS = 100.0
"""Alice's p99 on either server while mallory does its worst."""
WAIT = 60.0


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98] if len(samples) >= 2 else samples[0]


def _step(number: int, text: str) -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": number,
        "next_thought_needed": True,
    }


async def _build(db: str, thoughts: int) -> tuple[str, str]:
    """Mallory's huge session and alice's small one; their ids."""
    from thoughtledger import open_ledger
    from thoughtledger.api import Principal

    async with open_ledger(db, ttl=None) as ledger:
        mallory = ledger.as_principal(Principal("mallory", "writer"))
        huge = (await mallory.think_batch(None, [_step(1, "mallory plans option 1")]))[-1]
        for start in range(2, thoughts + 1, 1000):
            batch = [
                _step(n, f"mallory weighs option {n % 97} against {n * 7919 % 10007}")
                for n in range(start, min(start + 1000, thoughts + 1))
            ]
            await mallory.think_batch(huge.session_id, batch)
        alice = ledger.as_principal(Principal("alice", "writer"))
        small = await alice.think(None, _step(1, "alice plans her day"))
        await ledger.mark_loops()
        return huge.session_id, small.session_id


def _tokens(path: Path) -> dict[str, str]:
    from thoughtledger.adapters.auth.tokens import TokenFile, save_tokens

    tokens, minted = TokenFile(), {}
    for name in ("alice", "mallory"):
        tokens, minted[name], _ = tokens.add(name, "writer", now=datetime.now(UTC))
    save_tokens(path, tokens)
    return minted


def _start(argv: list[str], log: Path, pattern: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server, its output to ``log``; its address, once ``pattern`` finds it there."""
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603  # our interpreter, our module
            [sys.executable, "-m", "thoughtledger.adapters.cli", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the server did not start: {log.read_text(errors='replace')[-400:]}")


async def _paced(call: Any, seconds: float, latencies: list[float], failures: list[str]) -> None:
    """``call()`` due every :data:`INTERVAL`; each latency counts from when it was due."""
    loop = asyncio.get_running_loop()
    due = loop.time()
    end = due + seconds
    while due < end:
        due += INTERVAL
        if (wait := due - loop.time()) > 0:
            await asyncio.sleep(wait)
        try:
            await call()
        except Exception as exc:  # a bench counts every failure, whatever it is
            failures.append(f"{type(exc).__name__}: {exc}"[:200])
        latencies.append((loop.time() - due) * 1000)


async def _alice(
    mcp_url: str, ui_base: str, token: str, session_id: str, seconds: float
) -> tuple[list[float], list[float], list[str]]:
    """Alice's calls on both servers for ``seconds``: latencies (serve, ui) and failures."""
    import httpx
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    serve_ms: list[float] = []
    ui_ms: list[float] = []
    failures: list[str] = []
    number = 0
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
        httpx.AsyncClient(base_url=ui_base, headers=headers, timeout=WAIT) as ui,
    ):

        async def think() -> None:
            nonlocal number
            number += 1
            result = await client.call_tool("sequentialthinking", _serve_step(number))
            if result.is_error:
                raise RuntimeError(str(result.content)[:200])

        async def page() -> None:
            answer = await ui.get(f"api/sessions/{session_id}")
            if answer.status_code != 200:
                raise RuntimeError(f"ui answered {answer.status_code}")

        await asyncio.gather(
            _paced(think, seconds, serve_ms, failures), _paced(page, seconds, ui_ms, failures)
        )
    return serve_ms, ui_ms, failures


def _serve_step(number: int) -> dict[str, Any]:
    return {
        "thought": f"alice step {number}",
        "thoughtNumber": number,
        "totalThoughts": number,
        "nextThoughtNeeded": True,
    }


async def bench_fairness(thoughts: int = 200_000) -> list[Result]:
    """Build, serve, measure alice alone and under mallory (see the module docstring)."""
    rows: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        folder.chmod(0o700)  # noqa: ASYNC240  # once, before anything runs
        db = f"sqlite:///{folder / 'fair.db'}"
        huge, small = await _build(db, thoughts)
        tokens = _tokens(folder / "tokens.json")
        auth = ["--auth", str(folder / "tokens.json")]
        serve, mcp_url = _start(
            ["serve", "--db", db, "--http", "--port", "0", "--tools", "all", *auth],
            folder / "serve.log",
            r"url=(http://127\.0\.0\.1:\d+/mcp)",
        )
        ui, ui_base = _start(
            ["ui", "--db", db, "--port", "0", *auth],
            folder / "ui.log",
            r"thoughtledger ui: (http://127\.0\.0\.1:\d+/)",
        )
        try:
            await _alice(mcp_url, ui_base, tokens["alice"], small, WARM_UP_SECONDS)
            base_serve, base_ui, base_failed = await _alice(
                mcp_url, ui_base, tokens["alice"], small, BASELINE_SECONDS
            )
            attack = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "attack",
                mcp_url,
                ui_base,
                tokens["mallory"],
                huge,
                str(ATTACK_SECONDS + 5),
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": _ROOT},
            )
            assert attack.stdout is not None
            ready = await asyncio.wait_for(attack.stdout.readline(), WAIT)
            held = json.loads(ready)
            serve_ms, ui_ms, failed = await _alice(
                mcp_url, ui_base, tokens["alice"], small, ATTACK_SECONDS
            )
            done = json.loads(await asyncio.wait_for(attack.stdout.readline(), WAIT))
            await attack.wait()
        finally:
            for process in (serve, ui):
                process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(WAIT)
    mallory = {**held, **done}
    for where, ours, base in (
        ("serve --http: sequentialthinking", serve_ms, base_serve),
        ("ui: her session's page", ui_ms, base_ui),
    ):
        p99, p99_alone = _p99(ours), _p99(base)
        within = "yes" if p99 <= P99_BUDGET_MS and not failed else "NO"
        rows.append(
            {
                "name": f"another principal's p99 on {where} while one principal does its worst "
                f"within its rights (its own {thoughts:,}-thought session)",
                "ours_p99_ms": round(p99, 2),
                "ours_max_ms": round(max(ours), 2),
                "calls": len(ours),
                "failed_calls": len(failed),
                "baseline": f"the same calls for {BASELINE_SECONDS:g} s with no attacker, same "
                "servers, same run",
                "baseline_p99_ms": round(p99_alone, 2),
                "baseline_failed": len(base_failed),
                "ratio": round(p99 / p99_alone, 2),
                "target": None,
                "within_budget_ms": f"{P99_BUDGET_MS:g} and no failed call: {within}",
                "attacker": mallory,
                "lower_is_better": True,
            }
        )
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["attack"]:
        from bench_fairness_attack import attack

        mcp, base, token, huge, seconds = sys.argv[2:7]
        asyncio.run(attack(mcp, base, token, huge, float(seconds)))
    else:
        for row in asyncio.run(bench_fairness(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)):
            print(row)
