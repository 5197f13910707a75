"""The app's door: who a request comes from, and signing in and out.

Without a verifier the app has one user, whoever reaches the port, allowed everything (the
caller is the ledger's own user, as on stdio). With one, every page and every ``/api`` call
needs a principal: an ``Authorization: Bearer`` token (scripts, curl) or a sign-in cookie (a
browser, after ``POST /api/signin`` with the token in a JSON body). The cookie is HttpOnly,
SameSite=Strict, Path=/, named after the port (``tl_ui_8766``: cookies do not tell ports apart,
so two apps on one host keep their own), and holds only a random id (see
:mod:`thoughtledger.adapters.ui.signin`).
"""

import asyncio
import json
from collections.abc import Awaitable, Callable

from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from thoughtledger.adapters.common.pacing import Pacing
from thoughtledger.adapters.common.shares import (
    REFUSED_STATUS,
    Held,
    Limits,
    ShareRefusedError,
)
from thoughtledger.adapters.ui.signin import RECHECK_SECONDS, SignIns, TokenCheck
from thoughtledger.api import Ledger, LedgerError, Principal

SIGN_IN_BODY_MAX = 4096
"""The most bytes a sign-in request's body may hold (a token is 46 characters; a JWT a few KB)."""


class SignInRequiredError(LedgerError):
    """The request carries no principal the app accepts (answered 401)."""


