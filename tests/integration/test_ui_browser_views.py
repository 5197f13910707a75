"""A session's timeline and graph under Chromium, in the app and in the HTML export.

A person opens the Timeline tab: one bar per thought in its lane (main line, each branch, the
other events), coloured by kind; a click on a bar picks that thought for the inspector and the
acts while the slider stays where it was. The Graph tab draws the thoughts, the revision and
the branches with their fork point; a fork's graph starts from its source. The exported page
draws the same graph offline.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import record_demo, screenshot, watched_page
from tests.support.cli import sqlite_url
from tests.support.processes import ROOT, WAIT, child_env, thoughtledger
from tests.support.ui_app import ui_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.mark.slow
def test_the_timeline_and_the_graph_draw_the_session_and_a_click_picks_without_moving_the_slider(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session_id = record_demo(url)
    forked = thoughtledger("fork", session_id, "--at", "6", "--db", url, "--json")
    assert forked.returncode == 0, forked.stderr
    fork_id = json.loads(forked.stdout)["sessionId"]
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{app.base}sessions/{session_id}?v=8")
        page.wait_for_selector("#tree li.thought")
        tabs, tree = page.locator(".view-tabs").bounding_box(), page.locator("#tree").bounding_box()
        assert tabs is not None
        assert tree is not None
        assert tabs["y"] + tabs["height"] <= tree["y"]  # the tabs head the card
        page.locator("#tab-timeline").click()
        page.wait_for_selector("#timeline svg")
        assert page.locator("#tree").is_hidden()
        bars = page.locator("#timeline rect.bar")
        kinds = bars.evaluate_all("bars => bars.map((b) => b.getAttribute('class'))")
        # Nine thoughts (one revision, three on two branches) and the session's start.
        assert sorted(kinds) == sorted(
            ["bar main"] * 5 + ["bar revision"] + ["bar branch"] * 3 + ["bar other"]
        )
        lanes = page.locator("#timeline text.lane").all_text_contents()
        assert lanes == ["main line", "branch replica", "branch index", "other events"]
        assert page.locator("#timeline p").inner_text().startswith("9 thoughts over ")
        page.locator('#timeline rect[data-v="9"]').click()  # thought #7, after the slider
        assert page.locator("#version-slider").input_value() == "8"
        assert page.locator("#acts h2").inner_text() == "Thought #7 (version 9)"
        assert "Event at version 9 (picked; the slider is at 8)" in (
            page.locator("#inspector h2").inner_text()
        )
        assert page.locator('#timeline rect[data-v="9"]').get_attribute("class") == (
            "bar main picked"
        )
        screenshot(page, "session-timeline")

        page.locator("#tab-graph").click()
        page.wait_for_selector("#graph svg")
        nodes = page.locator("#graph g.node")
        assert nodes.count() == 9
        assert page.locator("#graph .edge.revises").count() == 1
        assert page.locator("#graph .edge.branch").count() == 2
        assert page.locator("#graph g.node.origin").count() == 1  # #3: both branches open there
        assert (page.locator("#graph g.node.origin text").text_content() or "").startswith("#3 ")
        assert (page.locator("#graph g.node.picked text").text_content() or "").startswith("#7 ")
        assert page.locator("#graph p").inner_text() == (
            "9 thoughts · 2 branches · 1 revision · 1 fork point"
        )
        page.locator('#graph g.node[data-v="4"] circle').click()
        assert page.locator("#acts h2").inner_text() == "Thought #3 (version 4)"
        assert page.locator("#version-slider").input_value() == "8"
        screenshot(page, "session-graph")
        page.locator("#tab-tree").click()
        assert page.locator("#tree").is_visible()
        picked = page.locator("#tree li.thought.picked .thought-text").text_content() or ""
        assert picked.startswith("The nightly-report job")

        page.goto(f"{app.base}sessions/{fork_id}")
        page.wait_for_selector("#acts")
        page.locator("#tab-graph").click()
        assert page.locator("#graph").inner_text() == "No thoughts yet."
        assert watched.errors == []

    page_file = tmp_path / "session.html"
    ran = thoughtledger("export", session_id, "--html", str(page_file), "--db", url)
    assert ran.returncode == 0, ran.stderr
    with watched_page(browser) as watched:
        page = watched.page
        page.goto(page_file.as_uri())
        page.wait_for_selector("#tree li.thought")
        page.locator("#tab-graph").click()
        assert page.locator("#graph g.node").count() == 9
        assert page.locator("#graph g.node.origin").count() == 1
        page.locator("#tab-timeline").click()
        assert page.locator("#timeline rect.bar").count() == 10
        assert page.locator("#acts").count() == 0  # the file only shows
        assert watched.errors == []


_GENERATED = """
import asyncio, sys
from thoughtledger import open_ledger
from thoughtledger.api import Generated
from thoughtledger.ledger.events import Generation

