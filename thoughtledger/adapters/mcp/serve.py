"""``thoughtledger serve``: the entry point MCP clients start (stdio) or connect to (HTTP).

The command line is wired elsewhere; this module gives it two functions:
:func:`add_serve_arguments` and :func:`run_serve`, and takes from it, as :class:`ServeParts`, what
the server uses of the other ways in and out (who a bearer token stands for, the live OTLP
stream, the language model that writes ``sequential_thinking_external``'s thoughts): the command
line is the one place they are put together. Logging is configured here, once, to stderr: on
stdio, stdout carries JSON-RPC and nothing else.

Here too are the checks of options that go together, the stdio transport and the exit codes;
the HTTP transport is :mod:`~thoughtledger.adapters.mcp.http.serving`, what both transports make of
the
options :mod:`~thoughtledger.adapters.mcp.serve_parts`, and the options themselves
:mod:`~thoughtledger.adapters.mcp.serve_options`.
"""

import argparse
import functools
import logging
import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from thoughtledger.adapters.common.logs import (
    SessionIdRedaction,
    TokenRedaction,
    route_to_stdlib,
)
from thoughtledger.adapters.common.stopping import signals_handled
from thoughtledger.adapters.mcp.http.serving import serve_http
from thoughtledger.adapters.mcp.serve_options import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    HTTP_ONLY_OPTIONS,
    add_serve_arguments,
)
from thoughtledger.adapters.mcp.serve_parts import (
    EXIT_INTERRUPTED,
    LiveExport,
    ServeParts,
    ledger_served,
    log_event,
    mcp_server,
    serving_facts,
)
from thoughtledger.adapters.mcp.stdio.answering import run_stdio, stdio_transport
from thoughtledger.adapters.mcp.tools.render import ThoughtSink, thought_logging_enabled
from thoughtledger.api import READ_URL_ENV, resolve_url
from thoughtledger.ledger.errors import InvalidInputError, LedgerError
from thoughtledger.ledger.masking import mask_text
from thoughtledger.ledger.printable import visible

if TYPE_CHECKING:
    from thoughtledger.api import Signer

PROG = "thoughtledger"
EXIT_FAILURE, EXIT_USAGE = 1, 2


def run_serve(args: argparse.Namespace, parts: ServeParts) -> int:
    """Serve until stdin closes (stdio) or a signal stops the HTTP server; return an exit code.

    Failures are one line on stderr, as every ``thoughtledger`` command writes them:
    ``thoughtledger: error: ...``, with any password in the ledger URL masked.

    Args:
        args: The options :func:`add_serve_arguments` parsed.
        parts: The token verifier and the live telemetry, from the other adapters.

    Returns:
        0 after a clean stop (stdin closed, or SIGTERM on HTTP); 2 for a ledger URL of no known
        form, HTTP options without ``--http``, issuer options without ``--auth-issuer`` or an
        issuer URL keys may not be fetched from; 1 when the ledger cannot be opened or fails,
        the token file cannot be read or others could change it, the issuer's keys cannot be
        fetched, or the port cannot be bound; 130 after Ctrl-C, which stops either transport
        at once.
    """
    if not args.http and (option := _http_only_option(args)) is not None:
        return _fail(
            f"{option} applies to --http only (stdio has one client: its parent)", EXIT_USAGE
        )
    args.read_url = args.read_url or os.environ.get(READ_URL_ENV) or None
    if args.http:  # unset so that giving them without --http can be told apart
        args.host = args.host or DEFAULT_HOST
        args.port = DEFAULT_PORT if args.port is None else args.port
    configure_logging()
    sink: ThoughtSink | None = _stderr_sink if thought_logging_enabled() else None
    minutes: float = args.ttl_minutes
    ttl = timedelta(minutes=minutes) if minutes > 0 else None
    serve = serve_http if args.http else _serve_stdio
    try:
        signer = _checkpoint_signer(args)
    except InvalidInputError as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        code: int = anyio.run(
            functools.partial(serve, args, parts, ttl=ttl, sink=sink, signer=signer)
        )
    except InvalidInputError as exc:  # a URL of no known form: the command line was wrong
        return _fail(_masked(str(exc), args), EXIT_USAGE)
    except (LedgerError, OSError) as exc:  # a ledger that cannot be opened, a port in use
        return _fail(_masked(str(exc), args), EXIT_FAILURE)
    except KeyboardInterrupt:  # Ctrl-C before the server took over its signals
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        # Whatever is left of the exit, a second Ctrl-C ends it without a traceback.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # Ctrl-C is how a server in the foreground is stopped: said, not reported as an error.
        sys.stderr.write(f"{PROG}: stopped (Ctrl-C)\n")
        sys.stderr.flush()
        return EXIT_INTERRUPTED
    return code


