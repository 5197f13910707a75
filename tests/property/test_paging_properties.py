"""Properties of paged history: pages concatenate to the whole history, cursors round-trip."""

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property.strategies import calls, events
from tests.support.redaction import record_redaction_only
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.events import LedgerEvent, SessionStarted, ThoughtRedacted
from thoughtledger.ledger.store.memory import MemoryEventStore
from thoughtledger.projections.answers import JsonDict, branch_sets, thought_history
from thoughtledger.projections.paging import HistoryCursor, PageBuilder
from thoughtledger.projections.state import empty, replay

_BRANCH_CHOICES = st.none() | st.sampled_from(["a", "b", "c"])


def _filtered(history: list[JsonDict], branch: str | None) -> list[JsonDict]:
    """The thoughts of ``branch``: those opening or extending it (a thought given only a
    ``branchId`` is on no branch, as in the session's branch sets)."""
    return [
        item
        for item in history
        if branch is None
        or (item["kind"] in ("branch.opened", "branch.extended") and item.get("branchId") == branch)
    ]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(events, max_size=25),
    st.integers(1, 7),
    st.integers(1, 9),
    st.none() | st.integers(1, 600),
    st.data(),
)
def test_pages_built_from_windows_of_any_events_concatenate_to_the_whole_history(
    stream: list[LedgerEvent],
    limit: int,
    chunk: int,
    max_bytes: int | None,
    data: st.DataObject,
) -> None:
    """Any events at all (clears, expiries and redactions anywhere), any page and window size.

    A redaction here names a version that may hold a thought whose text is still stored (as a
    redaction cut short after its event leaves it): the page shows it redacted, as the fold does.
    """

    async def scenario() -> None:
        store = MemoryEventStore()
        records = await store.append("s", stream, expected_version=0) if stream else []
        whole = thought_history(replay(records, empty("s")))
        named = frozenset(r.event.version for r in records if isinstance(r.event, ThoughtRedacted))
        present = sorted({item["branchId"] for item in whole if "branchId" in item})
        branch = data.draw(st.none() | st.sampled_from([*present, "nowhere"]), label="branch")
        pages: list[list[JsonDict]] = []
        after = 0
        while after < len(records):
            builder = PageBuilder(
                limit, branch, max_bytes, after_version=after, redacted_versions=named
            )
            while not builder.full and builder.after_version < len(records):
                window = await store.read_stream(
                    "s", after_version=builder.after_version, limit=chunk
                )
                builder.feed(window)
            assert builder.after_version > after or builder.items  # paging always moves on
            assert len(builder.items) <= limit
            if max_bytes is not None and len(builder.items) > 1:
                assert builder.size <= max_bytes
            pages.append(builder.items)
            cursor = HistoryCursor("s", builder.after_version, None, branch, bool(pages[-1]))
            assert HistoryCursor.decode(cursor.encode()) == cursor
            after = HistoryCursor.decode(cursor.encode()).after_version
        assert [item for page in pages for item in page] == _filtered(whole, branch)

    asyncio.run(scenario())


@settings(max_examples=40, deadline=None)
@given(calls, st.integers(1, 5), _BRANCH_CHOICES, st.booleans(), st.data())
def test_facade_pages_equal_the_history_of_the_state_now_and_as_of_any_version(
    sequence: list[dict[str, Any]],
    limit: int,
    branch: str | None,
    clear: bool,
    data: st.DataObject,
) -> None:
    """Sessions recorded through the facade (revisions, branches, a clear at the end), some of
    whose thoughts have a redaction cut short after its event (the text still stored)."""

    async def scenario() -> None:
        ledger = Ledger(MemoryEventStore())
        for call in sequence:
            await ledger.think("s", call)
        thoughts = [t.version for t in (await ledger.state("s")).thoughts]
        chosen = data.draw(st.lists(st.sampled_from(thoughts), unique=True), label="redacted")
        for thought_version in chosen:
            await record_redaction_only(ledger, "s", thought_version)
        if clear:
            await ledger.clear_session("s")
        state = await ledger.state("s")
        version = data.draw(st.none() | st.integers(1, state.version), label="as_of_version")
        at = await ledger.state("s", as_of_version=version)
        expected = _filtered(thought_history(at), branch)
        if branch is not None:
            if branch not in at.branches:
                assert expected == []
                return  # an unknown branch is refused: tests/integration/test_history_paging.py
            (listed,) = [b for b in branch_sets(at) if b["branchId"] == branch]
            assert [(i["thoughtNumber"], i["thought"], i["version"]) for i in expected] == [
                (t["thoughtNumber"], t["thought"], t["version"]) for t in listed["thoughts"]
            ]
        items: list[JsonDict] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await ledger.history(
                "s", limit=limit, after=cursor, branch=branch, as_of_version=version
            )
            pages += 1
            assert (page.status, page.thought_count) == (at.status, at.thought_count)
            assert page.version == at.version
            items += page.items
            if not page.more:
                assert page.next_cursor is None
                break
            cursor = page.next_cursor
        assert items == expected
        assert pages <= len(expected) // limit + 1

    asyncio.run(scenario())


def test_a_session_holding_only_its_start_has_an_empty_first_page() -> None:
    """The count leaves the start out, and the status is the empty one."""

    async def scenario() -> None:
        store = MemoryEventStore()
        await store.append("s", [SessionStarted(metadata={})], expected_version=0)
        page = await Ledger(store).history("s")
        assert (page.items, page.more, page.status, page.thought_count) == ([], False, "empty", 0)

    asyncio.run(scenario())
