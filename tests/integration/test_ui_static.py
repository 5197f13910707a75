"""The web app's own files over real HTTP: the page names every shipped script in load order, the
app serves each, and ``export --html`` inlines the same scripts in the same order."""

import importlib.resources
import re

import httpx
import pytest

from tests.support.web import app_on_loopback
from thoughtledger import Ledger
from thoughtledger.adapters.ui.export import html_export
from thoughtledger.adapters.ui.routes import SESSION_SCRIPTS, static_text
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio


def _shipped(suffix: str) -> set[str]:
    folder = importlib.resources.files("thoughtledger.adapters.ui") / "static"
    return {entry.name for entry in folder.iterdir() if entry.name.endswith(suffix)}


async def test_the_page_loads_every_shipped_script_in_order_and_the_export_inlines_them() -> None:
    ledger = Ledger(MemoryEventStore(), ttl=None)
    try:
        async with app_on_loopback(ledger) as base, httpx.AsyncClient(base_url=base) as http:
            page = (await http.get("")).text
            named = re.findall(r'<script src="/static/([^"]+)" defer></script>', page)
            # The session view's parts first, its frame (session.js) last of them, then the
            # app's own parts (forks, which the export has no server for), the app last.
            assert named == [
                *SESSION_SCRIPTS,
                "acts.js",
                "forks.js",
                "review.js",
                "analytics.js",
                "live-socket.js",
                "app.js",
            ]
            assert SESSION_SCRIPTS[-1] == "session.js"
            # The sign-in page (shown with --auth) names the one script the app page does not.
            signin = static_text("signin.html")
            assert re.findall(r'<script src="/static/([^"]+)" defer></script>', signin) == [
                "signin.js"
            ]
            named_anywhere = [*named, "signin.js"]
            assert set(named_anywhere) == _shipped(".js")
            served = {name: await http.get(f"static/{name}") for name in named_anywhere}
            for name, answer in served.items():
                assert answer.status_code == 200, name
                assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
                assert answer.text.startswith("// "), name
            for name in _shipped(".css"):
                assert (await http.get(f"static/{name}")).status_code == 200
        exported = html_export([{"sessionId": "s-1", "events": []}], title="t")
        code = re.search(r"<script>(.*?)</script>", exported, re.S)
        assert code is not None
        assert code.group(1) == "\n".join(served[name].text for name in SESSION_SCRIPTS)
    finally:
        await ledger.aclose()
