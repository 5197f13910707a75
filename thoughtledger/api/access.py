"""Who calls and what they may touch: principals, their roles, and the ownership rule.

A principal is whoever an HTTP bearer token stands for (see :mod:`thoughtledger.adapters.auth`).
Each
session records the principal that started it as its owner; a principal lists, reads, appends to and
clears only its own sessions, and an ``auditor`` reads every session but writes none. Where there is
no principal at all (stdio, the Python API, HTTP without ``--auth``) the caller is the ledger's
owner and everything is allowed. Pure rules, no I/O.

A session's **agent** is who did the thinking, its **client** the software that carried the calls;
both are facts of its first event (``session.started``'s ``metadata``), written once and read as
they are by every listing, filter, statistic, view, export and span. Over MCP the agent is
:func:`session_agent`'s answer; the client is the MCP client's ``clientInfo`` (``name
version``). From Python, whatever ``metadata`` a session is started with.
"""

import functools
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from thoughtledger.api.errors import AccessDeniedError
from thoughtledger.ledger.errors import InvalidInputError

Role = Literal["reader", "writer", "auditor"]
"""``writer``: reads and writes its own sessions; ``reader``: reads its own sessions;
``auditor``: reads every session, writes none."""
ROLES: tuple[Role, ...] = get_args(Role)
DEFAULT_ROLE: Role = "writer"
"""The role of a token that carries none of the :data:`ROLE_SCOPES` (an OAuth token, say)."""
SCOPE_PREFIX = "thoughtledger:"
ROLE_SCOPES: dict[str, Role] = {f"{SCOPE_PREFIX}{role}": role for role in ROLES}
"""The OAuth scopes that grant each role (``thoughtledger:auditor``...)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller.

    Attributes:
        name: Who it is; recorded as the owner of the sessions it starts.
        role: What it may do (see :data:`Role`).
    """

    name: str
    role: Role = DEFAULT_ROLE

    @property
    def writes(self) -> bool:
        """Whether this principal may record thoughts and clear sessions at all."""
        return self.role == "writer"

    def may_read(self, owner: str | None) -> bool:
        """Whether this principal may see a session owned by ``owner`` (``None``: unowned)."""
        return self.role == "auditor" or (owner is not None and owner == self.name)

    def may_write(self, owner: str | None) -> bool:
        """Whether this principal may append to or clear a session owned by ``owner``."""
        return self.writes and owner is not None and owner == self.name


Action = Literal["read", "write", "annotate", "redact", "read_all"]
"""What a principal may ask to do with a session: ``read`` it, ``write`` (record thoughts in,
clear or fork from) it, ``annotate`` its thoughts, ``redact`` them (remove their text), or
``read_all``: every session at once (the figures over the whole ledger)."""

_NEEDS: dict[Action, Role] = {
    "read": "reader",
    "write": "writer",
    "annotate": "writer",
    "redact": "writer",
    "read_all": "auditor",
}


def allowed(principal: Principal | None, action: Action, owner: str | None) -> bool:
    """Whether ``principal`` may do ``action`` to a session owned by ``owner``: every rule.

    The ledger's own user (``None``: stdio, the Python API, HTTP without ``--auth``) may do
    everything. A reader reads its own sessions; a writer reads, writes, annotates and redacts
    its own; an auditor reads, annotates and redacts every session (removing a pasted secret is
    a reviewer's act), writes none. ``owner`` ``None`` is a session
    no principal started (the ledger's own user's): only an auditor sees it.
    """
    if principal is None:
        return True
    if action == "read":
        return principal.may_read(owner)
    if action == "write":
        return principal.may_write(owner)
    if action in ("annotate", "redact"):
        if principal.role == "auditor":
            return principal.may_read(owner)
        return principal.may_write(owner)
    return principal.role == "auditor"


Guard = Callable[[str | None], bool]
"""Whether a session owned by the argument (``None``: by no principal) may be touched: one
principal's rule for one action, made by :func:`guard` and handed to the part that touches the
session, which applies the answer to the owner it reads and never compares owners itself."""


def guard(principal: Principal | None, action: Action) -> Guard:
    """The rule :func:`allowed` gives ``principal`` for ``action``, to apply to any owner later.

    For a part that reads a session's owner only where it acts (inside an append's retry, say),
    so that the rule it applies is still this module's.
    """
    return functools.partial(allowed, principal, action)


def owner_guard(owner: str | None, action: Action) -> Guard:
    """The rule for a call of the facade made with ``owner=owner``: a writer of that name's.

    ``Ledger.think``, ``Ledger.fork`` and the batch and capture parts take the principal
    recording as the owner it stamps on the sessions it starts; that principal writes, so its
    rule is a writer's (``None``: the ledger's own user, allowed everything).
    """
    return guard(None if owner is None else Principal(owner, "writer"), action)


