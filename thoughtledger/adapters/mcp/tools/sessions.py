"""Which ledger session a tool call continues: per connection, per name, or a new one.

A caller names a session in one of three ways:

* not at all, on a transport with a connection identity (stdio: the process; streamable HTTP: the
  ``mcp-session-id`` of a handshake-era client): the connection's own session;
* by a name: a ``sessionId`` from an earlier answer, or a ``session_id`` as the MCP API reference
names one;
* not at all, on a transport without identity (2026-07-28 HTTP clients, stateless HTTP): the
  caller's current run, one of the few it recently worked in (per principal; see
  :mod:`thoughtledger.adapters.mcp.tools.implicit`), whose ``sessionId`` in the answer is the handle
  to pass back.

A ledger session id changes when its session is cleared or expires (the next thought starts a
successor under a new id), so both connections and names are *handles* resolved through a
:class:`SessionDirectory` to the session they currently continue. The directory lives in the
server's lifespan state: it is per process, and a restart forgets where renamed handles led (the
thoughts themselves are all in the ledger, under the ids the answers reported).
"""

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_CAPACITY = 10_000
"""Handles remembered; least recently used go first (a forgotten one restarts at its name)."""

RUNS_KEPT = 8
"""Runs a caller without a connection identity may continue unnamed (most recent first out)."""


@dataclass
class SessionDirectory:
    """Handles (a connection, a name) mapped to the ledger session each currently continues.

    Args:
        capacity: How many handles to remember.
    """

    capacity: int = DEFAULT_CAPACITY
    _current: OrderedDict[str, str] = field(default_factory=OrderedDict)
    _runs: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def resolve(self, handle: str, first: Callable[[], str]) -> str:
        """Return the session ``handle`` continues, binding it to ``first()`` when it has none.

        Binding happens before any await, so concurrent first calls on one handle agree.
        """
        session_id = self._current.get(handle)
        if session_id is None:
            session_id = first()
            self.bind(handle, session_id)
        else:
            self._current.move_to_end(handle)
        return session_id

    def peek(self, handle: str) -> str | None:
        """Return the session ``handle`` continues, if it has one yet."""
        return self._current.get(handle)

    def bind(self, handle: str, session_id: str) -> None:
        """Record that ``handle`` now continues ``session_id``."""
        self._current[handle] = session_id
        self._current.move_to_end(handle)
        while len(self._current) > self.capacity:
            self._current.popitem(last=False)

    def runs(self) -> list[str]:
        """The sessions unnamed calls recently continued, the current one last."""
        return list(self._runs)

    def ran(self, session_id: str, *, instead_of: str | None = None) -> None:
        """Record that an unnamed call continued ``session_id`` (now the current run).

        Args:
            session_id: The session the thought landed in.
            instead_of: The run the call was meant for, when the thought landed elsewhere (it
                was cleared or had expired, and a successor took its place).
        """
        if instead_of is not None and instead_of != session_id:
            self._runs.pop(instead_of, None)
        self._runs[session_id] = None
        self._runs.move_to_end(session_id)
        while len(self._runs) > RUNS_KEPT:
            self._runs.popitem(last=False)


PRINCIPALS_REMEMBERED = 1024
"""Principals whose directories are kept (least recently active go first)."""


@dataclass
class Directories:
    """One :class:`SessionDirectory` per principal: each one's handles compete only with its own.

    No caller can push another's handles out by naming many sessions.

    Args:
        capacity: Handles each principal's directory remembers.
    """

    capacity: int = DEFAULT_CAPACITY
    _by_principal: OrderedDict[str | None, SessionDirectory] = field(default_factory=OrderedDict)

    def of(self, principal: str | None) -> SessionDirectory:
        """The directory of ``principal`` (``None``: unauthenticated callers share one)."""
        directory = self._by_principal.get(principal)
        if directory is None:
            directory = self._by_principal[principal] = SessionDirectory(self.capacity)
            while len(self._by_principal) > PRINCIPALS_REMEMBERED:
                self._by_principal.popitem(last=False)
        else:
            self._by_principal.move_to_end(principal)
        return directory


def connection_handle(key: str) -> str:
    """The directory handle of a connection."""
    return f"connection:{key}"


def name_handle(name: str) -> str:
    """The directory handle of a caller-chosen session name (or an id from an earlier answer)."""
    return f"name:{name}"


__all__ = [
    "DEFAULT_CAPACITY",
    "PRINCIPALS_REMEMBERED",
    "RUNS_KEPT",
    "Directories",
    "SessionDirectory",
    "connection_handle",
    "name_handle",
]
