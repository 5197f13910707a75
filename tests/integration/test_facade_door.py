"""The facade is the only door to a ledger's store: what its callers need, on every backend.

Every way in or out reaches events only through :class:`thoughtledger.api.Ledger`. That they
import nothing of ``thoughtledger.ledger.store`` is an import-linter contract (``pyproject.toml``);
that they touch no store attribute (``ledger._store``), which no import shows, is checked here.
"""

import ast
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from tests.support.backends import Backend
from thoughtledger.adapters.cli import show
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.store.base import LedgerStore

pytestmark = pytest.mark.anyio

ADAPTERS = Path(__file__).resolve().parents[2] / "thoughtledger" / "adapters"
BEHIND_THE_FACADE = sorted(ADAPTERS.rglob("*.py"))


def thought(number: int, total: int = 3) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
    }


class CountingStore:
    """Hands every call on to a real store, counting the calls by method name."""

    def __init__(self, inner: LedgerStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)

        return counted


def store_attributes(path: Path) -> list[str]:
    """Every ``.store`` or ``._store`` attribute a module reads."""
    return [
        f"{path.name}:{node.lineno}: .{node.attr}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("store", "_store")
    ]


def test_no_way_in_or_out_touches_a_store() -> None:
    assert (ADAPTERS / "cli" / "show.py") in BEHIND_THE_FACADE  # the glob found the packages
    assert [found for path in BEHIND_THE_FACADE for found in store_attributes(path)] == []


async def test_a_ledgers_store_is_private_to_it(store: LedgerStore) -> None:
    assert not hasattr(Ledger(store), "store")


async def test_show_at_a_version_reads_the_head_once(store: LedgerStore) -> None:
    first = await Ledger(store).think(None, thought(1))
    for number in (2, 3):
        await Ledger(store).think(first.session_id, thought(number))
    counting = CountingStore(store)
    # A fresh ledger: nothing cached, so every read reaches the store.
    ledger = Ledger(cast(LedgerStore, counting), ttl=None)

    state, latest = await show.load(ledger, first.session_id, at=2, as_of=None)

    assert (state.version, latest) == (2, 4)  # session.started and three thoughts
    assert counting.calls["stream_head"] + counting.calls["list_heads"] == 1
    assert counting.calls == Counter({"stream_head": 1, "read_stream": 1})


async def test_a_session_is_found_by_its_id_or_a_unique_prefix(store: LedgerStore) -> None:
    ledger = Ledger(store)
    for session_id in ("alpha-1", "alpha-2", "beta-1"):
        await ledger.think(session_id, thought(1))

    assert (await ledger.find_session("beta-1")).session_id == "beta-1"
    assert (await ledger.find_session("bet")).session_id == "beta-1"
    several = await ledger.find_session("alpha")
    assert (several.session_id, several.several) == (None, ["alpha-1", "alpha-2"])
    missing = await ledger.find_session("beta-2")
    assert (missing.session_id, missing.close) == (None, ["beta-1"])


async def test_export_yields_each_chosen_session_whole_or_every_session_in_id_order(
    store: LedgerStore,
) -> None:
    ledger = Ledger(store)
    for session_id in ("s-b", "s-a"):
        await ledger.think(session_id, thought(1))
        await ledger.think(session_id, thought(2))

    chosen = [[r.session_id for r in records] async for records in ledger.transfer.export(["s-b"])]
    every = [[r.version for r in records] async for records in ledger.transfer.export()]

    assert chosen == [["s-b", "s-b", "s-b"]]
    assert every == [[1, 2, 3], [1, 2, 3]]
    assert [head.session_id for head in await ledger.all_heads()] == ["s-a", "s-b"]


async def test_a_ledger_knows_its_own_files_on_every_backend(
    backend: Backend, store: LedgerStore
) -> None:
    ledger = Ledger(store)
    own = backend.sqlite_path
    mine = backend.name == "sqlite"

    for path in (own, own.with_name(own.name + "-wal"), own.with_name(own.name + "-shm")):
        assert ledger.transfer.is_own_file(path) is mine
    assert ledger.transfer.is_own_file(own.with_name("export.jsonl")) is False
