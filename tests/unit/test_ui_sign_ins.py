"""The browser view's sign-ins over a verifier whose tokens the test grants and revokes, on a
clock the test moves: how long a sign-in lasts, when its token is verified again, how many are
held."""

import time

import pytest
from mcp.server.auth.provider import AccessToken

from thoughtledger.adapters.common.shares import Limits
from thoughtledger.adapters.ui.signin import (
    RECHECK_SECONDS,
    SIGN_IN_HOURS,
    SIGN_INS_HELD,
    SIGN_INS_PER_PRINCIPAL,
    SignIns,
)
from thoughtledger.api import Principal

pytestmark = pytest.mark.anyio


class Granting:
    """A verifier (the SDK's ``TokenVerifier`` shape) that knows the tokens it was told of."""

    def __init__(self) -> None:
        self.tokens: dict[str, AccessToken] = {}
        self.asked = 0

    def grant(self, token: str, name: str, *scopes: str, expires_at: int | None = None) -> None:
        self.tokens[token] = AccessToken(
            token=token, client_id=name, scopes=list(scopes), expires_at=expires_at
        )

    async def verify_token(self, token: str) -> AccessToken | None:
        self.asked += 1
        return self.tokens.get(token)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_sign_in_stands_for_its_principal_until_its_token_is_revoked_and_rechecked() -> (
    None
):
    verifier, clock = Granting(), Clock()
    sign_ins = SignIns(verifier, clock=clock)
    verifier.grant("t-1", "alice", "thoughtledger:reader")
    opened = await sign_ins.sign_in("t-1")
    assert opened is not None
    key, _ = opened
    assert key != "t-1"
    assert await sign_ins.principal(key) == Principal("alice", "reader")
    asked = verifier.asked
    del verifier.tokens["t-1"]  # revoked
    clock.now += RECHECK_SECONDS / 2
    assert await sign_ins.principal(key) == Principal("alice", "reader")  # trusted a moment
    assert verifier.asked == asked
    clock.now += RECHECK_SECONDS
    assert await sign_ins.principal(key) is None
    verifier.grant("t-1", "alice", "thoughtledger:reader")
    assert await sign_ins.principal(key) is None  # ended for good: sign in again


async def test_a_sign_in_ends_after_its_hours_or_when_its_token_expires_sooner() -> None:
    verifier, clock = Granting(), Clock()
    sign_ins = SignIns(verifier, clock=clock)
    verifier.grant("long", "alice")
    verifier.grant("short", "bob", "thoughtledger:auditor", expires_at=int(time.time()) + 60)
    long_key = (await sign_ins.sign_in("long") or ("", None))[0]
    short_key = (await sign_ins.sign_in("short") or ("", None))[0]
    assert 55 <= sign_ins.seconds_left(short_key) <= 60
    assert sign_ins.seconds_left(long_key) == SIGN_IN_HOURS * 3600
    clock.now += 61
    assert await sign_ins.principal(short_key) is None
    assert await sign_ins.principal(long_key) == Principal("alice", "writer")
    clock.now += SIGN_IN_HOURS * 3600
    assert await sign_ins.principal(long_key) is None
    assert await sign_ins.sign_in("nobody's") is None


async def test_signing_out_ends_one_sign_in_and_a_principals_own_oldest_go_past_its_share() -> None:
    verifier = Granting()
    sign_ins = SignIns(verifier)
    verifier.grant("t", "alice")
    verifier.grant("b", "bob")
    bobs = await sign_ins.sign_in("b")
    assert bobs is not None
    keys = []
    for _ in range(SIGN_INS_HELD + 1):  # alice signs in a thousand times and more
        opened = await sign_ins.sign_in("t")
        assert opened is not None
        keys.append(opened[0])
    assert len(set(keys)) == len(keys)
    assert await sign_ins.principal(keys[0]) is None  # her own oldest made room
    assert await sign_ins.principal(keys[-SIGN_INS_PER_PRINCIPAL - 1]) is None
    assert await sign_ins.principal(keys[-SIGN_INS_PER_PRINCIPAL]) == Principal("alice", "writer")
    assert await sign_ins.principal(bobs[0]) == Principal("bob", "writer")  # never another's
    sign_ins.sign_out(keys[-2])
    assert await sign_ins.principal(keys[-2]) is None
    assert await sign_ins.principal(keys[-1]) == Principal("alice", "writer")


async def test_when_every_sign_in_is_held_the_heaviest_holder_gives_up_its_oldest() -> None:
    verifier = Granting()
    sign_ins = SignIns(verifier, shares=Limits(sign_ins=3, sign_ins_total=4).sign_in_shares())
    for name in ("alice", "bob", "carol"):
        verifier.grant(name, name)
    alice = [await sign_ins.sign_in("alice") for _ in range(3)]
    bob = await sign_ins.sign_in("bob")
    carol = await sign_ins.sign_in("carol")  # full: alice, holding the most, gives up her oldest
    assert alice[0] is not None
    assert alice[1] is not None
    assert bob is not None
    assert carol is not None
    assert await sign_ins.principal(alice[0][0]) is None
    assert await sign_ins.principal(alice[1][0]) == Principal("alice", "writer")
    assert await sign_ins.principal(bob[0]) == Principal("bob", "writer")