def refusal(principal: Principal | None, action: Action, what: str) -> AccessDeniedError:
    """The error that refuses ``principal``'s role an ``action`` it never allows.

    Args:
        principal: Who asked.
        action: What the act needs.
        what: The act, in a person's words ("record thoughts").
    """
    name, role = (principal.name, principal.role) if principal is not None else ("-", "-")
    needed = _NEEDS[action]
    article = "an" if needed == "auditor" else "a"
    return AccessDeniedError(
        f"{name!r} has the {role} role: it may not {what} (ask for {article} {needed} token)"
    )


_NAMESPACE = uuid.UUID("6f1c1a52-2f0e-4c55-9d7e-1b3c7f0d5a10")


def namespaced(principal: str, name: str) -> str:
    """The session id a caller-chosen ``name`` stands for when ``principal`` uses it.

    A name (``"default"``, ``"my-task"``, or another principal's session id) that is not one of
    the principal's own sessions is the principal's own session under a derived id: the same for
    the same principal and name across restarts, different for every principal, and the same
    answer whether or not the name is someone else's session (so it reveals nothing).
    """
    return str(uuid.uuid5(_NAMESPACE, f"{principal}\x00{name}"))


AGENT_META_KEY = "thoughtledger/agent"
"""The key of an MCP request's ``_meta`` under which a caller names its agent."""
MAX_AGENT_CHARS = 100


def check_agent(name: object) -> str:
    """Return ``name`` if it can name an agent: 1-100 characters, none of them a control.

    Raises:
        InvalidInputError: It is not a string, is empty or longer, or holds a control character
            (it is shown in terminals and pages).
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(f"an agent's name is a non-empty string, got {name!r:.60}")
    if len(name) > MAX_AGENT_CHARS:
        raise InvalidInputError(
            f"an agent's name has at most {MAX_AGENT_CHARS} characters, got {len(name)}"
        )
    if any(unicodedata.category(char).startswith("C") for char in name):
        raise InvalidInputError(f"an agent's name holds no control characters, got {name!r}")
    return name


def session_agent(
    principal: Principal | None, named: object = None, default: str | None = None
) -> str | None:
    """The agent of a session an MCP call starts: the one definition every adapter records.

    With authentication the principal is the agent: its token is the only proof of who
    thinks, so a name the call claims does not replace it. Without, the name the call gives
    under :data:`AGENT_META_KEY` in its ``_meta``, else the server's own (``serve --agent``),
    else none: the client software is a client, never an agent.

    Args:
        principal: Who the call's bearer token stands for, if anyone.
        named: The call's ``_meta`` value under :data:`AGENT_META_KEY` (``None``: not given).
        default: The server's agent name, if it was started with one.

    Raises:
        InvalidInputError: ``named`` is given and is not a valid name (see :func:`check_agent`).
    """
    if principal is not None:
        return principal.name
    if named is not None:
        return check_agent(named)
    return default


class Grant(Protocol):
    """What a verified bearer token says (the MCP SDK's ``AccessToken`` is one)."""

    @property
    def client_id(self) -> str:
        """The client the token was issued to (the principal, for a token file's tokens)."""
        ...

    @property
    def subject(self) -> str | None:
        """The user the token stands for, when an OAuth issuer names one."""
        ...

    @property
    def scopes(self) -> Sequence[str]:
        """The token's scopes (``thoughtledger:reader``... grant roles)."""
        ...


def principal_of(grant: Grant) -> Principal:
    """The principal a verified token stands for, whichever server verified it.

    An OAuth token names its user in ``subject`` and the client acting for it in ``client_id``:
    the user is the principal. A token file's token has no subject: its client is.
    """
    return Principal(grant.subject or grant.client_id, role_of(list(grant.scopes)))


def role_of(scopes: list[str]) -> Role:
    """The role a token's scopes grant: the widest read among them, else :data:`DEFAULT_ROLE`.

    ``auditor`` wins over ``writer`` over ``reader`` when several are present.
    """
    granted = {ROLE_SCOPES[scope] for scope in scopes if scope in ROLE_SCOPES}
    for role in ("auditor", "writer", "reader"):
        if role in granted:
            return role
    return DEFAULT_ROLE


__all__ = [
    "AGENT_META_KEY",
    "DEFAULT_ROLE",
    "MAX_AGENT_CHARS",
    "ROLES",
    "ROLE_SCOPES",
    "SCOPE_PREFIX",
    "Action",
    "Grant",
    "Guard",
    "Principal",
    "Role",
    "allowed",
    "check_agent",
    "guard",
    "namespaced",
    "owner_guard",
    "principal_of",
    "refusal",
    "role_of",
    "session_agent",
]
