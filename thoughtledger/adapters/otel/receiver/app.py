"""The OTLP/HTTP receiver's routes: ``POST /v1/traces`` and ``POST /v1/logs``.

Served by ``serve --http`` beside MCP (the command line hands them in) and alone by
``thoughtledger receive``. A request passes the same guards as the server's other routes: a
loopback ``Host``, an ``Origin`` (if any) of the server's own or one allowed, the same bearer
tokens (the principal owns what it sends; a reader or auditor token is refused, 403), a bounded
body. Then it is decoded (:mod:`~thoughtledger.adapters.otel.receiver.decode`), read in every
dialect (:mod:`~thoughtledger.adapters.otel.receiver.dialects`) and recorded
through the principal's scope; the answer is OTLP's: an empty success, or a partial success
naming what was refused, already recorded, or ignored (spans without GenAI reasoning).
"""

import contextlib
import logging
from collections.abc import Iterable, Sequence
from typing import Protocol
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS
from thoughtledger.adapters.otel.receiver.decode import (
    MAX_BODY_BYTES,
    Encoding,
    Signal,
    answer,
    media_type,
    read_body,
    status,
)
from thoughtledger.adapters.otel.receiver.dialects import from_logs, from_traces
from thoughtledger.adapters.otel.receiver.errors import ReceiverError
from thoughtledger.api import AccessDeniedError, Grant, Ledger, Principal, principal_of
from thoughtledger.ledger.errors import InvalidInputError, LedgerError

TRACES_PATH = "/v1/traces"
"""Where OTLP/HTTP senders post spans (their default path)."""
LOGS_PATH = "/v1/logs"
"""Where OTLP/HTTP senders post log records (events such as the details event)."""

_log = logging.getLogger(__name__)
_OWN_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class BearerCheck(Protocol):
    """Who a bearer token stands for (the MCP SDK's ``TokenVerifier`` is one)."""

    async def verify_token(self, token: str) -> Grant | None:
        """The token's grant, or ``None`` for a token that is not good."""
        ...


def _origin_allowed(origin: str, port: int | None, allowed: frozenset[str]) -> bool:
    given = origin.strip().lower().rstrip("/")
    scheme_host, _, port_given = given.rpartition(":")
    if given in allowed or (port_given.isdigit() and f"{scheme_host}:*" in allowed):
        return True
    return port is not None and given in {f"http://{host}:{port}" for host in _OWN_HOSTS}


class Receiver:
    """Takes OTLP/HTTP exports into the ledger, as the principal each request's token names.

    Args:
        ledger: Where captured reasoning goes.
        verifier: Who a bearer token stands for; ``None``: no authentication (the ledger's own
            user sends).
        allow_origins: Origins besides the server's own whose pages may post.
    """

    def __init__(
        self, ledger: Ledger, verifier: BearerCheck | None, allow_origins: Iterable[str] = ()
    ) -> None:
        self._ledger = ledger
        self._verifier = verifier
        self._allowed = frozenset(allow_origins)
        self.ignored = 0
        """Spans (and log records) taken in without GenAI reasoning, since the start."""

    def routes(self) -> list[BaseRoute]:
        """The receiver's routes, to mount on an app."""

        async def traces(request: Request) -> Response:
            return await self.receive(request, "traces")

        async def logs(request: Request) -> Response:
            return await self.receive(request, "logs")

        return [
            Route(TRACES_PATH, traces, methods=["POST"], name="otlp_traces"),
            Route(LOGS_PATH, logs, methods=["POST"], name="otlp_logs"),
        ]

    async def receive(self, request: Request, signal: Signal) -> Response:
        """Answer one export request of ``signal``."""
        encoding: Encoding = "protobuf"
        try:
            with contextlib.suppress(ReceiverError):  # answered below, after the guards
                encoding = media_type(request.headers.get("content-type"))
            self._guard(request)
            scope = self._ledger.as_principal(await self._principal(request))
            scope.require("write", "record thoughts")
            body = read_body(signal, await self._body(request), dict(request.headers))
            read = from_traces if signal == "traces" else from_logs
            spans, total, ignored = read(body.message)
            report = await scope.capture(spans)
        except ReceiverError as exc:
            return self._refused(encoding, exc.status, exc.message)
        except AccessDeniedError as exc:
            return self._refused(encoding, 403, str(exc))
        except InvalidInputError as exc:  # what the request holds, not the ledger: not retried
            return self._refused(encoding, 400, f"the ledger refused it: {exc}")
        except LedgerError as exc:
            _log.warning("otlp_receive_failed error=%s", exc)
            return self._refused(encoding, 503, f"the ledger could not record it: {exc}")
        self.ignored += ignored
        notes = []
        if report.thoughts or report.actions:
            notes.append(f"captured {report.thoughts} thoughts and {report.actions} actions")
        if report.duplicates:
            notes.append(f"{report.duplicates} parts already recorded")
        if ignored:
            notes.append(f"{ignored} of {total} without GenAI reasoning, ignored")
        notes.extend(report.errors)
        # OTLP: a message with nothing rejected is a warning; the counts are worth one.
        message = "; ".join(notes) if (ignored or report.rejected or report.duplicates) else ""
        content = answer(signal, body.encoding, report.rejected, message)
        return Response(content, 200, media_type=_type(body.encoding))

    def _guard(self, request: Request) -> None:
        host = request.headers.get("host") or ""
        try:
            name = urlsplit(f"//{host}").hostname
        except ValueError:
            name = None
        if name not in LOOPBACK_HOSTS:
            raise ReceiverError(421, "this receiver answers only on a loopback address")
        origin = request.headers.get("origin")
        port = request.scope.get("server", (None, None))[1]
        if origin is not None and not _origin_allowed(origin, port, self._allowed):
            raise ReceiverError(403, f"origin {origin[:100]!a} may not post here")

    async def _principal(self, request: Request) -> Principal | None:
        if self._verifier is None:
            return None
        scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
        grant = None
        if scheme.lower() == "bearer" and token.strip():
            grant = await self._verifier.verify_token(token.strip())
        if grant is None:
            raise ReceiverError(401, "a bearer token is needed (Authorization: Bearer TOKEN)")
        return principal_of(grant)

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise ReceiverError(413, f"the body has more than {MAX_BODY_BYTES} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ReceiverError(413, f"the body has more than {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def _refused(self, encoding: Encoding, code: int, message: str) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if code == 401 else None
        return Response(
            status(encoding, code, message), code, headers=headers, media_type=_type(encoding)
        )


def _type(encoding: Encoding) -> str:
    return "application/json" if encoding == "json" else "application/x-protobuf"


def receiver_routes(
    ledger: Ledger, verifier: BearerCheck | None, allow_origins: Sequence[str] = ()
) -> list[BaseRoute]:
    """The receiver's routes over ``ledger`` (what ``serve --http`` mounts beside MCP)."""
    return Receiver(ledger, verifier, allow_origins).routes()


__all__ = ["LOGS_PATH", "TRACES_PATH", "BearerCheck", "Receiver", "receiver_routes"]
