"""``thoughtledger receive`` keeps two sources of principals apart, as ``serve`` and ``ui`` do.

With ``--auth FILE`` and ``--auth-issuer URL`` together, a JWT whose ``sub`` is ``alice`` is not
the token file's ``alice``: what it sends under her conversation id lands in a session of its own.
"""

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from subprocess import PIPE

import anyio
import httpx2
import pytest

from tests.support.auth import bearer
from tests.support.issuer import issuing
from tests.support.processes import ROOT, WAIT, child_env, sqlite_in, thoughtledger
from thoughtledger.adapters.auth.tokens import load_tokens_or_empty, save_tokens
from thoughtledger.api import Principal, open_ledger
from thoughtledger.ledger.events import ThoughtCaptured

pytestmark = pytest.mark.anyio

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def _spans(text: str) -> bytes:
    """An export request of one span holding one reasoning part, conversation ``shared``."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    kept = InMemorySpanExporter()
    traces = TracerProvider(resource=Resource.create({"service.name": "namespace"}))
    traces.add_span_processor(SimpleSpanProcessor(kept))
    parts = [{"role": "assistant", "parts": [{"type": "reasoning", "content": text}]}]
    with traces.get_tracer("tests").start_as_current_span("chat m") as span:
        span.set_attributes(
            {"gen_ai.output.messages": json.dumps(parts), "gen_ai.conversation.id": "shared"}
        )
    body: bytes = encode_spans(kept.get_finished_spans()).SerializeToString()
    traces.shutdown()
    return body


async def test_a_jwt_named_like_a_token_file_principal_sends_into_a_session_of_its_own(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "tokens.json"
    tokens, alice_file, _ = load_tokens_or_empty(token_file).add(
        "alice", "writer", now=datetime.now(UTC)
    )
    save_tokens(token_file, tokens)
    db = sqlite_in(tmp_path)
    with issuing() as issuer:
        command = [
            sys.executable,
            "-m",
            "thoughtledger.adapters.cli",
            "receive",
            "--port",
            "0",
            "--auth",
            str(token_file),
            "--auth-issuer",
            issuer.url,
            "--db",
            db,
        ]
        process = await anyio.open_process(
            command, cwd=ROOT, env=child_env(), stdout=PIPE, stderr=PIPE
        )
        try:
            assert process.stdout is not None
            with anyio.fail_after(WAIT):
                line = (await process.stdout.receive()).decode()
            found = re.search(r"url=(\S+)", line)
            assert found is not None, line
            traces = found.group(1)
            audience = traces.removesuffix("/v1/traces") + "/"
            alice_jwt = issuer.token("alice", audience)
            async with httpx2.AsyncClient(timeout=WAIT) as http:
                for token, text in ((alice_file, "Alice thinks."), (alice_jwt, "The JWT thinks.")):
                    sent = await http.post(
                        traces, content=_spans(text), headers={**PROTOBUF, **bearer(token)}
                    )
                    assert sent.status_code == 200, sent.content
        finally:
            process.terminate()
            with anyio.fail_after(WAIT):
                await process.wait()
    async with open_ledger(db, read_only=True) as ledger:
        as_alice = await ledger.as_principal(Principal("alice")).events("shared")
    alices = [e.event.thought for e in as_alice if isinstance(e.event, ThoughtCaptured)]
    assert alices == ["Alice thinks."]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--audience", "http://x/"], "--audience goes with --auth-issuer URL"),
        (["--map-subject", "a=alice"], "--map-subject goes with --auth FILE and --auth-issuer URL"),
    ],
    ids=["audience", "map-subject"],
)
def test_issuer_options_without_what_they_go_with_are_refused_and_make_no_ledger(
    tmp_path: Path, given: list[str], said: str
) -> None:
    db = tmp_path / "ledger.db"
    done = thoughtledger("receive", "--port", "0", "--db", f"sqlite:///{db}", *given)
    assert (done.returncode, done.stderr) == (2, f"thoughtledger: error: {said}\n")
    assert not db.exists()  # refused before the ledger is made
