"""``thoughtledger ui --auth-issuer URL``: the browser view takes an OAuth issuer's tokens too.

A real issuer on loopback (``tests/support/issuer.py``) and a real ``ui`` process: a token the
issuer signed for the app's audience signs in as its ``sub`` and sees that principal's sessions;
one for another audience, or from another key, gets nothing.
"""

from pathlib import Path

import httpx
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.cli import sqlite_url
from tests.support.issuer import Issuer, issuing
from tests.support.processes import thoughtledger
from tests.support.ui_app import record_owned, ui_app

AUDIENCE = "thoughtledger-ui"


def _listed(http: httpx.Client) -> set[str]:
    answer = http.get("api/sessions")
    assert answer.status_code == 200, answer.text
    return {row["sessionId"] for row in answer.json()["sessions"]}


def test_an_issuers_token_signs_in_as_its_subject_and_sees_its_own_sessions(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path / "l.db")
    ids = record_owned(url, {"alice-1": "alice", "bob-1": "bob"})
    with (
        issuing() as issuer,
        ui_app(url, None, "--auth-issuer", issuer.url, "--audience", AUDIENCE) as app,
    ):
        alice = issuer.token("alice", AUDIENCE)
        auditor = issuer.token("carol", AUDIENCE, thoughtledger_role="auditor")
        with app.client() as http:
            signed = http.post("api/signin", json={"token": alice}, headers={"Origin": app.origin})
            assert signed.status_code == 200, signed.text
            assert signed.json() == {"name": "alice", "role": "writer"}
            assert _listed(http) == {ids["alice-1"]}
        with app.client({"Authorization": f"Bearer {auditor}"}) as http:
            assert _listed(http) == set(ids.values())
        elsewhere = issuer.token("alice", "another-service")
        forged = Issuer.sign(
            issuer.claims("alice", AUDIENCE), ec.generate_private_key(ec.SECP256R1()), issuer.kid
        )
        for token in (elsewhere, forged, issuer.unsigned(issuer.claims("alice", AUDIENCE))):
            with app.client({"Authorization": f"Bearer {token}"}) as http:
                assert http.get("api/sessions").status_code == 401
    assert "warning" not in app.output[1]


def test_issuer_options_without_auth_issuer_are_refused(tmp_path: Path) -> None:
    done = thoughtledger("ui", "--db", sqlite_url(tmp_path / "l.db"), "--audience", AUDIENCE)
    assert done.returncode != 0
    assert "--audience goes with --auth-issuer URL" in done.stderr
    assert "Traceback" not in done.stderr
