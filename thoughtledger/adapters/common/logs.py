"""Logging: where records go, chosen once by an entry point, and structlog imported on first use.

Importing structlog also imports rich, pygments and attrs for its console renderer: about 35 ms
that an MCP server, spawned afresh for every conversation, should not spend before its first
answer. So the library imports structlog only when it first logs (the stores, the facade, and
:func:`get_logger` here), the server's own lifecycle lines go through the standard library
(:func:`event_line`), and an entry point chooses a destination (:func:`logging_to_stderr` for
commands, :func:`route_to_stdlib` for the server). The choice is applied to structlog at once if
it is imported, else the moment anything imports it, so the first record already goes where it
should: on stdio, stdout carries JSON-RPC and must never receive a log line.
"""

import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import logging
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

Configure = Callable[[ModuleType], None]
"""Configures the (imported) structlog module."""


class _Routing:
    """How structlog should be configured, and whether it has been yet."""

    def __init__(self) -> None:
        self.configure: Configure | None = None
        self.applied = False

    def use(self, configure: Configure | None) -> None:
        """Adopt ``configure``: now if structlog is imported, else when it is."""
        self.configure, self.applied = configure, False
        if "structlog" in sys.modules:
            self.apply()
        elif configure is not None:
            _ConfigureOnImport.install()

    def apply(self, module: ModuleType | None = None) -> None:
        """Configure structlog (``module``, else imported) if chosen and not yet applied."""
        if self.configure is None or self.applied:
            return
        self.configure(module or importlib.import_module("structlog"))
        self.applied = True


_routing = _Routing()


class _ConfigureOnImport(importlib.abc.MetaPathFinder):
    """Finds structlog for its first import, with a loader that applies the routing after it."""

    @classmethod
    def install(cls) -> None:
        if not any(isinstance(finder, cls) for finder in sys.meta_path):
            sys.meta_path.insert(0, cls())

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """Structlog's own spec, loaded by :class:`_ThenConfigure`; ``None`` for any other."""
        if fullname != "structlog":
            return None
        sys.meta_path.remove(self)  # one import only: the finders below find it as usual
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenConfigure(spec.loader)
        return spec


class _ThenConfigure(importlib.abc.Loader):
    """structlog's own loader, then the routing applied before anyone can log through it."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        """The module as structlog's own loader creates it."""
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        """Run structlog as its own loader does, then configure it."""
        if module.__spec__ is not None:  # structlog sees its own loader, as without the finder
            module.__spec__.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        _routing.apply(module)


class LazyLogger:
    """structlog's logger for ``name``, created on the first call of any of its methods.

    Args:
        name: The logger's name (a module's ``__name__``).
    """

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, method: str) -> Any:
        logger = self._logger
        if logger is None:
            import structlog

            logger = self._logger = structlog.get_logger(self._name)
        return getattr(logger, method)


def get_logger(name: str) -> LazyLogger:
    """Return a logger for ``name`` that imports structlog when it first logs."""
    return LazyLogger(name)


def event_line(event: str, facts: Mapping[str, object]) -> str:
    """Render an event and its facts as one line: ``event key=value key=value``."""
    return " ".join([event, *(f"{key}={value}" for key, value in facts.items())])


def _as_line(_logger: object, _method: str, record: dict[str, Any]) -> str:
    return event_line(str(record.pop("event", "")), record)


def route_to_stdlib() -> None:
    """Send structlog's records through the standard ``logging`` tree, as :func:`event_line`."""

    def configure(structlog: ModuleType) -> None:
        structlog.configure(
            processors=[
                structlog.contextvars.merge_contextvars,
                structlog.stdlib.filter_by_level,
                _as_line,
            ],
            logger_factory=structlog.stdlib.LoggerFactory(),
            wrapper_class=structlog.stdlib.BoundLogger,
            cache_logger_on_first_use=True,
        )

    _routing.use(configure)


@contextlib.contextmanager
def logging_to_stderr(level: int) -> Iterator[None]:
    """Send structlog's records at ``level`` and above to stderr while the block runs.

    Whatever configuration structlog had before is restored afterwards, since the block may run
    inside another program (a test, a notebook) that has its own.
    """
    saved = None
    if "structlog" in sys.modules:
        import structlog

        saved = structlog.get_config()

    def configure(structlog: ModuleType) -> None:
        structlog.configure(
            logger_factory=lambda *args: structlog.PrintLogger(sys.stderr),
            wrapper_class=structlog.make_filtering_bound_logger(level),
            cache_logger_on_first_use=False,
        )

    outer = (_routing.configure, _routing.applied)
    _routing.use(configure)
    try:
        yield
    finally:
        applied = _routing.applied
        _routing.configure, _routing.applied = outer
        if applied:
            import structlog

            if saved is not None:
                structlog.configure(**saved)
            else:
                structlog.reset_defaults()


class SessionIdRedaction(logging.Filter):
    """Masks MCP HTTP session ids in the SDK's log lines, keeping a fingerprint to follow one.

    The streamable HTTP transport logs each ``mcp-session-id`` it creates, terminates or
    refuses (``Created new transport with session ID: 3f2a...``); whoever holds that id can use
    the session. The id becomes ``session#`` and 8 hex digits of its SHA-256, the same for each
    line about the same session.
    """

    _LOGGERS = ("mcp.server.streamable_http",)  # also ..._manager and ..._modern
    _ID = re.compile(r"(?<=session ID: )\S+|(?<=session: )\S+|\b[0-9a-fA-F]{32}\b")

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message if it may hold a session id; never drop a record."""
        if record.name.startswith(self._LOGGERS):
            message = record.getMessage()
            masked = self._ID.sub(_fingerprint, message)
            if masked != message:
                record.msg, record.args = masked, None
        return True


class TokenRedaction(logging.Filter):
    """Masks bearer tokens in log lines: a token given in an address, or anything shaped like one.

    A client may put its token in the address it asks for (``/ws?token=tl_...``); the server
    refuses it (tokens are taken from the ``Authorization`` header only), but uvicorn logs each
    WebSocket request with its address. Every record a handler with this filter writes has the
    values of ``token``, ``access_token``, ``id_token``, ``refresh_token``, ``code`` and
    ``bearer`` query fields, ``Bearer ...`` values, the token file's ``tl_...`` tokens and
    anything shaped like a JWT replaced by ``***``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message if it may hold a token; never drop a record."""
        message = record.getMessage()
        masked = redact_tokens(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


_QUERY_TOKEN = re.compile(
    r"(?i)((?:^|[?&;\s\"'])(?:access_token|id_token|refresh_token|token|code|bearer|auth|"
    r"authorization|key|api_key|apikey)=)[^&;\s\"']+"
)
_BEARER = re.compile(r"(?i)(\bbearer(?:\s+|%20|\+))[A-Za-z0-9._~+/=-]+")
_TOKEN_SHAPES = re.compile(
    r"\btl_[A-Za-z0-9_-]{16,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
)


def redact_tokens(text: str) -> str:
    """``text`` with every bearer token it may hold replaced by ``***``.

    See :class:`TokenRedaction` for what counts as one.
    """
    text = _QUERY_TOKEN.sub(r"\1***", text)
    text = _BEARER.sub(r"\1***", text)
    return _TOKEN_SHAPES.sub("***", text)


def _fingerprint(match: re.Match[str]) -> str:
    return "session#" + hashlib.sha256(match.group().encode()).hexdigest()[:8]


__all__ = [
    "LazyLogger",
    "SessionIdRedaction",
    "TokenRedaction",
    "event_line",
    "get_logger",
    "logging_to_stderr",
    "redact_tokens",
    "route_to_stdlib",
]
