"""Annotations on every backend: recorded, held by the fold, read back, redacted, refused."""

import pytest

from tests.support.backends import Backend
from tests.support.raw_store import raw_store
from tests.support.views import view_rows
from thoughtledger import Ledger
from thoughtledger.api import Principal
from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.envelope import format_time
from thoughtledger.ledger.errors import InvalidInputError, SessionNotFoundError
from thoughtledger.ledger.events import ThoughtAnnotated
from thoughtledger.ledger.store.columns import ANNOTATION_COLUMNS

pytestmark = pytest.mark.anyio

NOTE = "the premise is false: contact alice@example.org"


def call(number: int, last: int = 3) -> dict[str, object]:
    return {
        "thought": f"step {number}",
        "thought_number": number,
        "total_thoughts": last,
        "next_thought_needed": number < last,
    }


async def three_thoughts(ledger: Ledger, owner: str | None = None) -> str:
    session_id = (await ledger.think(None, call(1), owner=owner)).session_id
    for number in (2, 3):
        await ledger.think(session_id, call(number), owner=owner)
    return session_id


async def test_an_annotation_is_recorded_verified_and_read_back_after_reopening(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await three_thoughts(ledger)
        made = await ledger.annotate(
            session_id, 2, label="wrong-premise", note=NOTE, score=-1, by="reviewer"
        )
        second = await ledger.annotate(session_id, 2, label="needs-source")
        assert (made.version, made.thought_number, made.label, made.score) == (
            5,
            2,
            "wrong-premise",
            -1.0,
        )
        assert (made.note, made.by, made.redacted) == (NOTE, "reviewer", False)
        assert (second.version, second.note, second.score, second.by) == (6, "", None, None)
        state = await ledger.state(session_id)
        assert state.annotations == (made, second)
        assert [t.thought for t in state.thoughts] == ["step 1", "step 2", "step 3"]
        assert state.status == "complete"  # an annotation is not a step of the reasoning
        assert (await ledger.verify(session_id)).ok
        assert (await ledger.rebuild())[session_id].annotations == state.annotations
        stored = await raw_store(ledger).read_stream(session_id)
        assert isinstance(stored[4].event, ThoughtAnnotated)
        assert stored[4].event_type == "thought.annotated"
    finally:
        await ledger.aclose()
    if not backend.durable:
        return
    reopened = Ledger(await backend.open())
    try:
        state = await reopened.state(session_id)
        assert [(a.label, a.note, a.score) for a in state.annotations] == [
            ("wrong-premise", NOTE, -1.0),
            ("needs-source", "", None),
        ]
    finally:
        await reopened.aclose()


async def test_a_redacted_note_leaves_the_log_and_the_session_still_verifies(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await three_thoughts(ledger)
        made = await ledger.annotate(session_id, 1, label="pii", note=NOTE)
        report = await ledger.redaction.redact(
            session_id, version=made.version, reason="personal data", by="dpo"
        )
        assert (report.recorded, report.stripped) == (1, 1)
        assert [item.version for item in report.redacted] == [made.version]
        assert (await ledger.verify(session_id)).ok
        stored = await raw_store(ledger).read_stream(session_id)
        assert all("alice@example.org" not in record.payload for record in stored)
        (annotation,) = (await ledger.state(session_id)).annotations
        assert (annotation.label, annotation.note, annotation.redacted) == ("pii", REDACTED, True)
        assert [t.redacted for t in (await ledger.state(session_id)).thoughts] == [False] * 3
    finally:
        await ledger.aclose()
    if not backend.durable:
        return
    reopened = Ledger(await backend.open())
    try:
        (annotation,) = (await reopened.state(session_id)).annotations
        assert (annotation.note, annotation.redacted) == (REDACTED, True)
        assert (await reopened.rebuild())[session_id].annotations == (annotation,)
    finally:
        await reopened.aclose()


async def test_redacting_a_thought_takes_the_notes_on_it_with_it(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await three_thoughts(ledger)
        await ledger.annotate(session_id, 2, label="secret", note=NOTE)
        await ledger.annotate(session_id, 3, label="fine", note="kept")
        report = await ledger.redaction.redact(
            session_id, thought_number=2, reason="erasure", by="dpo"
        )
        assert [item.version for item in report.redacted] == [3, 5]
        state = await ledger.state(session_id)
        assert [(a.label, a.note) for a in state.annotations] == [
            ("secret", REDACTED),
            ("fine", "kept"),
        ]
        assert (await ledger.verify(session_id)).ok
    finally:
        await ledger.aclose()


async def test_an_auditor_annotates_any_session_a_writer_its_own_a_reader_none(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        alices = await three_thoughts(ledger, owner="alice")
        refused = (Principal("bob"), Principal("alice", "reader"), Principal("bob", "reader"))
        for principal in refused:
            with pytest.raises(SessionNotFoundError):
                await ledger.annotate(alices, 1, label="x", principal=principal)
        assert (await ledger.state(alices)).version == 4  # nothing was written
        by_auditor = await ledger.annotate(
            alices, 1, label="ok", by="someone else", principal=Principal("carol", "auditor")
        )
        by_owner = await ledger.annotate(alices, 2, label="mine", principal=Principal("alice"))
        assert (by_auditor.by, by_owner.by) == ("carol", "alice")
        # An auditor still may not think in the session it annotated.
        with pytest.raises(SessionNotFoundError):
            await ledger.think(alices, call(4, 4), owner="carol")
    finally:
        await ledger.aclose()


@pytest.mark.parametrize(
    ("number", "arguments", "message"),
    [
        (9, {"label": "x"}, "has no thought 9"),
        (1, {"label": ""}, "non-empty label"),
        (1, {"label": "two words"}, "a label holds"),
        (1, {"label": "x" * 65}, "at most 64"),
        (1, {"label": "x", "note": "bell\x07"}, "no control characters"),
        (1, {"label": "x", "note": "n" * 10_001}, "at most 10000"),
        (1, {"label": "x", "score": float("inf")}, "finite number"),
        (1, {"label": "x", "by": "a\x1b[2J"}, "no control characters"),
    ],
)
async def test_bad_input_is_a_clear_error_and_nothing_is_written(
    backend: Backend, number: int, arguments: dict[str, object], message: str
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await three_thoughts(ledger)
        with pytest.raises(InvalidInputError, match=message):
            await ledger.annotate(session_id, number, **arguments)  # type: ignore[arg-type]
        assert (await ledger.state(session_id)).version == 4
        with pytest.raises(SessionNotFoundError):
            await ledger.annotate("01a21473-8b16-7219-915f-b405e7d54754", 1, label="x")
    finally:
        await ledger.aclose()


async def test_a_cleared_session_can_still_be_annotated(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await three_thoughts(ledger)
        assert await ledger.clear_session(session_id)
        made = await ledger.annotate(session_id, 3, label="late-review")
        state = await ledger.state(session_id)
        assert (state.status, state.annotations) == ("cleared", (made,))
    finally:
        await ledger.aclose()


async def test_the_annotations_view_holds_every_annotation_and_no_redacted_note(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = (
            await ledger.think(None, call(1), metadata={"agent": "planner", "client": "cli 1"})
        ).session_id
        await ledger.think(session_id, call(2))
        first = await ledger.annotate(session_id, 1, label="good", score=0.5, by="rev")
        second = await ledger.annotate(session_id, 2, label="pii", note=NOTE)
        await ledger.redaction.redact(session_id, version=second.version, reason="r", by="dpo")
        folded = [
            dict(zip(ANNOTATION_COLUMNS, row, strict=True))
            async for _, page in ledger.transfer.annotation_rows(page=2)
            for row in page
        ]
    finally:
        await ledger.aclose()
    # The exports' fold (every backend) and the view (SQL backends) hold the same rows.
    rows = await view_rows(backend, "tl_annotations", "position") if backend.durable else folded
    assert rows == folded
    assert [{k: v for k, v in row.items() if k != "position"} for row in rows] == [
        {
            "session_id": session_id,
            "version": first.version,
            "recorded_at": format_time(first.recorded_at),
            "agent": "planner",
            "client": "cli 1",
            "thought_number": 1,
            "label": "good",
            "score": 0.5,
            "note": None,
            "annotated_by": "rev",
            "redacted": False,
        },
        {
            "session_id": session_id,
            "version": second.version,
            "recorded_at": format_time(second.recorded_at),
            "agent": "planner",
            "client": "cli 1",
            "thought_number": 2,
            "label": "pii",
            "score": None,
            "note": None,
            "annotated_by": None,
            "redacted": True,
        },
    ]
    if backend.durable:
        thoughts = await view_rows(backend, "tl_thoughts", "position")
        assert [row["thought_number"] for row in thoughts] == [1, 2]  # annotations are no thoughts
