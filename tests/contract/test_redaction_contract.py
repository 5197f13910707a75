"""Redaction on every backend: the text goes, every chain, tree and proof still verifies."""

import json

import pytest

from tests.support.backends import Backend, settled
from tests.support.legacy import legacy_session
from tests.support.raw_store import raw_store
from tests.support.views import as_dicts, view_rows
from thoughtledger import Ledger
from thoughtledger.api.proofs import verify_bundle
from thoughtledger.ledger.checkpoint import Signer
from thoughtledger.ledger.content import REDACTED
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.events import ThoughtRedacted

pytestmark = pytest.mark.anyio

SECRET = "the key is sk-live-7f3a9c-SECRET"  # noqa: S105  # the text a redaction removes


async def session_with_secret(ledger: Ledger) -> str:
    session = await ledger.new_session()
    texts = ["look at the logs", f"paste: {SECRET}", "rotate the key"]
    for number, text in enumerate(texts, start=1):
        await session.process_sequential_thinking(
            thought=text, thought_number=number, total_thoughts=3, next_thought_needed=number < 3
        )
    return session.id


async def test_a_redacted_thought_keeps_every_chain_checkpoint_and_proof_verifying(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    signer = Signer.generate("ledger.example/log")
    verifier = signer.verifier()
    try:
        session_id = await session_with_secret(ledger)
        await settled(raw_store(ledger), 4)
        before = await ledger.proofs.checkpoint(signer)
        bundle_before = json.loads(json.dumps(await ledger.proofs.prove(session_id, 2, before)))

        report = await ledger.redaction.redact(
            session_id, thought_number=2, reason="a pasted key", by="ops"
        )

        assert [item.thought_number for item in report.redacted] == [2]
        assert (report.recorded, report.stripped, report.refused) == (1, 1, ())
        assert (await ledger.verify(session_id)).ok
        assert (await ledger.proofs.verify_checkpoint(before, verifier)).ok
        await settled(raw_store(ledger), 5)
        after = await ledger.proofs.checkpoint(signer)
        assert await ledger.proofs.consistency(before, after, verifier) is not None
        bundle_after = json.loads(json.dumps(await ledger.proofs.prove(session_id, 2, after)))
        for bundle in (bundle_before, bundle_after):
            verify_bundle(bundle, verifier)
        assert SECRET in bundle_before["event"]["payload"]
        assert SECRET not in bundle_after["event"]["payload"]
        assert bundle_before["event"]["hash"] == bundle_after["event"]["hash"]

        state = await ledger.state(session_id)
        assert [(t.thought, t.redacted) for t in state.thoughts] == [
            ("look at the logs", False),
            (REDACTED, True),
            ("rotate the key", False),
        ]
        page = await ledger.history(session_id)
        assert page.thought_count == 3
        assert page.status == "complete"
        assert [item.get("redacted", False) for item in page.items] == [False, True, False]
        assert page.items[1]["thought"] == REDACTED
        stored = await raw_store(ledger).read_stream(session_id)
        assert all(SECRET not in record.payload for record in stored)
        last = stored[-1].event
        assert isinstance(last, ThoughtRedacted)
        assert (last.version, last.thought_number, last.by, last.reason) == (
            3,
            2,
            "ops",
            "a pasted key",
        )
        rows = [row async for _, page_rows in ledger.transfer.thought_rows() for row in page_rows]
        assert [(row[10], row[-1]) for row in rows] == [
            ("look at the logs", False),
            (None, True),
            ("rotate the key", False),
        ]
    finally:
        await ledger.aclose()


async def test_a_running_ledger_shows_a_redaction_made_elsewhere_once_it_catches_up(
    backend: Backend,
) -> None:
    reader = Ledger(await backend.open())
    writer = Ledger(await backend.open()) if backend.durable else None
    try:
        session_id = await session_with_secret(reader)
        assert (await reader.state(session_id)).thoughts[1].thought.endswith("SECRET")
        redactor = writer if writer is not None else Ledger(raw_store(reader))
        await redactor.redaction.redact(session_id, reason="erasure request", by="dpo")
        state = await reader.state(session_id)
        assert {t.thought for t in state.thoughts} == {REDACTED}
        assert all(t.redacted for t in state.thoughts)
        assert state.thought_count == 3
    finally:
        if writer is not None:
            await writer.aclose()
        await reader.aclose()


async def test_redacting_again_records_and_strips_nothing_more(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
        first = await ledger.redaction.redact(session_id, reason="erasure request", by="dpo")
        again = await ledger.redaction.redact(session_id, reason="erasure request", by="dpo")
        assert (first.recorded, first.stripped) == (3, 3)
        assert (again.recorded, again.stripped) == (0, 0)
        assert await raw_store(ledger).redaction.redactions(session_id) == ((5, 2), (6, 3), (7, 4))
        assert again.redacted == first.redacted
        head = await raw_store(ledger).stream_head(session_id)
        assert head is not None
        assert head.version == 7
        assert (await ledger.verify(session_id)).ok
    finally:
        await ledger.aclose()


async def test_a_redaction_cut_short_after_its_event_is_completed_by_running_it_again(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
        store = raw_store(ledger)
        target = (await store.read_stream(session_id))[2]
        # The first step of a redaction, as a crash right after it leaves the log.
        await store.append(
            session_id,
            [
                ThoughtRedacted(
                    event_id=str(target.event_id),
                    version=3,
                    thought_number=2,
                    by="ops",
                    reason="a pasted key",
                )
            ],
            expected_version=4,
        )
        assert (await ledger.verify(session_id)).ok
        assert SECRET in (await store.read_stream(session_id))[2].payload
        assert (await ledger.state(session_id)).thoughts[1].redacted

        report = await ledger.redaction.redact(
            session_id, thought_number=2, reason="again", by="ops"
        )

        assert (report.recorded, report.stripped) == (0, 1)
        assert SECRET not in (await store.read_stream(session_id))[2].payload
        assert (await ledger.verify(session_id)).ok
    finally:
        await ledger.aclose()


async def test_a_store_strips_only_what_a_redaction_event_names(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
        store = raw_store(ledger)
        with pytest.raises(InvalidInputError, match=r"no thought\.redacted event names it"):
            await store.redaction.strip_content(session_id, [3])
        with pytest.raises(InvalidInputError, match="not a redactable thought event"):
            await store.redaction.strip_content(session_id, [1])
        assert SECRET in (await store.read_stream(session_id))[2].payload
    finally:
        await ledger.aclose()


async def test_bad_redactions_are_refused_and_write_nothing(backend: Backend) -> None:
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
        for kwargs, message in (
            ({"thought_number": 9}, "has no thought 9"),
            ({"version": 1}, "has no thought at version 1"),
            ({"thought_number": 1, "version": 2}, "not both"),
            ({"reason": "  "}, "non-empty reason"),
            ({"reason": "x" * 1001}, "over the limit"),
        ):
            arguments = {"reason": "why", "by": "ops", **kwargs}
            with pytest.raises(InvalidInputError, match=message):
                await ledger.redaction.redact(session_id, **arguments)  # type: ignore[arg-type]
        head = await raw_store(ledger).stream_head(session_id)
        assert head is not None
        assert head.version == 4
    finally:
        await ledger.aclose()


async def test_a_ledger_of_schema_1_events_still_verifies_reads_and_refuses_redaction(
    backend: Backend,
) -> None:
    ledger = Ledger(await backend.open())
    try:
        store = raw_store(ledger)
        assert await store.imports.import_records(legacy_session("old", ["first", SECRET])) == 3
        assert (await ledger.verify("old")).ok
        assert [t.thought for t in (await ledger.state("old")).thoughts] == ["first", SECRET]
        with pytest.raises(InvalidInputError, match="written before redactable events existed"):
            await ledger.redaction.redact("old", thought_number=2, reason="erasure", by="dpo")
        head = await store.stream_head("old")
        assert head is not None
        assert head.version == 3
        assert SECRET in (await store.read_stream("old"))[2].payload
    finally:
        await ledger.aclose()


async def tampered(backend: Backend, statement: str) -> tuple[str, str | None, int | None]:
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
    finally:
        await ledger.aclose()
    await backend.execute(statement, version=3, session=session_id)
    ledger = Ledger(await backend.open())
    try:
        report = await ledger.verify(session_id)
    finally:
        await ledger.aclose()
    assert not report.ok
    return session_id, report.reason, report.first_bad_version


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (
            'substr(payload, 1, instr(payload, \',"content":{"salt":"\') - 1) || \'}\'',
            "text is missing and no thought.redacted event explains it",
        ),
        ("replace(payload, 'SECRET', 'PUBLIC')", "content does not match its digest"),
        (
            # The salt's first byte becomes ff, or 00 when it was ff (1 run in 256 otherwise
            # edited nothing).
            'substr(payload, 1, instr(payload, \'"salt":"\') + 7) || CASE WHEN '
            "substr(payload, instr(payload, '\"salt\":\"') + 8, 2) = 'ff' THEN '00' ELSE 'ff' "
            'END || substr(payload, instr(payload, \'"salt":"\') + 10)',
            "content does not match its digest",
        ),
    ],
    ids=["stripped-without-event", "text-altered", "salt-altered"],
)
async def test_a_payload_edited_in_the_database_fails_verification(
    backend: Backend, edit: str, reason: str
) -> None:
    if not backend.durable:
        pytest.skip("the in-memory store has no database to edit")
    if backend.name == "postgres":
        edit = edit.replace("instr(payload, ", "strpos(payload, ")
    statement = (
        f"UPDATE tl_events SET payload = {edit} "  # noqa: S608  # the test's own fixed SQL
        "WHERE session_id = :session AND version = :version"
    )
    _, found, version = await tampered(backend, statement)
    assert (found, version) == (reason, 3)


async def test_the_thoughts_view_reads_both_layouts_and_says_what_was_redacted(
    backend: Backend,
) -> None:
    if not backend.durable:
        pytest.skip("the in-memory store has no SQL views")
    ledger = Ledger(await backend.open())
    try:
        session_id = await session_with_secret(ledger)
        await ledger.redaction.redact(session_id, thought_number=2, reason="a pasted key", by="ops")
        await raw_store(ledger).imports.import_records(legacy_session("old", ["written before"]))
        await settled(raw_store(ledger), 7)
        folded = [row async for _, rows in ledger.transfer.thought_rows() for row in rows]
    finally:
        await ledger.aclose()
    viewed = await view_rows(backend, "tl_thoughts", "position")
    assert viewed == as_dicts(folded)
    assert [(row["thought"], row["redacted"]) for row in viewed] == [
        ("look at the logs", False),
        (None, True),
        ("rotate the key", False),
        ("written before", False),
    ]