class Door:
    """Who each request comes from.

    Args:
        verifier: Who a bearer token stands for; ``None``: no authentication at all.
        recheck: Seconds a verified sign-in is trusted before its token is verified again.
        limits: The shares of live sockets and streams, and of sign-ins, each principal holds.
    """

    def __init__(
        self,
        verifier: TokenCheck | None,
        *,
        recheck: float = RECHECK_SECONDS,
        limits: Limits | None = None,
    ) -> None:
        limits = limits or Limits()
        self.sign_ins = (
            SignIns(verifier, recheck=recheck, shares=limits.sign_in_shares())
            if verifier is not None
            else None
        )
        self.recheck = recheck
        self.live = limits.live_shares()
        """The live sockets and event streams each principal holds open."""
        self.pacing = Pacing()
        """Each principal's pace of requests while others are served."""

    @property
    def guarded(self) -> bool:
        """Whether requests need a principal."""
        return self.sign_ins is not None

    async def principal(self, request: HTTPConnection) -> Principal | None:
        """The principal ``request`` comes from; ``None`` when the app has no authentication.

        Raises:
            SignInRequiredError: The app needs one and the request carries none it accepts.
        """
        if self.sign_ins is None:
            return None
        given = request.headers.get("authorization")
        if given is not None:
            scheme, _, token = given.partition(" ")
            found = await self.sign_ins.check(token.strip()) if scheme.lower() == "bearer" else None
            if found is None:
                raise SignInRequiredError(
                    "that bearer token is not valid here (unknown, revoked or expired)"
                )
            return found
        key = request.cookies.get(cookie_name(request))
        if key:
            found = await self.sign_ins.principal(key)
            if found is None:
                raise SignInRequiredError("your sign-in has ended (signed out, expired or revoked)")
            return found
        raise SignInRequiredError(
            "sign in first (a token from thoughtledger token add, or Authorization: Bearer)"
        )

    async def paced_principal(self, request: HTTPConnection) -> Principal | None:
        """The principal ``request`` comes from, once its requests are on pace.

        Past its burst while another principal is served, a principal's requests wait their
        turn (see :mod:`thoughtledger.adapters.common.pacing`).

        Raises:
            SignInRequiredError: The app needs a principal and the request carries none.
            ShareRefusedError: The principal already has its most requests waiting.
        """
        found = await self.principal(request)
        await self.pacing.wait(found.name if found is not None else None)
        return found

    async def hold_live(self, request: HTTPConnection) -> tuple[Held, asyncio.Event]:
        """A slot of the live shares for ``request``'s principal, for an event stream.

        Returns:
            The slot (released when the stream ends) and an event set if the slot is taken
                back to make room (the stream then ends).

        Raises:
            SignInRequiredError: The app needs a principal and the request carries none.
            ShareRefusedError: The principal holds its share of live sockets and streams.
        """
        who = await self.principal(request)
        ended = asyncio.Event()
        return self.live.take(who.name if who is not None else None, on_end=ended.set), ended

    def still_allowed(
        self, request: HTTPConnection, ledger: Ledger, session_id: str
    ) -> Callable[[], Awaitable[bool]] | None:
        """A check that ``request``'s principal may still read the session ``session_id``.

        For live streams, which outlast the request that opened them: the principal is found
        again (a sign-out or a revoked token ends the stream) and the ledger's access door
        answers. ``None`` when the app has no authentication (nothing to check).
        """
        if self.sign_ins is None:
            return None

        async def allowed() -> bool:
            try:
                found = await self.principal(request)
            except SignInRequiredError:
                return False
            return await ledger.as_principal(found).sees(session_id)

        return allowed

    def still_signed_in(self, connection: HTTPConnection) -> Callable[[], Awaitable[bool]] | None:
        """A check that ``connection``'s principal is still signed in (its token still good).

        For the live socket, whose subscriptions were each checked when they were opened.
        ``None`` when the app has no authentication.
        """
        if self.sign_ins is None:
            return None

        async def allowed() -> bool:
            try:
                await self.principal(connection)
            except SignInRequiredError:
                return False
            return True

        return allowed

    async def sign_in(self, request: Request) -> Response:
        """``POST /api/signin`` with ``{"token": "..."}``: set the sign-in cookie.

        Answers 200 with the principal's name and role, 401 for a token that is not good, 400,
        413 or 415 for a malformed request, 404 when the app has no authentication.
        """
        if self.sign_ins is None:
            return _error(404, "this app runs without --auth: there is nothing to sign in to")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            # A cross-site form cannot send JSON without the browser asking first (CORS).
            return _error(415, 'send the token as JSON: {"token": "..."}')
        body = b""
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > SIGN_IN_BODY_MAX:
                    return _error(413, f"a sign-in is at most {SIGN_IN_BODY_MAX} bytes")
        except ClientDisconnect:  # left before sending it all: nobody reads the answer
            return _error(400, "the sign-in was not sent whole")
        try:
            token = json.loads(body).get("token")
        except (ValueError, AttributeError, RecursionError):  # nested past the parser's depth
            token = None
        if not isinstance(token, str) or not token.strip():
            return _error(400, 'send the token as JSON: {"token": "..."}')
        try:
            opened = await self.sign_ins.sign_in(token.strip())
        except ShareRefusedError as exc:  # every sign-in held, and none can be taken back
            return _error(REFUSED_STATUS, str(exc))
        if opened is None:
            return _error(401, "that token is not valid here (unknown, revoked or expired)")
        key, signed = opened
        try:  # signing in again and again: its own sign-ins wait, never another's requests
            await self.pacing.wait(signed.principal.name)
        except ShareRefusedError as exc:
            self.sign_ins.sign_out(key)
            return _error(REFUSED_STATUS, str(exc))
        answer = JSONResponse({"name": signed.principal.name, "role": signed.principal.role})
        answer.set_cookie(
            cookie_name(request),
            key,
            max_age=self.sign_ins.seconds_left(key),
            path="/",
            httponly=True,
            samesite="strict",
        )
        return answer

    async def sign_out(self, request: Request) -> Response:
        """``POST /api/signout``: end this browser's sign-in and clear its cookie."""
        if self.sign_ins is None:
            return _error(404, "this app runs without --auth: there is nothing to sign out of")
        name = cookie_name(request)
        key = request.cookies.get(name)
        if key:
            self.sign_ins.sign_out(key)
        answer = JSONResponse({"signedOut": True})
        answer.delete_cookie(name, path="/", httponly=True, samesite="strict")
        return answer

    async def me(self, request: Request) -> Response:
        """``GET /api/me``: whether the app has authentication, and who the caller is.

        Raises:
            SignInRequiredError: The app needs a principal and the request carries none.
        """
        found = await self.principal(request)
        if found is None:
            return JSONResponse({"auth": False, "name": None, "role": None})
        return JSONResponse({"auth": True, "name": found.name, "role": found.role})


def cookie_name(request: HTTPConnection) -> str:
    """The sign-in cookie's name for the port ``request`` arrived on."""
    server = request.scope.get("server")
    return f"tl_ui_{server[1]}" if server else "tl_ui"


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


__all__ = [
    "SIGN_IN_BODY_MAX",
    "Door",
    "SignInRequiredError",
    "cookie_name",
]
