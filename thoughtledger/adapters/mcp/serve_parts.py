"""What ``thoughtledger serve`` makes of its options, alike for stdio and for HTTP.

:class:`ServeParts` is what the command line passes in of the other ways in and out (who a bearer
token stands for, the live OTLP stream, the language model that writes
``sequential_thinking_external``'s thoughts, the browser view's live socket). From them and the
serve options, this module makes what either transport serves: the ledger ``--db`` names, with
its OTLP stream and its signed checkpoints while serving lasts (:func:`ledger_served`), and the MCP
server (:func:`mcp_server`); and it writes the server's lifecycle lines (:func:`log_event`,
:func:`serving_facts`).
"""

import argparse
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from thoughtledger.adapters.common.logs import event_line
from thoughtledger.adapters.common.shares import Limits
from thoughtledger.adapters.mcp.server import WriterFactory, create_server
from thoughtledger.adapters.mcp.tools.context import AppState, ProfileName
from thoughtledger.adapters.mcp.tools.render import ThoughtSink
from thoughtledger.api import Ledger, open_ledger, resolve_url
from thoughtledger.ledger.masking import mask_url

if TYPE_CHECKING:
    from thoughtledger.adapters.mcp.checkpoints import CheckpointWriter
    from thoughtledger.api import Signer

EXIT_INTERRUPTED = 130
"""The exit code after Ctrl-C, which stops either transport at once."""
LOGGER = "thoughtledger.adapters.mcp.serve"
"""The logger of the server's own lifecycle lines, whichever module writes them."""

# The server's own lifecycle lines use the standard library: structlog is imported only when
# something else logs (see thoughtledger.adapters.common.logs).
_log = logging.getLogger(LOGGER)


class IssuerVerifier(TokenVerifier, Protocol):
    """A verifier of an OAuth issuer's tokens that can reach the issuer before serving."""

    @property
    def issuer(self) -> str:
        """The issuer tokens must name."""
        ...

    async def prepare(self) -> None:
        """Fetch what checking tokens needs; raise ``LedgerError`` when it cannot."""
        ...


class IssuerVerifierFactory(Protocol):
    """Makes an :class:`IssuerVerifier` (``IssuerTokenVerifier`` of the auth package)."""

    def __call__(
        self,
        issuer: str,
        audience: str,
        role_claim: str = ...,
        *,
        jwks_url: str | None = None,
        subjects: Mapping[str, str] | None = None,
    ) -> IssuerVerifier:
        """Raise ``InvalidInputError`` for URLs keys may not be fetched from.

        ``subjects`` not ``None``: the issuer's principals are kept apart from the token
        file's (``ISSUER#sub``), but for the subjects it maps to a name.
        """
        ...


class LiveExport(Protocol):
    """A live OTLP stream's tally, logged when the server stops."""

    @property
    def sent(self) -> int:
        """Spans sent."""
        ...

    @property
    def dropped(self) -> int:
        """Spans dropped (the endpoint failed or could not keep up)."""
        ...


class LiveSocketFactory(Protocol):
    """Makes the live socket's app.

    From the ledger, the bearer verifier, the allowed origins and the live sockets each
    principal, and all, may hold open.
    """

    def __call__(
        self,
        ledger: Ledger,
        verifier: TokenVerifier | None,
        allow_origins: Sequence[str],
        *,
        limits: Limits | None = None,
    ) -> ASGIApp:
        """The socket's ASGI app."""
        ...


ReceiverRoutes = Callable[[Ledger, TokenVerifier | None, Sequence[str]], list[BaseRoute]]
"""Makes the OTLP receiver's routes from the ledger, the bearer verifier and the origins."""


@dataclass(frozen=True)
class ServeParts:
    """What the server uses of the other ways in and out, passed in by whoever starts it.

    Attributes:
        token_verifier: Given ``--auth FILE``, who each bearer token stands for (the MCP SDK's
            ``TokenVerifier``); raises ``OSError`` or ``LedgerError`` for a file it cannot use.
        live_telemetry: Given the ledger and ``--otlp URL``, a context that streams every
            recorded thought there as spans while the server runs.
        model_writer: Opens the model client that writes ``use_llm`` thoughts, one per
            lifespan, closed when it ends (``LLMWriter``: configured from the environment, read
            afresh at each call).
        issuer_verifier: Given ``--auth-issuer URL``, makes the verifier of that OAuth issuer's
            JWT access tokens (``IssuerTokenVerifier``); ``None``: the option is refused.
        live_socket: Given the ledger, the bearer verifier (``None``: no authentication) and
            the origins allowed besides the server's own, the live socket's ASGI app, served
            at :data:`~thoughtledger.adapters.mcp.http.serving.WS_PATH` (the browser view's);
            ``None``: no socket.
        otlp_receiver: Given the same, the OTLP/HTTP receiver's routes (``/v1/traces``,
            ``/v1/logs``), served beside MCP; ``None``: none.
    """

    token_verifier: Callable[[Path], TokenVerifier]
    live_telemetry: Callable[[Ledger, str], contextlib.AbstractAsyncContextManager[LiveExport]]
    model_writer: WriterFactory
    issuer_verifier: IssuerVerifierFactory | None = None
    live_socket: LiveSocketFactory | None = None
    otlp_receiver: ReceiverRoutes | None = None


