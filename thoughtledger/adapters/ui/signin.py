"""Who is looking: bearer tokens checked by a verifier, and the sign-ins a browser holds.

The app takes any verifier with the MCP SDK's ``TokenVerifier`` shape (``async
verify_token(token) -> AccessToken | None``): the token file's, an OAuth issuer's. A token
stands for the principal ``serve --http --auth`` would see: the token's subject, else its
client id, with the role its scopes grant.

A browser trades its token once for a sign-in: a random id in an HttpOnly cookie, mapped here to
the token and its principal. The token stays in this process's memory (never in a URL, a page or
a log) so that it can be verified again: every :data:`RECHECK_SECONDS` while the sign-in is
used, so a revoked token ends its sign-ins within seconds. A sign-in lasts at most
:data:`SIGN_IN_HOURS` (less when the token expires sooner). Each principal holds at most its
share of sign-ins (``ui --max-sign-ins``, :data:`SIGN_INS_PER_PRINCIPAL`): one more ends its own
oldest, so a principal signing in a thousand times signs out only its own browsers; all
together hold at most :data:`SIGN_INS_HELD`, and when full the principal holding the most
gives up its oldest (see :mod:`thoughtledger.adapters.common.shares`).
"""

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from thoughtledger.adapters.common.shares import (
    SIGN_INS_PER_PRINCIPAL,
    SIGN_INS_TOTAL,
    Held,
    Limits,
    Shares,
)
from thoughtledger.api import Grant, Principal, principal_of

RECHECK_SECONDS = 2.0
"""How long a verified token is trusted before it is verified again (sign-ins, live streams)."""
SIGN_IN_HOURS = 8
SIGN_INS_HELD = SIGN_INS_TOTAL


class Granted(Grant, Protocol):
    """What a verifier answers for a good token (the MCP SDK's ``AccessToken`` is one)."""

    @property
    def expires_at(self) -> int | None:
        """When the token stops being valid (Unix seconds), if it says."""
        ...


class TokenCheck(Protocol):
    """Says whom a bearer token stands for (the MCP SDK's ``TokenVerifier`` protocol)."""

    async def verify_token(self, token: str) -> Granted | None:
        """Return what ``token`` grants, or ``None`` when it grants nothing."""
        ...


@dataclass
class SignIn:
    """One browser's sign-in.

    Attributes:
        token: The token it was made with (kept to verify it again; never sent anywhere).
        principal: Whom it stands for, as last verified.
        ends: When it ends (``time.monotonic`` seconds).
        checked: When the token was last verified (``time.monotonic`` seconds).
        held: Its slot among its principal's sign-ins.
    """

    token: str
    principal: Principal
    ends: float
    checked: float
    held: Held | None = None


class SignIns:
    """The sign-ins the app holds, by cookie value.

    Args:
        verifier: Who a token stands for.
        recheck: Seconds a verification is trusted.
        clock: Monotonic seconds (a parameter so that tests can move it).
        shares: The sign-ins each principal, and all, may hold (``ui --max-sign-ins``).
    """

    def __init__(
        self,
        verifier: TokenCheck,
        *,
        recheck: float = RECHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        shares: Shares | None = None,
    ) -> None:
        self._verifier = verifier
        self._recheck = recheck
        self._clock = clock
        self._held: OrderedDict[str, SignIn] = OrderedDict()
        self._shares = shares if shares is not None else Limits().sign_in_shares()

    async def check(self, token: str) -> Principal | None:
        """Whom ``token`` stands for now, or ``None`` (verified afresh, as a bearer token is)."""
        granted = await self._verifier.verify_token(token)
        return None if granted is None else principal_of(granted)

    async def sign_in(self, token: str) -> tuple[str, SignIn] | None:
        """Verify ``token`` and open a sign-in for it; ``None`` when the token is not good.

        Returns:
            The cookie value (32 random bytes, URL-safe) and the sign-in.
        """
        granted = await self._verifier.verify_token(token)
        if granted is None:
            return None
        now = self._clock()
        ends = now + SIGN_IN_HOURS * 3600
        if granted.expires_at is not None:
            ends = min(ends, now + max(0.0, granted.expires_at - time.time()))
        self._forget_ended(now)
        key = secrets.token_urlsafe(32)
        principal = principal_of(granted)

        # Its own oldest ends past its share; when all are full, the heaviest holder's oldest.
        def ended() -> None:  # taken back for another sign-in: signed out
            self._held.pop(key, None)

        held = self._shares.take(principal.name, on_end=ended)
        signed = SignIn(token, principal, ends, now, held)
        self._held[key] = signed
        return key, signed

    async def principal(self, key: str) -> Principal | None:
        """Whom the sign-in ``key`` stands for, or ``None`` (unknown, ended, or revoked)."""
        signed = self._held.get(key)
        if signed is None:
            return None
        now = self._clock()
        if now >= signed.ends:
            self._drop(key)
            return None
        if now - signed.checked >= self._recheck:
            granted = await self._verifier.verify_token(signed.token)
            if granted is None:  # revoked (or the token file is unusable): signed out
                self._drop(key)
                return None
            signed.principal, signed.checked = principal_of(granted), now
        return signed.principal

    def seconds_left(self, key: str) -> int:
        """Whole seconds until the sign-in ``key`` ends (0 when it is not held)."""
        signed = self._held.get(key)
        return 0 if signed is None else max(0, int(signed.ends - self._clock()))

    def sign_out(self, key: str) -> None:
        """End the sign-in ``key`` (nothing happens when it is not held)."""
        self._drop(key)

    def _drop(self, key: str) -> None:
        signed = self._held.pop(key, None)
        if signed is not None and signed.held is not None:
            signed.held.release()

    def _forget_ended(self, now: float) -> None:
        for key in [key for key, signed in self._held.items() if now >= signed.ends]:
            self._drop(key)


__all__ = [
    "RECHECK_SECONDS",
    "SIGN_INS_HELD",
    "SIGN_INS_PER_PRINCIPAL",
    "SIGN_IN_HOURS",
    "Granted",
    "SignIn",
    "SignIns",
    "TokenCheck",
]
