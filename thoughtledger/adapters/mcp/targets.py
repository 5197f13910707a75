"""Which session a call means, for the principal making it (see :mod:`thoughtledger.api`).

Without a principal (stdio, in-process, HTTP without ``--auth``) a named session is taken
literally, as it always was. With one, a name is the principal's own session if it owns (for
reading: may read) a session of that id, and otherwise the principal's own session under the id
:func:`thoughtledger.api.access.namespaced` derives from the name. Another principal's
session therefore answers exactly as a session that does not exist: reading it says it is not
there, and writing to it starts the caller's own session.
"""

from mcp.server.mcpserver.exceptions import ToolError

from thoughtledger.adapters.mcp.context import Caller
from thoughtledger.adapters.mcp.implicit import implicit_target
from thoughtledger.adapters.mcp.sessions import connection_handle, name_handle
from thoughtledger.api import Ledger, Principal, ThinkCommand, namespaced, not_found
from thoughtledger.ledger.ids import check_id, new_session_id

IMPLICIT = "implicit"
"""The handle :func:`thinking_target` returns for an unnamed call without a connection: the
caller's recent runs are recorded (``SessionDirectory.ran``), not a handle bound."""


async def thinking_target(
    caller: Caller, requested: str | None, command: ThinkCommand, *, clear: bool
) -> tuple[str | None, str | None]:
    """Return ``(handle, session_id)`` for a thought: the handle to rebind, the id to use.

    Args:
        caller: The call.
        requested: The session the caller named, or ``None`` for the connection's own.
        command: The thought (an unnamed call without a connection is routed by it).
        clear: Whether the call clears the session it continues.

    Returns:
        ``(IMPLICIT, session_id)`` when the caller named none and the connection has no
        identity: the run :func:`~thoughtledger.adapters.mcp.implicit.implicit_target` chose
        (``None``:
        a new one).

    Raises:
        InvalidInputError: ``requested`` is not a valid session id.
        ToolError: The principal's role records nothing, or an unnamed thought without a
            connection follows none or several of the caller's recent runs.
        StoreError: The store failed.
    """
    principal = caller.principal
    if principal is not None and not principal.writes:
        raise ToolError(
            f"{principal.name!r} has the {principal.role} role: it reads sessions and records "
            "no thoughts (ask for a writer token)"
        )
    directory = caller.directory
    if requested is not None:
        name = check_id(requested)
        handle = name_handle(name)
        bound = directory.peek(handle)
        if bound is not None:
            directory.bind(handle, bound)
            return handle, bound
        target = name
        if principal is not None:
            exists, owner = await caller.app.ledger.owner_of(name)
            if not (exists and principal.may_write(owner)):
                target = namespaced(principal.name, name)
        return handle, directory.resolve(handle, lambda: target)
    if caller.key is None:
        return IMPLICIT, await implicit_target(caller, command, clear=clear)
    handle = connection_handle(caller.key)
    return handle, directory.resolve(handle, new_session_id)


async def reading_target(ledger: Ledger, principal: Principal | None, requested: str) -> str:
    """Return the id of the session ``requested`` names, if ``principal`` may read it.

    Raises:
        InvalidInputError: ``requested`` is not a valid session id.
        SessionNotFoundError: There is no such session the caller may read (the same error,
            word for word, whether the session is missing or another principal's).
    """
    name = check_id(requested)
    if principal is None:
        return name
    for candidate in (name, namespaced(principal.name, name)):
        exists, owner = await ledger.owner_of(candidate)
        if exists and principal.may_read(owner):
            return candidate
    raise not_found(name)


def connection_session(caller: Caller) -> str | None:
    """The session the calling connection currently continues, if it has one yet.

    Without a connection identity: the caller's current run (the session its last thought went
    to, named or not), if any.
    """
    if caller.key is None:
        runs = caller.directory.runs()
        return runs[-1] if runs else None
    return caller.directory.peek(connection_handle(caller.key))


__all__ = ["IMPLICIT", "connection_session", "reading_target", "thinking_target"]