def log_event(level: int, event: str, **facts: object) -> None:
    """Write one lifecycle line: ``event`` and its ``facts`` as ``key=value`` pairs."""
    _log.log(level, "%s", event_line(event, facts))


def _upgrade_logged(description: str, done: int, total: int) -> None:
    # A server's stderr is a log, not a terminal: a long upgrade says when it starts and ends.
    if done == 0:
        log_event(logging.INFO, "schema_upgrade_started", doing=description, events=total)
    elif done == total:
        log_event(logging.INFO, "schema_upgrade_done", doing=description, events=total)


@contextlib.asynccontextmanager
async def ledger_served(
    args: argparse.Namespace, parts: ServeParts, ttl: timedelta | None, signer: "Signer | None"
) -> AsyncIterator[Ledger]:
    """The ledger ``--db`` names, with its OTLP stream and its checkpoints, while serving lasts.

    Reads go to ``--read-url``'s standby when one is given; with ``--otlp`` the recorded
    thoughts stream there as spans; with ``signer``, signed checkpoints are written to
    ``--checkpoint-dir`` as the log grows, and once more when serving stops.

    Raises:
        InvalidInputError: A ledger URL of no known form, or ``--read-url`` for a ledger not on
            PostgreSQL.
        LedgerError: The ledger cannot be opened, or fails.
        OSError: The checkpoint directory cannot be created, or a checkpoint written.
    """
    # Loaded here: only ``--checkpoint-dir`` writes checkpoints, and the module pulls in file
    # handling that every other start of the server does without.
    from thoughtledger.adapters.mcp.checkpoints import checkpoints_kept

    async with (
        open_ledger(args.db, ttl=ttl, progress=_upgrade_logged, read_url=args.read_url) as ledger,
        _telemetry(parts, ledger, args.otlp),
        checkpoints_kept(_checkpoints(ledger, args, signer)),
    ):
        yield ledger


def _checkpoints(
    ledger: Ledger, args: argparse.Namespace, signer: "Signer | None"
) -> "CheckpointWriter | None":
    from thoughtledger.adapters.mcp.checkpoints import CheckpointWriter

    if signer is None:
        return None
    return CheckpointWriter(ledger.proofs, signer, Path(args.checkpoint_dir), args.checkpoint_every)


@contextlib.asynccontextmanager
async def _telemetry(parts: ServeParts, ledger: Ledger, url: str | None) -> AsyncIterator[None]:
    """Stream the ledger's thoughts to ``url`` while serving (nothing without a URL)."""
    if url is None:
        yield
        return
    async with parts.live_telemetry(ledger, url) as live:
        yield
    log_event(logging.INFO, "otlp_sent", spans=live.sent, dropped=live.dropped)


def mcp_server(
    ledger: Ledger,
    args: argparse.Namespace,
    parts: ServeParts,
    sink: ThoughtSink | None,
    *,
    transport: str,
    verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer[AppState]:
    """The MCP server as the serve options ask, for either transport."""
    profile: ProfileName = args.profile
    return create_server(
        ledger,
        profile=profile,
        tools=args.tools,
        thought_sink=sink,
        transport=transport,
        open_writer=parts.model_writer,
        descriptions=args.descriptions,
        runs=args.runs,
        token_verifier=verifier,
        auth=auth,
        agent=args.agent,
    )


def serving_facts(args: argparse.Namespace) -> dict[str, object]:
    """What the start-up line says of the options, with any password in a URL masked."""
    return {
        "ledger": mask_url(resolve_url(args.db)),
        **({"reads": mask_url(args.read_url)} if args.read_url else {}),
        "profile": args.profile,
        "tools": ",".join(args.tools),
        "runs": args.runs,
        "ttl_minutes": args.ttl_minutes,
    }


__all__ = [
    "EXIT_INTERRUPTED",
    "LOGGER",
    "IssuerVerifier",
    "IssuerVerifierFactory",
    "LiveExport",
    "LiveSocketFactory",
    "ServeParts",
    "ledger_served",
    "log_event",
    "mcp_server",
    "serving_facts",
]