def _masked(message: str, args: argparse.Namespace) -> str:
    """``message`` with the secrets of the ledger's URL and of the read URL masked."""
    return mask_text(mask_text(message, resolve_url(args.db)), args.read_url)


def _http_only_option(args: argparse.Namespace) -> str | None:
    """The first option given that only the HTTP server takes, if any."""
    for option, value in HTTP_ONLY_OPTIONS.items():
        if getattr(args, value) is not None:
            return option
    return None


def _fail(message: str, code: int) -> int:
    lines = message.strip().splitlines()
    first = visible(lines[0], one_line=True) if lines else "failed"  # it may quote a client
    sys.stderr.write(f"{PROG}: error: {first}\n")
    sys.stderr.flush()
    return code


def _checkpoint_signer(args: argparse.Namespace) -> "Signer | None":
    """The key ``--checkpoint-key`` names, when ``--checkpoint-dir`` asks for checkpoints.

    Raises:
        InvalidInputError: One option without the other, or a key that cannot be read.
    """
    from thoughtledger.api import Signer

    if (args.checkpoint_dir is None) != (args.checkpoint_key is None):
        raise InvalidInputError("--checkpoint-dir and --checkpoint-key go together")
    if args.checkpoint_key is None:
        return None
    try:
        return Signer.parse(Path(args.checkpoint_key).read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {args.checkpoint_key}: {exc}") from exc
    except InvalidInputError as exc:
        raise InvalidInputError(f"{args.checkpoint_key}: {exc}") from exc


async def _serve_stdio(
    args: argparse.Namespace,
    parts: ServeParts,
    *,
    ttl: timedelta | None,
    sink: ThoughtSink | None,
    signer: "Signer | None" = None,
) -> int:
    async with ledger_served(args, parts, ttl, signer) as ledger:
        server = mcp_server(ledger, args, parts, sink, transport="stdio")
        with anyio.CancelScope() as serving:
            async with signals_handled(serving.cancel):
                log_event(
                    logging.INFO, "serving_stdio", stdio=stdio_transport(), **serving_facts(args)
                )
                await run_stdio(server)
        if serving.cancelled_caught:
            return EXIT_INTERRUPTED
        log_event(logging.INFO, "stdin_closed")
        return 0


class _VisibleFormatter(logging.Formatter):
    """Log lines with their control characters shown: a record may quote a client's text."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record (ours, structlog's, the SDK's, uvicorn's) to stderr as one line."""
    handler = logging.StreamHandler(sys.stderr)
    formatter = _VisibleFormatter(
        "%(asctime)s.%(msecs)03dZ [%(levelname)s] %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S"
    )
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    # The SDK logs each HTTP session's id at INFO; the id is the connection's only credential.
    handler.addFilter(SessionIdRedaction())
    # And any bearer token a record quotes (a client's address with ?token=...).
    handler.addFilter(TokenRedaction())
    root = logging.getLogger()
    # Ours, before the SDK's basicConfig (a no-op once the root has a handler) can add its own.
    root.handlers[:] = [handler]
    root.setLevel(level)
    route_to_stdlib()


def _stderr_sink(rendered: str) -> None:
    print(rendered, file=sys.stderr, flush=True)


__all__ = ["LiveExport", "ServeParts", "add_serve_arguments", "run_serve"]
