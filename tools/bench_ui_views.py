"""Benchmark of the session page's timeline and graph, and of an act seen live in another page.

Usage:
    tools/bench_ui_views.py [--thoughts N] [--json FILE]

Three figures, each beside a baseline measured the same way in the same run (headless
Chromium against the app served in this process over a SQLite ledger):
- the Timeline tab of a 10,000-thought session becoming interactive (the click on the tab to the
  first idle moment after it is drawn), against the same tab on a one-thought session;
- the same for the Graph tab;
- an annotation made from one page (the click on **Annotate**) until another page open on the
  session shows its note, against a thought appended by the ledger itself (no page, no request)
  until that page shows it: the live feed alone. ``tools/bench_ui.py`` adds these rows to its
  own.
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from thoughtledger import open_ledger
from thoughtledger.api.service import Ledger

Result = dict[str, Any]
ROUNDS = 5

_OPEN_TAB = """
async (name) => {
  const start = performance.now();
  document.getElementById("tab-" + name).click();
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - start;
}
"""

_WATCH = """
(label) => {
  window.tlSeen = null;
  const tree = document.getElementById("tree");
  const look = () => {
    if (window.tlSeen === null && tree.querySelector('[data-label="' + label + '"], .fresh-mark'))
      window.tlSeen = Date.now();
  };
  new MutationObserver(look).observe(tree, { subtree: true, childList: true, characterData: true });
}
"""

_ANNOTATE = """
(label) => {
  document.getElementById("annotate-label").value = label;
  const start = Date.now();
  document.getElementById("annotate").click();
  return start;
}
"""

_WATCH_TEXT = """
(text) => {
  window.tlSeen = null;
  const tree = document.getElementById("tree");
  new MutationObserver(() => {
    if (window.tlSeen === null && tree.textContent.includes(text)) window.tlSeen = Date.now();
  }).observe(tree, { subtree: true, childList: true });
}
"""


def _ms(values: list[float]) -> float:
    return round(statistics.median(values), 1)


async def _tab_times(page: Any, base: str, session_id: str, tab: str) -> list[float]:
    times = []
    for _round in range(ROUNDS):
        await page.goto(f"{base}sessions/{session_id}", wait_until="commit")
        await page.wait_for_selector("#acts")
        times.append(await page.evaluate(_OPEN_TAB, tab))
    return times


async def _acts_seen(ledger: Ledger, base: str, session_id: str) -> tuple[list[float], list[float]]:
    """Annotation from page A until page B shows it; a ledger append until page B shows it."""
    from bench_ui import ARGS, CHROMIUM
    from playwright.async_api import async_playwright

    annotated, appended = [], []
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            acting = await (await browser.new_context()).new_page()
            watching = await (await browser.new_context()).new_page()
            for page in (acting, watching):
                await page.goto(f"{base}sessions/{session_id}")
                await page.wait_for_selector("#acts")
                await page.wait_for_selector(".live-dot.on")
            await acting.locator("#tree li.thought").first.click()
            for n in range(ROUNDS):
                label = f"seen-{n}"
                await watching.evaluate(_WATCH, label)
                start = await acting.evaluate(_ANNOTATE, label)
                await watching.wait_for_function("() => window.tlSeen !== null")
                annotated.append(await watching.evaluate("() => window.tlSeen") - start)
                await acting.wait_for_selector("#act-result.done")

                text = f"appended by the ledger {n}"
                await watching.evaluate(_WATCH_TEXT, text)
                state = await ledger.state(session_id)
                call = {
                    "thought": text,
                    "thought_number": state.thought_count + 1,
                    "total_thoughts": state.thought_count + 1,
                    "next_thought_needed": True,
                }
                start_ms = time.time() * 1000
                await ledger.think(session_id, call)
                await watching.wait_for_function("() => window.tlSeen !== null")
                appended.append(await watching.evaluate("() => window.tlSeen") - start_ms)
        finally:
            await browser.close()
    return annotated, appended


async def bench_views(thoughts: int = 10_000) -> list[Result]:
    """The timeline, graph and act-seen figures (see the module's docstring)."""
    from bench_ui import ARGS, CHROMIUM, _record, _serving
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'views.db'}"
        async with open_ledger(url, ttl=None) as ledger:
            await _record(ledger, "big-session", thoughts)
            await _record(ledger, "small-session", 1)
            await _record(ledger, "acts-session", 100)
            async with _serving(ledger) as base:
                tabs: dict[tuple[str, str], list[float]] = {}
                async with async_playwright() as driver:
                    browser = await driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                    try:
                        page = await browser.new_page(viewport={"width": 1280, "height": 800})
                        for tab in ("timeline", "graph"):
                            for session_id in ("small-session", "big-session"):
                                tabs[tab, session_id] = await _tab_times(
                                    page, base, session_id, tab
                                )
                    finally:
                        await browser.close()
                annotated, appended = await _acts_seen(ledger, base, "acts-session")
    rows: list[Result] = []
    for tab in ("timeline", "graph"):
        big, small = _ms(tabs[tab, "big-session"]), _ms(tabs[tab, "small-session"])
        rows.append(
            {
                "name": f"ui: {tab} of a {thoughts:,}-thought session interactive (ms, Chromium)",
                "ours_ms_p50": big,
                "ours_ms_max": round(max(tabs[tab, "big-session"]), 1),
                "baseline_ms_p50": small,
                "ratio": round(big / max(small, 0.1), 1),
                "target_ms": 1000,
                "baseline": f"the {tab} tab of a one-thought session, same browser, same run",
            }
        )
    seen, fed = _ms(annotated), _ms(appended)
    rows.append(
        {
            "name": "ui: an annotation from a page visible in another open page (ms)",
            "ours_ms_p50": seen,
            "ours_ms_max": round(max(annotated), 1),
            "baseline_ms_p50": fed,
            "ratio": round(seen / max(fed, 0.1), 2),
            "target_ms": 200,
            "baseline": "a thought the ledger appends itself (no page, no request) until the "
            "other page shows it: the live feed alone",
        }
    )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--thoughts", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    rows = asyncio.run(bench_views(args.thoughts))
    for row in rows:
        print(json.dumps(row))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
