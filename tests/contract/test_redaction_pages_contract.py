"""Paged history of a redaction cut short: the text is still stored, every page shows it redacted.

A redaction appends its ``thought.redacted`` events first and strips the texts after; a crash
between the two leaves the text stored with the redaction recorded. These tests produce that
state on every backend (the first step alone, see :mod:`tests.support.redaction`) and read it
page by page.
"""

import pytest

from tests.support.backends import Backend
from tests.support.raw_store import raw_store
from tests.support.redaction import record_redaction_only
from thoughtledger import Ledger
from thoughtledger.api.history import HistoryPage
from thoughtledger.ledger.content import REDACTED
from thoughtledger.projections.answers import JsonDict, thought_history

pytestmark = pytest.mark.anyio

SECRET = "the key is sk-live-7f3a9c-SECRET"  # noqa: S105  # the text a redaction removes
TEXTS = ["look at the logs", f"paste: {SECRET}", "rotate the key"]


async def cut_short(ledger: Ledger) -> str:
    """A session of three thoughts whose second one's redaction stopped after its event.

    Versions: 1 the start, 2-4 the thoughts, 5 the ``thought.redacted`` event naming version 3.
    """
    session = await ledger.new_session()
    for number, text in enumerate(TEXTS, start=1):
        await session.process_sequential_thinking(
            thought=text, thought_number=number, total_thoughts=3, next_thought_needed=number < 3
        )
    await record_redaction_only(ledger, session.id, 3)
    store = raw_store(ledger)
    assert SECRET in (await store.read_stream(session.id))[2].payload
    return session.id


async def all_pages(
    ledger: Ledger, session_id: str, *, limit: int, as_of_version: int | None = None
) -> tuple[list[JsonDict], list[HistoryPage]]:
    """Every item of the session's pages of ``limit`` thoughts, and the pages."""
    pages = [await ledger.history(session_id, limit=limit, as_of_version=as_of_version)]
    while pages[-1].next_cursor is not None:
        pages.append(await ledger.history(session_id, limit=limit, after=pages[-1].next_cursor))
    return [item for page in pages for item in page.items], pages


def texts(items: list[JsonDict]) -> list[tuple[object, bool]]:
    return [(item["thought"], bool(item.get("redacted", False))) for item in items]


async def test_every_page_shows_a_thought_redacted_once_its_redaction_is_recorded(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await cut_short(ledger)
        folded = thought_history(await ledger.state(session_id))
        assert texts(folded) == [(TEXTS[0], False), (REDACTED, True), (TEXTS[2], False)]

        for limit in (1, 2, 100):
            items, pages = await all_pages(ledger, session_id, limit=limit)
            assert items == folded
            assert all(SECRET not in str(page.items) for page in pages)
            assert {(page.status, page.thought_count, page.version) for page in pages} == {
                ("complete", 3, 5)
            }
        # A page that starts after the redacted thought shows the rest as they are.
        first = await ledger.history(session_id, limit=2)
        assert first.next_cursor is not None
        rest = await ledger.history(session_id, after=first.next_cursor)
        assert texts(rest.items) == [(TEXTS[2], False)]

        session_page = await ledger.session(session_id).history(limit=5)
        assert isinstance(session_page, HistoryPage)
        assert session_page.items == folded
    finally:
        await ledger.aclose()


async def test_a_read_as_of_before_the_redaction_event_shows_it_redacted_as_the_fold_does(
    backend: Backend,
) -> None:
    """Reading further back never undoes a recorded redaction: once the text is stripped it is
    gone as of every version, and the fold's view as of one is a cut of the state now."""
    ledger = Ledger(await backend.open())
    try:
        session_id = await cut_short(ledger)
        for version in (3, 4, 5):
            folded = thought_history(await ledger.state(session_id, as_of_version=version))
            assert texts(folded)[1] == (REDACTED, True)
            items, pages = await all_pages(ledger, session_id, limit=1, as_of_version=version)
            assert items == folded
            assert {page.version for page in pages} == {version}
        before = await ledger.history(session_id, as_of_version=2)
        assert texts(before.items) == [(TEXTS[0], False)]
        report = await ledger.redaction.redact(
            session_id, thought_number=2, reason="again", by="ops"
        )
        assert report.stripped == 1
        completed, _ = await all_pages(ledger, session_id, limit=1, as_of_version=4)
        assert texts(completed)[1] == (REDACTED, True)
    finally:
        await ledger.aclose()


async def test_completing_the_redaction_changes_no_page(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await cut_short(ledger)
        interrupted, _ = await all_pages(ledger, session_id, limit=2)
        report = await ledger.redaction.redact(
            session_id, thought_number=2, reason="again", by="ops"
        )
        assert (report.recorded, report.stripped) == (0, 1)
        completed, _ = await all_pages(ledger, session_id, limit=2)
        assert completed == interrupted
        assert all(SECRET not in r.payload for r in await raw_store(ledger).read_stream(session_id))
    finally:
        await ledger.aclose()
