"""Which session a call means: the connection's own, a named one, or the caller's recent run.

Which sessions a principal may read or write, and which id a name stands for, are the API's
access door's answers (:class:`thoughtledger.api.Scope`): this module only binds the answer to
the connection's handles.
"""

from mcp.server.mcpserver.exceptions import ToolError

from thoughtledger.adapters.mcp.tools.context import Caller
from thoughtledger.adapters.mcp.tools.implicit import implicit_target
from thoughtledger.adapters.mcp.tools.sessions import connection_handle, name_handle
from thoughtledger.api import AccessDeniedError, Scope, ThinkCommand
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
        identity: the run :func:`~thoughtledger.adapters.mcp.tools.implicit.implicit_target` chose
        (``None``:
        a new one).

    Raises:
        InvalidInputError: ``requested`` is not a valid session id.
        ToolError: The principal's role records nothing, or an unnamed thought without a
            connection follows none or several of the caller's recent runs.
        StoreError: The store failed.
    """
    scope = caller.scope
    try:
        scope.require("write", "record thoughts")
    except AccessDeniedError as exc:
        raise ToolError(str(exc)) from exc
    directory = caller.directory
    if requested is not None:
        name = check_id(requested)
        handle = name_handle(name)
        bound = directory.peek(handle)
        if bound is not None:
            directory.bind(handle, bound)
            return handle, bound
        target = await scope.writable(name)
        return handle, directory.resolve(handle, lambda: target)
    if caller.key is None:
        return IMPLICIT, await implicit_target(caller, command, clear=clear)
    handle = connection_handle(caller.key)
    return handle, directory.resolve(handle, new_session_id)


async def reading_target(scope: Scope, requested: str) -> str:
    """Return the id of the session ``requested`` names, if the scope's principal may read it.

    Raises:
        InvalidInputError: ``requested`` is not a valid session id.
        SessionNotFoundError: There is no such session the caller may read (the same error,
            word for word, whether the session is missing or another principal's).
    """
    return await scope.find(requested)


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
