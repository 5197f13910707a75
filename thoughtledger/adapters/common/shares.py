"""One share policy for what a principal holds open: live sockets, live streams, sign-ins.

A live socket or an event stream holds a connection (and a task, and a subscription) for as
long as its client likes; a sign-in holds a token in memory for hours. Without a bound per
principal, one principal within its rights could hold them all: 1,024 idle sockets of one
reader kept every other principal, writers included, out of the server. So every door that
opens such a thing takes a slot of a :class:`Shares` first:

- a principal holds at most ``per_principal`` slots: past it, the principal over its share is
  refused (:class:`ShareRefusedError`: HTTP 429, or close code 1013 on a socket), or, where
  the door says so (sign-ins), its own oldest slot is ended to make room;
- all principals together hold at most ``total``: when full, a newcomer that holds fewer than
  the heaviest holder takes the room of that holder's oldest slot (ended through its
  ``on_end``), and one that holds as many as anyone is refused. So a principal is only ever
  refused, or pushed out, for what it holds itself, never for what another holds: with
  ``total`` at least ``per_principal`` times the principals served, nobody is pushed out at all.

The principal ``None`` is a server's caller without authentication: one principal, whose share
is the total. Pure bookkeeping, no I/O; each door says how a refusal reaches its client.
"""

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Overflow = Literal["refuse", "oldest"]
"""What a principal at its share gets for one more: refused, or its own oldest slot ended."""

REFUSED_STATUS = 429
"""HTTP status of a refusal: this caller is over its share, and can act on it."""
REFUSED_CLOSE = 1013
"""WebSocket close code of a slot ended to make room ("try again later")."""


LIVE_PER_PRINCIPAL = 16
"""Live sockets and event streams one principal may hold open (a browser tab holds one or two)."""
SIGN_INS_PER_PRINCIPAL = 16
"""Sign-ins one principal may hold (one per browser); one more ends its own oldest."""
SIGN_INS_TOTAL = 1000
"""Sign-ins every principal together may hold."""


class ShareRefusedError(Exception):
    """A principal asked for more than its share (its message says what and how to free one)."""


@dataclass(eq=False)
class Held:
    """One slot a principal holds; :meth:`release` gives it back (once; later calls do nothing).

    Attributes:
        principal: Who holds it (``None``: the unauthenticated caller).
        on_end: Called when the slot is taken back to make room (the door closes what it holds).
    """

    principal: str | None
    on_end: Callable[[], None] | None = None
    _shares: "Shares | None" = field(default=None, repr=False)

    @property
    def ended(self) -> bool:
        """Whether the slot was given back, or taken back to make room."""
        return self._shares is None

    def release(self) -> None:
        """Give the slot back (what it held has closed)."""
        shares, self._shares = self._shares, None
        if shares is not None:
            shares._forget(self)