async def main() -> None:
    url = sys.argv[1]
    generation = Generation(
        model="small", provider="local", prompt_sha256="0" * 64, context_version=1,
        structured=True, latency_ms=1500, attempts=1, prompt_tokens=120, completion_tokens=40,
    )
    async with open_ledger(url, ttl=None) as ledger:
        call = {"thought": "a model's thought", "thought_number": 1, "total_thoughts": 1,
                "next_thought_needed": False}
        await ledger.think("by-model", call, generated=Generated("keep going", generation))

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_model_s_thought_shows_its_latency_and_tokens_on_the_timeline(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _GENERATED, url], cwd=ROOT, env=child_env(), check=True, timeout=WAIT
    )
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{app.base}sessions/by-model")
        page.wait_for_selector("#tree li.thought")
        page.locator("#tab-timeline").click()
        latency = page.locator("#timeline rect.latency")
        assert latency.count() == 1
        assert latency.locator("title").text_content() == "model small · 1.5 s · 120 + 40 tokens"
        assert watched.errors == []


_CAPTURED = """
import asyncio, sys
from thoughtledger import open_ledger
from thoughtledger.api.capture import CapturedAction, CapturedReasoning, CapturedSpan

async def main() -> None:
    span = CapturedSpan(
        trace_id="ab" * 16, span_id="cd" * 8, dialect="gen_ai", conversation="captured",
        model="model-x",
        parts=(CapturedReasoning("The weather decides the route."),
               CapturedAction("get_weather", "call_1", '{"city": "<b>Oslo</b>"}')),
    )
    async with open_ledger(sys.argv[1], ttl=None) as ledger:
        await ledger.as_principal(None).capture([span])

asyncio.run(main())
"""


@pytest.mark.slow
def test_captured_reasoning_and_its_actions_show_in_the_tree_and_have_their_lanes_on_the_timeline(
    browser: "Browser", tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    subprocess.run(  # noqa: S603  # our interpreter, a fixed script
        [sys.executable, "-c", _CAPTURED, url], cwd=ROOT, env=child_env(), check=True, timeout=WAIT
    )
    with ui_app(url, None) as app, watched_page(browser) as watched:
        page = watched.page
        page.goto(f"{app.base}sessions/captured")
        page.wait_for_selector("#acts")
        # The tree: the captured thought marked, its action in line right under it, the
        # sender's arguments shown as text (no element made of them).
        thought = page.locator("#tree li.thought")
        assert "[captured full]" in (thought.get_attribute("data-n") or "")
        action = page.locator("#tree li.thought + li.event.action")
        assert (action.text_content() or "").startswith(
            '↳ called get_weather({"city": "<b>Oslo</b>"}) after #1 · v3'
        )
        assert page.locator("#tree b").count() == 0
        screenshot(page, "session-captured")
        page.locator("#tab-timeline").click()
        lanes = page.locator("#timeline text.lane").all_text_contents()
        assert lanes == ["main line", "actions", "other events"]
        assert page.locator("#timeline rect.bar.captured").count() == 1
        action = page.locator("#timeline rect.bar.action")
        assert (action.locator("title").text_content() or "").startswith(
            "called get_weather after #1"
        )
        assert watched.errors == []
