"""The access rules applied to one principal: which session a name means, and who may act.

The rules themselves are :mod:`thoughtledger.api.access`'s
(:func:`~thoughtledger.api.access.allowed`); :class:`ScopeRules` applies them for one principal,
reading each session's owner once, and is what every part of a :class:`~thoughtledger.api.Scope`
asks before it reads or writes.
"""

from collections import OrderedDict
from typing import TYPE_CHECKING

from thoughtledger.api.access import Action, Principal, allowed, namespaced, refusal
from thoughtledger.api.errors import not_found
from thoughtledger.ledger.ids import check_id

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger

_OWNERS_HELD = 4096
"""Owners a scope remembers (a session's owner never changes): a live feed of every session
checks each session once, not each event."""


class ScopeRules:
    """The access rules for ``principal`` (``None``: the ledger's own user, allowed all).

    Args:
        ledger: Where sessions' owners are read.
        principal: Who calls.
    """

    def __init__(self, ledger: "Ledger", principal: Principal | None) -> None:
        self._ledger = ledger
        self.principal = principal
        self._owners: OrderedDict[str, tuple[bool, str | None]] = OrderedDict()

    @property
    def owner(self) -> str | None:
        """The owner recorded on a session this principal starts (``None``: the ledger's user)."""
        return self.principal.name if self.principal is not None else None

    @property
    def sees_all(self) -> bool:
        """Whether this principal may read every session (no principal, or an auditor)."""
        return allowed(self.principal, "read_all", None)

    def require(self, action: Action, what: str) -> None:
        """Refuse an ``action`` the principal's role never allows (``what``: the act, for people).

        Raises:
            AccessDeniedError: The role does not allow it (the message names the role and the
                token that would).
        """
        if not allowed(self.principal, action, self.owner):
            raise refusal(self.principal, action, what)

    async def _owner_of(self, session_id: str) -> tuple[bool, str | None]:
        held = self._owners.get(session_id)
        if held is not None and held[0]:
            self._owners.move_to_end(session_id)
            return held
        found = await self._ledger.owner_of(session_id)
        if found[0]:  # a session that does not exist yet may start, with an owner, at any time
            self._owners[session_id] = found
            while len(self._owners) > _OWNERS_HELD:
                self._owners.popitem(last=False)
        return found

    async def sees(self, session_id: str) -> bool:
        """Whether the session ``session_id`` exists and this principal may read it.

        Raises:
            InvalidInputError: A malformed id.
            StoreError: The store failed.
        """
        exists, owner = await self._owner_of(check_id(session_id))
        return exists and allowed(self.principal, "read", owner)

    async def find(self, name: str) -> str:
        """Return the id of the session ``name`` stands for, if this principal may read it.

        Raises:
            InvalidInputError: A malformed id.
            SessionNotFoundError: No such session this principal may read (the same error,
                word for word, whether it is missing or another principal's).
            StoreError: The store failed.
        """
        name = check_id(name)
        candidates = [name]
        if self.principal is not None:
            candidates.append(namespaced(self.principal.name, name))
        for candidate in candidates:
            if await self.sees(candidate):
                return candidate
        raise not_found(name)

    async def writable(self, name: str) -> str:
        """Return the id a thought for the session named ``name`` goes to.

        The session itself if this principal may write it (or it does not exist yet and no
        principal asks); otherwise the principal's own session under the derived id.

        Raises:
            InvalidInputError: A malformed id.
            AccessDeniedError: The principal's role records nothing.
            StoreError: The store failed.
        """
        self.require("write", "record thoughts")
        name = check_id(name)
        if self.principal is None:
            return name
        exists, owner = await self._owner_of(name)
        if exists and allowed(self.principal, "write", owner):
            return name
        return namespaced(self.principal.name, name)

    @property
    def only_owner(self) -> str | None:
        """The owner whose sessions alone count for this principal (``None``: every session)."""
        return None if self.sees_all else self.owner


__all__ = ["ScopeRules"]
