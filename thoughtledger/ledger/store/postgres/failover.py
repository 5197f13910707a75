"""Several hosts in one URL, and riding out a failover from one of them to another.

A ledger URL may name a primary and its standbys, libpq's way
(``postgresql://user@host1:5432,host2:5432/db``) or SQLAlchemy's
(``postgresql://user@/db?host=host1:5432&host=host2:5432``). The driver tries them in turn;
``target_session_attrs=read-write`` (the default for a writable store naming several hosts)
makes it pass over a standby, so connections go to whichever server is the primary now.

When the primary dies, its connections are lost, and until a standby is promoted no server
takes writes. A lost connection is always retried once at once (a restarted server, an
administrator's ``pg_terminate_backend``); with several hosts, the store goes on trying for
up to :data:`FAILOVER_WINDOW` seconds (or the URL's ``?failover_timeout=``) while no server is
writable yet, then gives up with the error it last had. An append is one atomic statement, so
a retry never writes twice (see :mod:`thoughtledger.ledger.store.postgres.store`).
"""

import asyncio
import math
import re
import time

import sqlalchemy as sa

from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.postgres.setup import lost_connection

FAILOVER_WINDOW = 30.0
"""Seconds a store naming several hosts waits for a new primary after losing its connection.

Long enough for a standby to be promoted by hand or by a failover manager's usual timeouts;
bounded, so that a caller learns of an outage rather than hangs."""

_PAUSE = (0.05, 0.1, 0.2, 0.5, 1.0)
"""Pauses between attempts while no server is writable: quick at first, then at most 1 s."""

_SEVERAL = re.compile(
    r"(?P<head>[\w+.-]+://(?:[^/?#]*@)?)(?P<hosts>[^@/?#]*,[^@/?#]*)(?P<tail>[/?#].*)?",
    re.DOTALL,
)
"""``scheme://[userinfo@]host1[:port],host2[:port][/db][?query]``: libpq's list of hosts.

A password holding ``/ ? #`` must be percent-encoded anyway (SQLAlchemy's rule too)."""

_NOT_YET_STATES = ("57P03", "25006")
"""SQLSTATEs meaning "not a writable primary yet": starting up or promoting, and read-only."""


def hosts_as_query(url: str) -> str:
    """``url`` with libpq's comma-separated hosts moved to ``?host=`` parameters.

    SQLAlchemy's URL parser takes ``host1:5432,host2`` for one host with a malformed port; its
    asyncpg dialect takes the hosts as repeated ``host`` query parameters, each with its port
    (5432 where none is given, as libpq defaults). A URL naming one host is returned unchanged.
    """
    several = _SEVERAL.fullmatch(url)
    if several is None:
        return url
    tail = several.group("tail") or ""
    path, _, query = tail.partition("?")
    hosts = "&".join(
        f"host={_with_port(host)}" for host in several.group("hosts").split(",") if host
    )
    return f"{several.group('head')}{path}?{hosts}{'&' + query if query else ''}"


def failover_window(url: sa.URL) -> tuple[sa.URL, float]:
    """How long a store on ``url`` waits out a failover, and ``url`` without the option saying so.

    ``?failover_timeout=SECONDS`` when given (0: retry a lost connection once, at once), else
    :data:`FAILOVER_WINDOW` for a URL naming several hosts and 0 for one naming one.

    Raises:
        InvalidInputError: ``failover_timeout`` is given twice, or is no number of seconds
            from 0 to 3600.
    """
    hosts = url.query.get("host")
    window = FAILOVER_WINDOW if isinstance(hosts, tuple) and len(hosts) > 1 else 0.0
    given = url.query.get("failover_timeout")
    if given is None:
        return url, window
    try:
        if not isinstance(given, str):
            raise ValueError
        window = float(given)
    except ValueError:
        window = math.nan
    if not 0 <= window <= 3600:  # NaN fails too
        raise InvalidInputError(
            f"failover_timeout must be seconds from 0 to 3600, got {given!r}"
        ) from None
    return url.difference_update_query(["failover_timeout"]), window


def _with_port(host: str) -> str:
    """``host`` with PostgreSQL's default port when it names none (SQLAlchemy wants each)."""
    named = host.rpartition("]")[2] if host.startswith("[") else host
    return host if ":" in named else f"{host}:5432"


def failing_over(exc: BaseException) -> bool:
    """Return whether ``exc`` may mean a failover is under way (so that waiting may help).

    A lost connection, a refused one, no server matching ``target_session_attrs``, or a
    server that is still starting, promoting, or read-only.
    """
    import asyncpg

    if lost_connection(exc):
        return True
    orig = getattr(exc, "orig", None)
    for error in (exc, orig, getattr(orig, "__cause__", None), exc.__cause__):
        unreachable = OSError | asyncio.TimeoutError | asyncpg.TargetServerAttributeNotMatched
        if isinstance(error, unreachable):
            return True
        state = getattr(error, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_NOT_YET_STATES):
            return True
    return False


class Reconnecting:
    """Whether a statement that failed is tried again, and the pause before it.

    The first lost connection is retried at once; after that, within ``window`` seconds of it,
    while the errors say a failover may be under way (:func:`failing_over`).

    Args:
        window: Seconds to go on trying after the first lost connection (0: retry once only).
    """

    def __init__(self, window: float) -> None:
        self._window = window
        self._deadline: float | None = None
        self._attempts = 0

    @property
    def retried(self) -> bool:
        """Whether the statement was tried again at least once."""
        return self._deadline is not None

    async def again(self, exc: BaseException) -> bool:
        """Return whether to try again after ``exc``, having paused as long as due."""
        if self._deadline is None:
            if not lost_connection(exc):
                return False
            self._deadline = time.monotonic() + self._window
            return True
        if not failing_over(exc) or time.monotonic() >= self._deadline:
            return False
        pause = _PAUSE[min(self._attempts, len(_PAUSE) - 1)]
        self._attempts += 1
        # A backoff between attempts to reach a server: there is no event to wait for.
        await asyncio.sleep(min(pause, max(0.0, self._deadline - time.monotonic())))
        return True


__all__ = [
    "FAILOVER_WINDOW",
    "Reconnecting",
    "failing_over",
    "failover_window",
    "hosts_as_query",
]
