"""The one door: the ledger as one principal may use it.

Every adapter that serves a principal (the MCP tools and resources, the browser view's routes and
live socket, ``serve``'s socket, the in-process tool) goes through :meth:`Ledger.as_principal`:
it passes who calls and shows the answer. The rules themselves are :mod:`thoughtledger.api.access`'s
(:func:`~thoughtledger.api.access.allowed`); this module applies them to every use case, so an
adapter never reads a session's owner or filters sessions itself.

Which session a name means is decided here too. Without a principal (stdio, the Python API, HTTP
without ``--auth``) a name is taken literally. With one, a name is the principal's own session if
it may read (for writing: write) a session of that id, and otherwise the principal's own session
under the id :func:`~thoughtledger.api.access.namespaced` derives from the name. Another
principal's session therefore answers exactly as a session that does not exist: reading it says
it is not there, and writing to it starts the caller's own session.

No method here that reads appends anything (an idle session's expiry is recorded by the next
write, see :meth:`Ledger.expire_idle`).
"""

from typing import TYPE_CHECKING

from thoughtledger.api.access import Principal
from thoughtledger.api.part_method import PartMethod
from thoughtledger.api.scope_figures import ScopedFigures
from thoughtledger.api.scope_reads import ScopedReads
from thoughtledger.api.scope_rules import ScopeRules
from thoughtledger.api.scope_writes import ScopedWrites

if TYPE_CHECKING:
    from thoughtledger.api.service import Ledger


class Scope:
    """The ledger as ``principal`` may use it (``None``: the ledger's own user, allowed all).

    Made by :meth:`thoughtledger.api.Ledger.as_principal`; cheap, so an adapter makes one per
    request. Each method refuses what the principal may not do with
    :class:`~thoughtledger.api.errors.AccessDeniedError` (a role that may not act at all) or
    answers as if the session did not exist (a session the principal may not see).

    It is its parts, each over the same rules: the rules applied (:mod:`.scope_rules`), the
    reads (:mod:`.scope_reads`), the figures (:mod:`.scope_figures`) and the writes
    (:mod:`.scope_writes`); each method below is one part's.
    """

    def __init__(self, ledger: "Ledger", principal: Principal | None) -> None:
        self.principal = principal
        self._rules = ScopeRules(ledger, principal)
        self._reads = ScopedReads(ledger, self._rules)
        self._figures = ScopedFigures(ledger, self._rules)
        self._writes = ScopedWrites(ledger, self._rules)

    # -- the rules, applied --------------------------------------------------------------------

    @property
    def owner(self) -> str | None:
        """The owner recorded on a session this principal starts (``None``: the ledger's user)."""
        return self._rules.owner

    @property
    def sees_all(self) -> bool:
        """Whether this principal may read every session (no principal, or an auditor)."""
        return self._rules.sees_all

    require = PartMethod("_rules", ScopeRules.require)
    sees = PartMethod("_rules", ScopeRules.sees)
    find = PartMethod("_rules", ScopeRules.find)
    writable = PartMethod("_rules", ScopeRules.writable)

    # -- reading -------------------------------------------------------------------------------

    head = PartMethod("_reads", ScopedReads.head)
    state = PartMethod("_reads", ScopedReads.state)
    facts = PartMethod("_reads", ScopedReads.facts)
    events = PartMethod("_reads", ScopedReads.events)
    actions = PartMethod("_reads", ScopedReads.actions)
    history = PartMethod("_reads", ScopedReads.history)
    verify = PartMethod("_reads", ScopedReads.verify)
    stream = PartMethod("_reads", ScopedReads.stream)
    sessions = PartMethod("_reads", ScopedReads.sessions)
    search = PartMethod("_reads", ScopedReads.search)
    forks = PartMethod("_reads", ScopedReads.forks)
    fork_point = PartMethod("_reads", ScopedReads.fork_point)
    compare = PartMethod("_reads", ScopedReads.compare)
    subscribe = PartMethod("_reads", ScopedReads.subscribe)

    # -- figures -------------------------------------------------------------------------------

    figures = PartMethod("_figures", ScopedFigures.figures)
    loops = PartMethod("_figures", ScopedFigures.loops)
    model_usage = PartMethod("_figures", ScopedFigures.model_usage)

    # -- writing -------------------------------------------------------------------------------

    think = PartMethod("_writes", ScopedWrites.think)
    think_batch = PartMethod("_writes", ScopedWrites.think_batch)
    capture = PartMethod("_writes", ScopedWrites.capture)
    fork = PartMethod("_writes", ScopedWrites.fork)
    annotate = PartMethod("_writes", ScopedWrites.annotate)
    redact = PartMethod("_writes", ScopedWrites.redact)


__all__ = ["Scope"]
