"""What a client of the live socket (``/api/ws``) may send, read and checked: pure, no I/O.

Every message is one JSON object, as text::

    {"op": "subscribe", "id": "s1", "sessions": ["ID", ...] | "all", "after": N | "now"}
    {"op": "unsubscribe", "id": "s1"}
    {"op": "ping"}

``id`` names a subscription on this socket (letters, digits, ``.``, ``_``, ``-``; at most
:data:`ID_MAX` characters; the server names one ``s1``, ``s2``, ... when it is left out);
``after`` is the last position the client holds (0: from the beginning, ``"now"``: from the
log's current end), so a client that reconnects resumes where it stopped. A message that breaks
these rules is answered with an ``error`` message and changes nothing.
"""

import json
import re
from dataclasses import dataclass
from typing import Literal

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.ids import check_id

ID_MAX = 64
"""The longest subscription id a client may choose."""

SESSIONS_MAX = 100
"""The most sessions one subscription may name (``"all"`` follows any number)."""

AFTER_MAX = 2**63 - 1
"""The largest position (a signed 64-bit integer, as every backend stores it)."""

_ID = re.compile(rf"[A-Za-z0-9._-]{{1,{ID_MAX}}}")
_OPS = ("subscribe", "unsubscribe", "ping")


class BadMessageError(InvalidInputError):
    """A client's message is not one the socket understands (answered, never fatal)."""


@dataclass(frozen=True)
class Subscribe:
    """Follow some sessions, or all the client may read, from a position.

    Attributes:
        id: The subscription's name on this socket (``None``: the server names it).
        sessions: The sessions followed, each once; ``None``: every session the client may read.
        after: The last position held (``"now"``: the log's current end).
    """

    id: str | None
    sessions: tuple[str, ...] | None
    after: int | Literal["now"]


@dataclass(frozen=True)
class Unsubscribe:
    """Stop following a subscription.

    Attributes:
        id: The subscription's name.
    """

    id: str


@dataclass(frozen=True)
class Ping:
    """Ask for a ``pong`` (a client's own check that the socket still answers)."""


ClientMessage = Subscribe | Unsubscribe | Ping


def parse_message(text: str) -> ClientMessage:
    """The message ``text`` holds.

    Raises:
        BadMessageError: Not JSON, not an object, an unknown ``op`` or a field out of bounds.
    """
    try:
        given = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        raise BadMessageError("send one JSON object per message") from None
    if not isinstance(given, dict):
        raise BadMessageError("send one JSON object per message")
    op = given.get("op")
    if op not in _OPS:
        raise BadMessageError(f"op must be one of {', '.join(_OPS)}, not {str(op)[:40]!r}")
    if op == "ping":
        return Ping()
    if op == "unsubscribe":
        return Unsubscribe(_subscription_id(given.get("id")))
    name = None if given.get("id") is None else _subscription_id(given.get("id"))
    return Subscribe(name, _sessions(given.get("sessions")), _after(given.get("after", 0)))


def _subscription_id(given: object) -> str:
    if not isinstance(given, str) or not _ID.fullmatch(given):
        raise BadMessageError(
            f"id must be 1 to {ID_MAX} letters, digits, '.', '_' or '-' (the subscription's name)"
        )
    return given


def _sessions(given: object) -> tuple[str, ...] | None:
    if given == "all":
        return None
    if not isinstance(given, list) or not given:
        raise BadMessageError('sessions must be a list of session ids, or "all"')
    if len(given) > SESSIONS_MAX:
        raise BadMessageError(
            f'at most {SESSIONS_MAX} sessions in one subscription, not {len(given)} ("all" '
            "follows every session you may read)"
        )
    if not all(isinstance(item, str) for item in given):
        raise BadMessageError("sessions must be a list of session ids (strings)")
    try:
        return tuple(dict.fromkeys(check_id(item) for item in given))
    except InvalidInputError as exc:
        raise BadMessageError(str(exc)) from None


def _after(given: object) -> int | Literal["now"]:
    if given == "now":
        return "now"
    if isinstance(given, bool) or not isinstance(given, int) or not 0 <= given <= AFTER_MAX:
        raise BadMessageError(
            f'after must be a position (0 to {AFTER_MAX}) or "now", not {given!r:.40}'
        )
    return given


__all__ = [
    "AFTER_MAX",
    "ID_MAX",
    "SESSIONS_MAX",
    "BadMessageError",
    "ClientMessage",
    "Ping",
    "Subscribe",
    "Unsubscribe",
    "parse_message",
]