class Shares:
    """The slots of one kind of long-lived resource, per principal and in all.

    Args:
        what: What a slot is, for messages (``"live sockets and streams"``).
        flag: The option that sets ``per_principal``, for messages (``"--max-live"``).
        per_principal: Slots one principal may hold.
        total: Slots all principals together may hold.
        overflow: What a principal at its share gets for one more (see :data:`Overflow`).
        total_flag: The option that sets ``total``, if one does.

    Raises:
        ValueError: A bound below 1, or ``total`` below ``per_principal``.
    """

    def __init__(
        self,
        what: str,
        flag: str,
        *,
        per_principal: int,
        total: int,
        overflow: Overflow = "refuse",
        total_flag: str | None = None,
    ) -> None:
        if per_principal < 1 or total < per_principal:
            raise ValueError("shares need 1 <= per_principal <= total")
        self.what = what
        self.flag = flag
        self.per_principal = per_principal
        self.total = total
        self.overflow = overflow
        self.total_flag = total_flag
        self._held: dict[str | None, OrderedDict[int, Held]] = {}
        self._count = 0

    def holds(self, principal: str | None) -> int:
        """Slots ``principal`` holds now."""
        return len(self._held.get(principal, ()))

    @property
    def count(self) -> int:
        """Slots held by every principal together."""
        return self._count

    def take(self, principal: str | None, *, on_end: Callable[[], None] | None = None) -> Held:
        """A slot for ``principal``, making room as the policy says.

        Args:
            principal: Who asks (``None``: the unauthenticated caller, whose share is the total).
            on_end: Called if the slot is later taken back to make room.

        Raises:
            ShareRefusedError: ``principal`` is at its share (and the policy refuses), or the
                total is reached and it holds as many slots as anyone.
        """
        mine = self.holds(principal)
        share = self.total if principal is None else self.per_principal
        if mine >= share:
            if self.overflow == "refuse":
                raise ShareRefusedError(self._over_share(principal, share))
            self._end_oldest(principal)
        if self._count >= self.total:
            heaviest = max(self._held, key=lambda who: len(self._held[who]))
            if len(self._held[heaviest]) < self.holds(principal) + 2:
                raise ShareRefusedError(self._full(principal))
            self._end_oldest(heaviest)
        held = Held(principal, on_end, self)
        self._held.setdefault(principal, OrderedDict())[id(held)] = held
        self._count += 1
        return held

    def _end_oldest(self, principal: str | None) -> None:
        oldest = next(iter(self._held[principal].values()))
        oldest.release()
        if oldest.on_end is not None:
            oldest.on_end()

    def _forget(self, held: Held) -> None:
        mine = self._held.get(held.principal)
        if mine is not None and mine.pop(id(held), None) is not None:
            self._count -= 1
            if not mine:
                del self._held[held.principal]

    def _over_share(self, principal: str | None, share: int) -> str:
        who = "this server's caller" if principal is None else f"principal {principal!r}"
        return (
            f"{who} already holds {share} {self.what}, its share ({self.flag}): close one "
            "you no longer use, then try again"
        )

    def _full(self, principal: str | None) -> str:
        held = self.holds(principal)
        return (
            f"this server holds {self.total} {self.what}, its bound"
            + (f" ({self.total_flag})" if self.total_flag else "")
            + ", and "
            f"no principal holds more than one more than the {held} you hold: close one you "
            "no longer use, or try again later"
        )


@dataclass(frozen=True)
class Limits:
    """The shares of one server (``serve --http`` or ``ui``), as its options set them.

    Attributes:
        live: Live sockets and event streams per principal (``--max-live``).
        live_total: All principals' together (``--max-live-total``; ``None``: half the
            connections the server accepts, so that requests always find room).
        sign_ins: Sign-ins per principal (``--max-sign-ins``).
        sign_ins_total: All principals' sign-ins together.
    """

    live: int = LIVE_PER_PRINCIPAL
    live_total: int | None = None
    sign_ins: int = SIGN_INS_PER_PRINCIPAL
    sign_ins_total: int = SIGN_INS_TOTAL

    def live_shares(self) -> Shares:
        """The shares of live sockets and streams (refused past a principal's share)."""
        total = self.live_total
        if total is None:
            from thoughtledger.adapters.common.hardened import connection_limit

            total = max(1, connection_limit() // 2)
        return Shares(
            "live sockets and streams",
            "--max-live",
            per_principal=min(self.live, total),
            total=total,
            total_flag="--max-live-total",
        )

    def sign_in_shares(self) -> Shares:
        """The shares of sign-ins (a principal's own oldest ends past its share)."""
        total = max(self.sign_ins_total, self.sign_ins)
        return Shares(
            "sign-ins",
            "--max-sign-ins",
            per_principal=self.sign_ins,
            total=total,
            overflow="oldest",
        )


__all__ = [
    "LIVE_PER_PRINCIPAL",
    "REFUSED_CLOSE",
    "REFUSED_STATUS",
    "SIGN_INS_PER_PRINCIPAL",
    "SIGN_INS_TOTAL",
    "Held",
    "Limits",
    "Overflow",
    "ShareRefusedError",
    "Shares",
]
