"""``export --otlp`` into a real Arize Phoenix server: the session arrives as one Phoenix session
of one trace holding every span (asserted through Phoenix's own REST API)."""

import time
from pathlib import Path

import pytest

from tests.support.cli import cli, demo, sqlite_url
from tests.support.phoenix import get_json, phoenix_server

# Slow: Phoenix takes some 20 s to start. The time limit leaves room to wait for the background
# install in CI (tests/support/phoenix.py).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_a_session_arrives_in_phoenix_as_one_session_of_one_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = sqlite_url(tmp_path / "ledger.db")
    session = demo(capsys, url)
    with phoenix_server(tmp_path) as base:
        ran = cli(capsys, "export", session, "--otlp", base, "--db", url)
        assert ran.code == 0, ran.err
        deadline = time.monotonic() + 60
        while True:  # Phoenix ingests in the background
            sessions = get_json(f"{base}/v1/projects/default/sessions")["data"]
            spans = get_json(f"{base}/v1/projects/default/spans?limit=100")["data"]
            if len(spans) >= 10 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    assert [entry["session_id"] for entry in sessions] == [session]
    (trace,) = sessions[0]["traces"]
    assert len(spans) == 10
    assert {span["context"]["trace_id"] for span in spans} == {trace["trace_id"]}
    root = next(span for span in spans if span["parent_id"] is None)
    assert root["name"] == "invoke_agent sre-assistant"
    tools = [span for span in spans if span["parent_id"] == root["context"]["span_id"]]
    assert len(tools) == 9
    assert {span["span_kind"] for span in tools} == {"TOOL"}
