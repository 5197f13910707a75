"""``IssuerTokenVerifier``: an OAuth issuer's JWTs, checked against keys fetched over real HTTP.

The issuer is a real HTTP server on loopback (``tests/support/issuer.py``); the verifier finds
its keys through its metadata, as the HTTP server's ``--auth-issuer`` does (the server itself
is driven in ``test_http_oauth.py``). Every forged, stale or misdirected token is refused, and
no stream of tokens can make the verifier fetch the key set more than once per interval.
"""

import socket
import time
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.issuer import JWKS_PATH, issuing
from thoughtledger.adapters.auth.issuer import IssuerTokenVerifier
from thoughtledger.adapters.auth.jwks import IssuerError, KeySet
from thoughtledger.ledger.errors import InvalidInputError

pytestmark = pytest.mark.anyio
AUDIENCE = "http://127.0.0.1:8765/mcp"


async def test_a_good_token_names_its_subject_and_role_and_carries_no_more() -> None:
    with issuing() as issuer:
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        await verifier.prepare()
        plain = await verifier.verify_token(issuer.token("alice", AUDIENCE, azp="agent-app"))
        auditor = await verifier.verify_token(
            issuer.token("carol", AUDIENCE, thoughtledger_role="auditor")
        )
        scoped = await verifier.verify_token(
            issuer.token("dan", AUDIENCE, scope="openid thoughtledger:reader")
        )
        listed = await verifier.verify_token(
            issuer.token("erin", [AUDIENCE, "other-api"], thoughtledger_role=["reader", "writer"])
        )
        # A clock a few seconds ahead of ours issued it: within the leeway.
        skewed = await verifier.verify_token(
            issuer.token("fay", AUDIENCE, nbf=int(time.time()) + 10, iat=int(time.time()) + 10)
        )
    assert plain is not None
    assert auditor is not None
    assert scoped is not None
    assert listed is not None
    assert skewed is not None
    assert (plain.subject, plain.client_id, plain.scopes) == (
        "alice",
        "agent-app",
        ["thoughtledger:writer"],
    )
    assert plain.resource == AUDIENCE
    assert plain.claims == {"iss": issuer.url}
    assert plain.expires_at is not None
    assert plain.expires_at > time.time()
    assert (auditor.subject, auditor.scopes) == ("carol", ["thoughtledger:auditor"])
    assert scoped.scopes == ["thoughtledger:reader"]
    assert listed.scopes == ["thoughtledger:writer"]  # the widest of those named


async def test_every_forged_stale_or_misdirected_token_is_refused() -> None:
    with issuing() as issuer:
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        good = issuer.claims("alice", AUDIENCE)
        stranger = ec.generate_private_key(ec.SECP256R1())
        now = int(time.time())
        tokens = {
            "expired": issuer.sign({**good, "exp": now - 120}, issuer.keys[issuer.kid], issuer.kid),
            "not yet valid": issuer.sign(
                {**good, "nbf": now + 600}, issuer.keys[issuer.kid], issuer.kid
            ),
            "issued in the future": issuer.sign(
                {**good, "iat": now + 600}, issuer.keys[issuer.kid], issuer.kid
            ),
            "wrong audience": issuer.token("alice", "http://127.0.0.1:9/mcp"),
            "wrong issuer": issuer.token("alice", AUDIENCE, iss="http://127.0.0.1:9"),
            "wrong key": issuer.sign(good, stranger, issuer.kid),
            "unknown key id": issuer.sign(good, stranger, "nobody-knows"),
            "alg none": issuer.unsigned(good),
            "hmac with the public key": issuer.hmac_with_public_key(good),
            "no sub": issuer.sign(
                {k: v for k, v in good.items() if k != "sub"}, issuer.keys[issuer.kid], issuer.kid
            ),
            "no exp": issuer.sign(
                {k: v for k, v in good.items() if k != "exp"}, issuer.keys[issuer.kid], issuer.kid
            ),
            "control characters in sub": issuer.token("alice\x1b[2J", AUDIENCE),
            "unknown role": issuer.token("alice", AUDIENCE, thoughtledger_role="admin"),
            "not a jwt": "tl_" + "A" * 43,
            "garbage": "a.b.c",
        }
        answers = {name: await verifier.verify_token(token) for name, token in tokens.items()}
        still = await verifier.verify_token(issuer.token("alice", AUDIENCE))
    assert {name for name, answer in answers.items() if answer is not None} == set()
    assert still is not None  # the refusals left the verifier working


