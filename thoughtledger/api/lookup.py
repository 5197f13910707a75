"""Finding sessions: their heads, and the one session an id or a prefix of one names.

A private part of :class:`thoughtledger.api.Ledger`: callers reach the heads the store keeps
through the ledger's methods, never through the store.
"""

import difflib
from dataclasses import dataclass, field

from thoughtledger.ledger.ids import check_id
from thoughtledger.ledger.store.base import EventStore, StreamHead

_PREFIX_PROBE = 6
"""Heads read after a prefix: enough to tell one match from several (and to name five)."""

_CLOSE_CAP = 20_000
"""Ids compared with an unknown one when suggesting the closest (the first this many)."""


@dataclass(frozen=True, slots=True)
class SessionMatch:
    """What an id, or a prefix of one, names in a ledger.

    Attributes:
        session_id: The one session named (its exact id, or the only id the prefix starts).
        several: The sessions the prefix starts, when it starts more than one (up to six).
        close: When it names none: the closest ids, best first (up to three).
    """

    session_id: str | None
    several: list[str] = field(default_factory=list)
    close: list[str] = field(default_factory=list)


async def all_heads(store: EventStore, *, cap: int | None = None) -> list[StreamHead]:
    """Every head ``store`` holds, in id order (the first ``cap`` of them when a cap is given).

    Raises:
        StoreError: The store failed.
    """
    heads: list[StreamHead] = []
    after: str | None = None
    while cap is None or len(heads) < cap:
        page = await store.list_heads(after_session_id=after, limit=1000)
        if not page:
            break
        heads += page
        after = page[-1].session_id
    return heads


class Lookup:
    """The ledger's look-ups over heads.

    Args:
        store: The log.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store

    async def head(self, session_id: str) -> StreamHead | None:
        """Return a session's head (version, hash, times), or ``None`` when it has no events.

        Raises:
            InvalidInputError: The id is malformed.
            StoreError: The store failed.
        """
        return await self._store.stream_head(session_id)

    async def heads(
        self, *, after_session_id: str | None = None, limit: int = 1000
    ) -> list[StreamHead]:
        """Return up to ``limit`` heads in id order, paging after ``after_session_id``.

        Raises:
            InvalidInputError: A limit below 1.
            StoreError: The store failed.
        """
        return await self._store.list_heads(after_session_id=after_session_id, limit=limit)

    async def all_heads(self, *, cap: int | None = None) -> list[StreamHead]:
        """Every session's head, in id order (the first ``cap`` of them when a cap is given).

        Raises:
            StoreError: The store failed.
        """
        return await all_heads(self._store, cap=cap)

    async def find_session(self, given: str, *, suggest: bool = True) -> SessionMatch:
        """Return what ``given`` names: an exact id, or the one id it is a prefix of.

        Args:
            given: An id or a prefix of one.
            suggest: When nothing matches, name ids close to it (reads up to a few thousand
                heads: a bulk caller naming many new sessions passes ``False``).

        Raises:
            InvalidInputError: ``given`` is not a well-formed id (nor prefix of one).
            StoreError: The store failed.
        """
        check_id(given)
        if await self._store.stream_head(given) is not None:
            return SessionMatch(given)
        following = await self._store.list_heads(after_session_id=given, limit=_PREFIX_PROBE)
        prefixed = [head.session_id for head in following if head.session_id.startswith(given)]
        if len(prefixed) == 1:
            return SessionMatch(prefixed[0])
        if prefixed:
            return SessionMatch(None, several=prefixed)
        if not suggest:
            return SessionMatch(None)
        known = [head.session_id for head in await self.all_heads(cap=_CLOSE_CAP)]
        return SessionMatch(None, close=difflib.get_close_matches(given, known, n=3, cutoff=0.5))


__all__ = ["Lookup", "SessionMatch", "StreamHead", "all_heads"]
