"""The redactable layout holds for any text: it round-trips, and removing it changes no hash."""

import json
import uuid

from hypothesis import given
from hypothesis import strategies as st

from tests.support.factories import GENERATION
from thoughtledger.ledger.chain import StoredRow, prepare, seal
from thoughtledger.ledger.codec import decode_payload
from thoughtledger.ledger.content import REDACTED, committed_form, strip
from thoughtledger.ledger.envelope import LogRow, format_time
from thoughtledger.ledger.events import PAYLOAD_SCHEMA_VERSION, ThoughtGenerated, ThoughtRecorded
from thoughtledger.ledger.store.base import utc_now
from thoughtledger.projections.fastfold import fold_rows
from thoughtledger.projections.state import SessionState

# Any valid Unicode (no lone surrogates), with the layout's own markers mixed in.
_unicode = st.text(st.characters(exclude_categories=["Cs"]))
_markers = [',"content":{"salt":"', '"}}', "\\", '\\"', "\x00", "\u2028", "[redacted]", '{"a":1}']
texts = _unicode | st.tuples(_unicode, st.sampled_from(_markers), _unicode).map("".join)


def recorded(text: str) -> ThoughtRecorded:
    return ThoughtRecorded(
        thought=text, thought_number=3, total_thoughts=5, next_thought_needed=True
    )


@given(texts)
def test_any_thought_round_trips_and_keeps_its_hash_when_stripped(text: str) -> None:
    [prepared] = prepare([recorded(text)], max_event_bytes=1 << 24)
    payload = prepared.payload
    json.loads(payload)  # one valid JSON object
    assert decode_payload("thought.recorded", PAYLOAD_SCHEMA_VERSION, payload) == recorded(text)
    [sealed] = seal(
        "s",
        [prepared],
        version=0,
        head_hash="0" * 64,
        event_ids=[uuid.uuid4()],
        recorded_at=utc_now(),
    )
    stored = StoredRow.of(sealed.at(1))
    stripped = stored._replace(payload=strip(payload))
    assert stored.digest() == stripped.digest() == sealed.hash
    assert committed_form(payload) == (strip(payload), False)
    assert committed_form(strip(payload)) == (strip(payload), True)
    json.loads(strip(payload))
    gone = decode_payload("thought.recorded", PAYLOAD_SCHEMA_VERSION, strip(payload))
    assert isinstance(gone, ThoughtRecorded)
    assert (gone.thought, gone.redacted, gone.thought_number) == (REDACTED, True, 3)


@given(texts, texts)
def test_a_generated_thought_keeps_both_texts_and_loses_both_when_stripped(
    text: str, guidance: str
) -> None:
    event = ThoughtGenerated(
        thought=text,
        thought_number=1,
        total_thoughts=1,
        next_thought_needed=False,
        kind="thought.recorded",
        guidance=guidance,
        generation=GENERATION,
    )
    [prepared] = prepare([event], max_event_bytes=1 << 24)
    assert decode_payload("thought.generated", PAYLOAD_SCHEMA_VERSION, prepared.payload) == event
    gone = decode_payload("thought.generated", PAYLOAD_SCHEMA_VERSION, strip(prepared.payload))
    assert isinstance(gone, ThoughtGenerated)
    assert (gone.thought, gone.guidance, gone.redacted) == (REDACTED, REDACTED, True)
    assert gone.generation == GENERATION


@given(texts)
def test_the_bulk_fold_reads_a_kept_and_a_stripped_thought_as_the_decoder_does(text: str) -> None:
    [prepared] = prepare([recorded(text)], max_event_bytes=1 << 24)
    at = format_time(utc_now())
    states: dict[str, SessionState] = {}
    fold_rows(
        [
            LogRow(1, "kept", 1, at, PAYLOAD_SCHEMA_VERSION, "thought.recorded", prepared.payload),
            LogRow(
                2,
                "gone",
                1,
                at,
                PAYLOAD_SCHEMA_VERSION,
                "thought.recorded",
                strip(prepared.payload),
            ),
        ],
        states,
    )
    assert (states["kept"].thoughts[0].thought, states["kept"].thoughts[0].redacted) == (
        text,
        False,
    )
    assert (states["gone"].thoughts[0].thought, states["gone"].thoughts[0].redacted) == (
        REDACTED,
        True,
    )