async def test_tokens_never_reach_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    with issuing() as issuer:
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        refused = issuer.token("alice", "http://elsewhere/mcp")
        accepted = issuer.token("alice", AUDIENCE)
        assert await verifier.verify_token(refused) is None
        assert await verifier.verify_token(accepted) is not None
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "token_refused" in logged
    assert refused not in logged
    assert accepted not in logged
    assert refused.split(".")[2] not in logged  # not even the signature


@pytest.mark.parametrize("metadata", ["oauth", "openid"])
async def test_keys_are_found_through_either_kind_of_issuer_metadata(metadata: Any) -> None:
    with issuing(metadata) as issuer:
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        assert await verifier.verify_token(issuer.token("alice", AUDIENCE)) is not None


async def test_a_key_set_url_given_outright_skips_the_metadata() -> None:
    with issuing() as issuer:
        issuer.metadata = "openid"
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE, jwks_url=issuer.url + JWKS_PATH)
        answer = await verifier.verify_token(issuer.token("alice", AUDIENCE))
        metadata_asked = issuer.fetches("/.well-known/openid-configuration")
    assert answer is not None
    assert metadata_asked == 0


async def test_a_rotated_key_is_fetched_once_and_made_up_key_ids_fetch_at_most_once() -> None:
    with issuing() as issuer:
        clock = [0.0]
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        verifier.keys = KeySet(issuer.url, min_interval=30.0, clock=lambda: clock[0])
        await verifier.prepare()
        assert issuer.fetches(JWKS_PATH) == 1
        new = issuer.rotate()  # the issuer rotates after the server started
        rotated = await verifier.verify_token(issuer.token("alice", AUDIENCE, kid=new))
        assert issuer.fetches(JWKS_PATH) == 2
        stranger = ec.generate_private_key(ec.SECP256R1())
        good = issuer.claims("alice", AUDIENCE)
        async with anyio.create_task_group() as group:
            for n in range(20):
                group.start_soon(verifier.verify_token, issuer.sign(good, stranger, f"made-up-{n}"))
        within_interval = issuer.fetches(JWKS_PATH)
        clock[0] += 31.0
        await verifier.verify_token(issuer.sign(good, stranger, "made-up-later"))
        after_interval = issuer.fetches(JWKS_PATH)
    assert rotated is not None
    assert within_interval == 2  # the rotation's fetch was the one allowed in this interval
    assert after_interval == 3


async def test_metadata_of_another_issuer_is_refused() -> None:
    with issuing() as issuer:
        issuer.said_issuer = "https://impostor.example"
        verifier = IssuerTokenVerifier(issuer.url, AUDIENCE)
        with pytest.raises(IssuerError, match=r"describes the issuer 'https://impostor\.example'"):
            await verifier.prepare()


async def test_a_redirect_to_plain_http_elsewhere_is_not_followed() -> None:
    with issuing() as issuer:
        issuer.redirects["/moved"] = "http://keys.example.com/jwks.json"
        issuer.redirects["/kept"] = issuer.url + JWKS_PATH  # loopback: fine
        moved = IssuerTokenVerifier(issuer.url, AUDIENCE, jwks_url=issuer.url + "/moved")
        kept = IssuerTokenVerifier(issuer.url, AUDIENCE, jwks_url=issuer.url + "/kept")
        with pytest.raises(IssuerError, match=r"redirects to http://keys\.example\.com/"):
            await moved.prepare()
        await kept.prepare()
        assert await kept.verify_token(issuer.token("alice", AUDIENCE)) is not None


async def test_an_issuer_that_does_not_answer_fails_within_the_timeout() -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        verifier = IssuerTokenVerifier(url, AUDIENCE, timeout=0.5)
        started = time.monotonic()
        with pytest.raises(IssuerError, match="no metadata for the issuer"):
            await verifier.prepare()
        took = time.monotonic() - started
    assert took < 15  # two URLs tried, each bounded: nowhere near a hang


@pytest.mark.parametrize(
    ("issuer", "jwks_url", "message"),
    [
        ("http://auth.example.com", None, "the issuer 'http://auth.example.com' must be an https"),
        ("ftp://127.0.0.1", None, "must be an https URL"),
        ("https://auth.example.com", "http://keys.example.com/jwks", "the key set URL"),
        ("https://exa mple.com", None, "holds spaces or control characters"),
        ("https://auth.example.com:99999", None, "has no valid port"),
        ("https://auth.example.com/?tenant=a", None, "must have no query or fragment"),
    ],
)
def test_keys_are_fetched_over_https_only_except_on_loopback_from_well_formed_urls(
    issuer: str, jwks_url: str | None, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        IssuerTokenVerifier(issuer, AUDIENCE, jwks_url=jwks_url)
