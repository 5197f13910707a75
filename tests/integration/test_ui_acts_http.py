"""The browser view's acts over HTTP, against a real ``thoughtledger ui``: what guards them.

An act is refused, writing nothing, when another site's page could have sent it (no ``Origin``
from a browser, a foreign one, ``Sec-Fetch-Site: cross-site``, a body that is not JSON), when
its fields are bad, and on a view started with ``--read-only``. A script with a bearer token
acts without any browser header.
"""

from pathlib import Path

import httpx

from tests.support.browser import record_demo
from tests.support.cli import sqlite_url
from tests.support.ui_app import record_owned, ui_app
from thoughtledger.adapters.ui.acts import ACT_BODY_MAX, READ_ONLY_REFUSAL

LABEL = {"thought": 1, "label": "checked"}


def _version(http: httpx.Client, session_id: str) -> int:
    events = http.get(f"api/sessions/{session_id}").json()["events"]
    return int(events[-1]["v"])


def test_an_act_another_site_could_send_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "l.db")
    session_id = record_demo(url)
    with ui_app(url, None) as app, app.client() as http:
        where = f"api/sessions/{session_id}/annotate"
        own = {"Origin": app.origin}
        refused = [
            http.post(where, json=LABEL),  # a browser always names its page's origin
            http.post(where, json=LABEL, headers={"Origin": "http://evil.example"}),
            http.post(where, json=LABEL, headers={**own, "Sec-Fetch-Site": "cross-site"}),
        ]
        assert [answer.status_code for answer in refused] == [403, 403, 403]
        assert "carries its Origin" in refused[0].json()["error"]
        assert "--allow-origin" in refused[1].json()["error"]
        assert "'cross-site'" in refused[2].json()["error"]
        # A form from elsewhere can only send text: it is not an act.
        form = http.post(
            where, content="thought=1&label=x", headers={**own, "Content-Type": "text/plain"}
        )
        assert form.status_code == 400
        assert "JSON" in form.json()["error"]
        too_big = http.post(where, json={**LABEL, "note": "x" * ACT_BODY_MAX}, headers=own)
        assert too_big.status_code == 400
        assert str(ACT_BODY_MAX) in too_big.json()["error"]
        for body, words in [
            ({"thought": 0, "label": "x"}, "thought must be a whole number"),
            ({"thought": 99, "label": "x"}, "99"),
            ({"thought": 1}, "label is required"),
            ({"thought": 1, "label": "x", "score": "high"}, "score must be a number"),
        ]:
            answer = http.post(where, json=body, headers=own)
            assert answer.status_code == 400, body
            assert words in answer.json()["error"], answer.json()
        redacting = http.post(f"api/sessions/{session_id}/redact", json={"thought": 1}, headers=own)
        assert redacting.status_code == 400
        assert "reason is required" in redacting.json()["error"]
        forking = http.post(f"api/sessions/{session_id}/fork", json={"at": 999}, headers=own)
        assert forking.status_code == 400
        assert _version(http, session_id) == 10  # nothing was written
        assert http.get(f"api/sessions/{session_id}/annotate").status_code == 405

        done = http.post(where, json={**LABEL, "score": 0.5}, headers=own)
        assert done.status_code == 200, done.text
        assert done.json()["version"] == 11
        assert _version(http, session_id) == 11


def test_a_script_acts_with_its_token_and_a_read_only_view_refuses_every_act(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    ids = record_owned(url, {"mine": "alice"})
    with ui_app(url, tmp_path / "tokens.json") as app:
        token = app.mint("alice", "writer")
        with app.client({"Authorization": f"Bearer {token}"}) as http:
            made = http.post(f"api/sessions/{ids['mine']}/fork", json={"at": 2})
            assert made.status_code == 200, made.text
            assert made.json()["forkOf"] == ids["mine"]
            assert made.json()["href"] == f"/sessions/{made.json()['sessionId']}"
    with ui_app(url, None, "--read-only") as app, app.client({"Origin": app.origin}) as http:
        for act, body in [
            ("annotate", LABEL),
            ("fork", {}),
            ("redact", {"thought": 1, "reason": "r"}),
        ]:
            answer = http.post(f"api/sessions/{ids['mine']}/{act}", json=body)
            assert answer.status_code == 403
            assert answer.json()["error"] == READ_ONLY_REFUSAL
        assert _version(http, ids["mine"]) == 3
    assert "--read-only: nothing can be changed" in app.output[1]
