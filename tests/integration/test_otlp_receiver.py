"""The OTLP receiver with senders none of us wrote: real instrumentation, the SDK's own exporter.

Each test starts ``serve --http`` (or ``receive``) in a child process; pydantic-ai's
instrumentation, or the Anthropic SDK under OpenInference's or OpenLLMetry's instrumentor
(against a stub Messages API on loopback), produces the spans in this process, and the SDK's
OTLP/HTTP exporter sends them. What the ledger then holds is read back through the API.
"""

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import PIPE
from typing import Any

import anyio
import pytest

from tests.support.genai_senders import (
    AFTER_TOOL,
    REDACTED_DATA,
    SIGNATURE,
    SIGNED,
    STUB_ID,
    STUB_MODEL,
    THINKING,
    Wire,
    anthropic_run,
    pydantic_ai_run,
)
from tests.support.processes import (
    ROOT,
    WAIT,
    child_env,
    serving_http,
    sqlite_in,
    thoughtledger,
)
from thoughtledger.api import open_ledger
from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import ActionTaken, SessionStarted, ThoughtCaptured

pytestmark = pytest.mark.anyio


def _traces(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp") + "/v1/traces"


async def _send(run: Callable[[], None]) -> None:
    # The SDK's exporter is synchronous: run the sender off the event loop that drains the log.
    await anyio.to_thread.run_sync(run)


async def _events(db: str, session_id: str) -> list[RecordedEvent]:
    async with open_ledger(db, read_only=True) as ledger:
        return await ledger.events(session_id)


def _stored(folder: Path) -> bytes:
    """Every byte of the ledger's files (the database and its write-ahead log)."""
    return b"".join(path.read_bytes() for path in sorted(folder.glob("l.db*")))


def _of(records: list[RecordedEvent], kind: type[Any]) -> list[Any]:
    return [r.event for r in records if isinstance(r.event, kind)]


WIRES = [("protobuf", False), ("protobuf", True), ("json", False), ("json", True)]
WIRE_IDS = ["protobuf", "protobuf-gzip", "json", "json-gzip"]


@pytest.mark.parametrize(("wire", "gzip"), WIRES, ids=WIRE_IDS)
async def test_pydantic_ai_thinking_and_its_tool_call_are_captured_in_its_conversation(
    tmp_path: Path, wire: Wire, gzip: bool
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        await _send(
            lambda: pydantic_ai_run(_traces(url), gzip=gzip, conversation_id="conv-42", wire=wire)
        )
        records = await _events(db, "conv-42")
    [started] = _of(records, SessionStarted)
    assert started.metadata["agent"] == "weather_bot"
    assert started.metadata["client"] == "pydantic-weather"
    thoughts = _of(records, ThoughtCaptured)
    assert [t.thought for t in thoughts] == [THINKING, AFTER_TOOL]
    assert [t.thought_number for t in thoughts] == [1, 2]
    assert {t.capture.form for t in thoughts} == {"full"}
    assert {t.capture.reasoning_tokens for t in thoughts} == {20}
    assert {t.capture.model for t in thoughts} == {"function:model:"}
    [action] = _of(records, ActionTaken)
    assert (action.name, action.call_id, action.after_thought) == ("get_weather", "call_1", 1)
    assert json.loads(action.arguments) == {"city": "Oslo"}
    # The action sits between the reasoning that led to it and the reasoning after its result.
    order = [type(r.event).__name__ for r in records]
    assert order == ["SessionStarted", "ThoughtCaptured", "ActionTaken", "ThoughtCaptured"]


async def test_a_sender_without_a_conversation_key_gets_one_session_per_trace(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        for _ in range(2):
            await _send(lambda: anthropic_run(_traces(url), "openllmetry"))
    listed = thoughtledger("sessions", "--db", db, "--json")
    sessions = json.loads(listed.stdout)
    assert len(sessions) == 2
    assert all(s["sessionId"].startswith("trace-") for s in sessions)
    assert {s["client"] for s in sessions} == {"anthropic-openllmetry"}
    records = await _events(db, sessions[0]["sessionId"])
    # OpenLLMetry writes the signed thinking as a reasoning part and drops the redacted block.
    [thought] = _of(records, ThoughtCaptured)
    assert thought.thought == SIGNED
    assert thought.capture.model == STUB_MODEL
    [action] = _of(records, ActionTaken)
    assert (action.name, action.call_id, action.after_thought) == ("get_weather", "toolu_1", 1)


@pytest.mark.parametrize(("wire", "gzip"), WIRES, ids=WIRE_IDS)
async def test_openinference_anthropic_keeps_signed_and_redacted_thinking_as_digests(
    tmp_path: Path, wire: Wire, gzip: bool
) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        await _send(
            lambda: anthropic_run(
                _traces(url), "openinference", gzip=gzip, session_id="s1", wire=wire
            )
        )
        records = await _events(db, "s1")
    signed, opaque = _of(records, ThoughtCaptured)
    assert (signed.thought, signed.capture.form) == (SIGNED, "full")
    assert signed.capture.signature_sha256 == hashlib.sha256(SIGNATURE.encode()).hexdigest()
    assert opaque.capture.form == "opaque"
    assert opaque.capture.opaque_sha256 == hashlib.sha256(REDACTED_DATA.encode()).hexdigest()
    assert {signed.capture.model, signed.capture.response_id} == {STUB_MODEL, STUB_ID}
    # Neither the signature nor the encrypted content is stored anywhere in the log.
    stored = _stored(tmp_path)
    assert SIGNATURE.encode() not in stored
    assert REDACTED_DATA.encode() not in stored
    [action] = _of(records, ActionTaken)
    assert (action.name, action.call_id, action.after_thought) == ("get_weather", "toolu_1", 2)


async def test_spans_sent_again_append_nothing(tmp_path: Path) -> None:
    db = sqlite_in(tmp_path)
    async with serving_http(db) as url:
        # Every batch goes twice through the SDK's exporter, as after an answer lost in transit.
        await _send(lambda: pydantic_ai_run(_traces(url), conversation_id="again", twice=True))
        records = await _events(db, "again")
        # A second run is new spans: it is appended, numbered after the first.
        await _send(lambda: pydantic_ai_run(_traces(url), conversation_id="again"))
        more = await _events(db, "again")
    assert [t.thought for t in _of(records, ThoughtCaptured)] == [THINKING, AFTER_TOOL]
    assert len(_of(records, ActionTaken)) == 1
    assert [t.thought_number for t in _of(more, ThoughtCaptured)] == [1, 2, 3, 4]


async def test_receive_serves_the_receiver_alone_for_a_collector_only_deployment(
    tmp_path: Path,
) -> None:
    db = sqlite_in(tmp_path)
    command = [sys.executable, "-m", "thoughtledger.adapters.cli", "receive", "--port", "0"]
    process = await anyio.open_process(
        [*command, "--db", db], cwd=ROOT, env=child_env(), stdout=PIPE, stderr=PIPE
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(WAIT):
            line = (await process.stdout.receive()).decode()
        endpoint = re.search(r"url=(\S+)", line)
        assert endpoint is not None, line
        await _send(lambda: pydantic_ai_run(endpoint.group(1), conversation_id="alone"))
        records = await _events(db, "alone")
    finally:
        process.terminate()
        with anyio.fail_after(WAIT):
            assert await process.wait() == 0  # SIGTERM: requests answered, the ledger closed
    assert [t.thought for t in _of(records, ThoughtCaptured)] == [THINKING, AFTER_TOOL]
    assert len(_of(records, ActionTaken)) == 1
