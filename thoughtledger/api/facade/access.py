"""Who calls and what they may touch: principals, their roles, and the ownership rule.

A principal is whoever an HTTP bearer token stands for (see :mod:`thoughtledger.api.auth`). Each
session records the principal that started it as its owner; a principal lists, reads, appends to and
clears only its own sessions, and an ``auditor`` reads every session but writes none. Where there is
no principal at all (stdio, the Python API, HTTP without ``--auth``) the caller is the ledger's
owner and everything is allowed. Pure rules, no I/O.
"""

import uuid
from dataclasses import dataclass
from typing import Literal, get_args

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


_NAMESPACE = uuid.UUID("6f1c1a52-2f0e-4c55-9d7e-1b3c7f0d5a10")


def namespaced(principal: str, name: str) -> str:
    """The session id a caller-chosen ``name`` stands for when ``principal`` uses it.

    A name (``"default"``, ``"my-task"``, or another principal's session id) that is not one of
    the principal's own sessions is the principal's own session under a derived id: the same for
    the same principal and name across restarts, different for every principal, and the same
    answer whether or not the name is someone else's session (so it reveals nothing).
    """
    return str(uuid.uuid5(_NAMESPACE, f"{principal}\x00{name}"))


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
    "DEFAULT_ROLE",
    "ROLES",
    "ROLE_SCOPES",
    "SCOPE_PREFIX",
    "Principal",
    "Role",
    "namespaced",
    "role_of",
]
