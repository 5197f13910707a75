"""Pictures of every page of `thoughtledger ui` at 1280x800, for a person to look at.

Usage:
    tools/screenshots.py [--out DIR] [--width W] [--height H] [--full]

Records a small ledger in a temporary directory (the demo session, a few more sessions of two
agents, an annotation, a redaction and a fork), starts ``thoughtledger ui`` on it (once without
``--auth`` and once with, for the sign-in page and a refused act), drives headless Chromium
through every page and writes one PNG per page into ``build/screenshots`` (what the window shows,
as a person first sees it; ``--full`` adds the whole page below). Needs Playwright and Chromium.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("THOUGHTLEDGER_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
_URL = re.compile(r"(http://127\.0\.0\.1:\d+/)")

_SEED = """
import asyncio, sys
from thoughtledger import open_ledger
from thoughtledger.api import Principal

async def main() -> None:
    url = sys.argv[1]
    async with open_ledger(url, ttl=None) as ledger:
        for n, agent in enumerate(["planner", "coder", "planner", "reviewer-with-a-long-name"]):
            meta = {"agent": agent, "client": "screenshots 1.0"}
            first = None
            for i in range(1, 4 + n):
                call = {"thought": f"Step {i} of the {agent}'s run {n}: weigh the options again",
                        "thought_number": i, "total_thoughts": 3 + n,
                        "next_thought_needed": i < 3 + n}
                done = await ledger.think(first, call, metadata=meta)
                first = done.session_id
        # Rita's own session, recorded while she could write (she holds a reader token now).
        rita = ledger.as_principal(Principal("rita", "writer"))
        mine = await rita.think(None, {"thought": "rita's own question", "thought_number": 1,
                                       "total_thoughts": 2, "next_thought_needed": True})
        await rita.think(mine.session_id, {"thought": "rita answers it", "thought_number": 2,
                                           "total_thoughts": 2, "next_thought_needed": False})
    print(mine.session_id)

asyncio.run(main())
"""


def _cli(*args: str) -> str:
    ran = subprocess.run(  # noqa: S603  # our interpreter, our module
        [sys.executable, "-m", "thoughtledger.adapters.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return ran.stdout


def seed(url: str) -> dict[str, str]:
    """Record the ledger the pictures show; return the ids they need."""
    demo = json.loads(_cli("demo", "--db", url, "--json"))["sessionId"]
    _cli(
        "annotate",
        demo,
        "3",
        "--label",
        "wrong-premise",
        "--score",
        "-1",
        "--db",
        url,
        "--note",
        "The job moved a month ago; the latency began last week.",
        "--by",
        "rev",
    )
    _cli("annotate", demo, "7", "--label", "good-call", "--db", url, "--by", "rev")
    fork = json.loads(_cli("fork", demo, "--at", "5", "--db", url, "--json"))["sessionId"]
    ran = subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _SEED, url], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return {"demo": demo, "fork": fork, "rita": ran.stdout.strip()}


@contextmanager
def serving(url: str, *options: str) -> Iterator[str]:
    """``thoughtledger ui --db URL --port 0 OPTIONS`` in a child process; yield its address."""
    command = [sys.executable, "-m", "thoughtledger.adapters.cli", "ui", "--db", url]
    with subprocess.Popen(  # noqa: S603  # our interpreter, our module
        [*command, "--port", "0", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None  # piped above
        found = _URL.search(process.stdout.readline())
        try:
            if found is None:
                raise SystemExit(f"thoughtledger ui did not start: {process.communicate()[1]}")
            yield found.group(1)
        finally:
            process.terminate()
            process.communicate(timeout=20)


def main() -> int:
    """Write the pictures; print where each went."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "screenshots")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--full", action="store_true", help="also a picture of each whole page")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/ledger.db"
        ids = seed(url)
        token_file = Path(folder) / "tokens.json"
        _cli(
            "token",
            "add",
            "rita",
            "--role",
            "reader",
            "--file",
            str(token_file),
            "-o",
            f"{folder}/rita.token",
        )
        rita = Path(f"{folder}/rita.token").read_text().strip()
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = browser.new_context(viewport={"width": args.width, "height": args.height})
            page = context.new_page()

            def shoot(name: str, address: str, ready: str) -> None:
                page.goto(address)
                page.wait_for_selector(ready)
                page.wait_for_timeout(300)  # the badges and the live dot settle
                path = args.out / f"{name}.png"
                page.screenshot(path=str(path))
                print(path)
                if args.full:
                    page.screenshot(path=str(args.out / f"{name}-full.png"), full_page=True)

            with serving(url) as base:
                demo, fork = ids["demo"], ids["fork"]
                shoot("sessions", base, "#sessions tbody tr .badge")
                shoot("session", f"{base}sessions/{demo}", "#tree li.thought")
                shoot("session-compare", f"{base}sessions/{demo}?v=7&compare=4", "#compare-panel")
                page.goto(f"{base}sessions/{demo}")
                page.wait_for_selector("#tree li.thought")
                page.select_option("#label-filter", "wrong-premise")
                page.screenshot(path=str(args.out / "session-label-filter.png"))
                print(args.out / "session-label-filter.png")
                for view in ("timeline", "graph"):
                    page.goto(f"{base}sessions/{demo}")
                    page.wait_for_selector("#tree li.thought")
                    page.locator(f"#tab-{view}").click()
                    page.wait_for_selector(f"#{view} svg")
                    page.locator(f"#{view} [data-v]").nth(3).click()
                    page.screenshot(path=str(args.out / f"session-{view}.png"))
                    print(args.out / f"session-{view}.png")
                shoot("fork", f"{base}sessions/{fork}", "#fork-of a")
                shoot("fork-compare", f"{base}sessions/{fork}/compare", ".sides")
                shoot("analytics", f"{base}analytics", ".charts svg")
                shoot("search", f"{base}search?q=replica", "#search-results")
                shoot("search-refused", f"{base}search?q=replica+OR+index", "#search-error")
                shoot("review", f"{base}review?q=replica", "#review-item .review-text")
                shoot("review-start", f"{base}review", "#review-filter")
            with serving(url, "--auth", str(token_file)) as base:
                shoot("sign-in", base, "#signin")
                page.fill("#token", rita)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_selector("#sessions")
                shoot("sessions-reader", base, "#main h1")
                page.goto(f"{base}sessions/{ids['rita']}")
                page.wait_for_selector("#acts")
                page.locator("#tree li.thought").first.click()
                page.fill("#annotate-label", "looks-fine")
                page.get_by_role("button", name="Annotate").click()
                page.wait_for_selector("#act-result.refused")
                page.screenshot(path=str(args.out / "session-refused.png"))
                print(args.out / "session-refused.png")
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
