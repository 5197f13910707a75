"""Sending spans over OTLP/HTTP (protobuf), configured as the OpenTelemetry SDK's exporter is.

Spans are encoded by :mod:`thoughtledger.adapters.otel.wire`, three to four times faster than the
SDK's exporter end to end (``tools/bench otlp``), and posted here with the standard library. The
OpenTelemetry SDK (the ``otel`` extra, ``pip install 'thoughtledger[otel]'``) supplies the
resource (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``) and the header parser; the
exporter's documented settings are honoured: ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`` (how
Langfuse takes its keys), ``..._TIMEOUT``, ``..._COMPRESSION`` (gzip, deflate) and
``..._CERTIFICATE``, ``..._CLIENT_CERTIFICATE``, ``..._CLIENT_KEY``. As the SDK does, a request
answered 429, 502, 503 or 504, or a connection that failed, is tried again with exponential
backoff (honouring ``Retry-After``) within the timeout. Ids and times are the ledger's, never
the SDK's. Sending blocks, so it runs in a worker thread.
"""

import asyncio
import base64
import contextlib
import gzip
import http.client
import os
import random
import ssl
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Sequence
from email.utils import parsedate_to_datetime
from urllib.parse import unquote, urlsplit, urlunsplit

from thoughtledger.adapters.otel.spans import SEMCONV_SCHEMA_URL, SpanData
from thoughtledger.adapters.otel.wire import encode_span, request_of
from thoughtledger.api import TelemetryExportError
from thoughtledger.ledger.errors import InvalidInputError, MissingExtraError
from thoughtledger.ledger.masking import mask_text, mask_url

BATCH = 2048
"""Spans per request: large enough to keep the per-request cost small, small enough to stay
well under receivers' request limits (Langfuse and Phoenix take a few MB)."""

_RETRYABLE = frozenset({429, 502, 503, 504})
"""The statuses the SDK's exporter tries again."""
_ATTEMPTS = 6
_JITTER = 0.2
_DEFAULT_TIMEOUT = 10.0


def traces_url(given: str) -> str:
    """Return the OTLP/HTTP traces endpoint for ``given`` (a base URL gets ``/v1/traces``).

    Raises:
        InvalidInputError: ``given`` is not an http(s) URL.
    """
    parts = urlsplit(given)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInputError(
            f"--otlp needs an http(s) URL such as http://localhost:4318, not {mask_url(given)!r}"
        )
    if parts.path in ("", "/"):
        return given.rstrip("/") + "/v1/traces"
    return given


def _credentials_apart(url: str) -> tuple[str, str | None]:
    """``url`` without ``user:password@``, and those as a ``Basic`` authorization, if given.

    urllib would take them for part of the host name; as a header they reach the endpoint
    (a collector behind basic authentication), and never appear in a request line.
    """
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    host = parts.netloc.rpartition("@")[2]
    plain = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return plain, "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def _setting(name: str) -> str:
    """``OTEL_EXPORTER_OTLP_TRACES_<name>``, else ``OTEL_EXPORTER_OTLP_<name>``, else ``""``."""
    return (
        os.environ.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}")
        or os.environ.get(f"OTEL_EXPORTER_OTLP_{name}")
        or ""
    ).strip()


def _timeout() -> float:
    try:
        seconds = float(_setting("TIMEOUT") or _DEFAULT_TIMEOUT)
    except ValueError:
        return _DEFAULT_TIMEOUT
    return seconds if seconds > 0 else _DEFAULT_TIMEOUT


def _compressor() -> tuple[str | None, Callable[[bytes], bytes]]:
    """The ``Content-Encoding`` the settings ask for, and how to apply it."""
    match _setting("COMPRESSION").lower():
        case "gzip":
            return "gzip", gzip.compress
        case "deflate":
            return "deflate", zlib.compress
        case _:
            return None, lambda body: body


def _tls() -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=_setting("CERTIFICATE") or None)
    client_certificate = _setting("CLIENT_CERTIFICATE")
    if client_certificate:
        context.load_cert_chain(client_certificate, _setting("CLIENT_KEY") or None)
    return context


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delay-seconds or an HTTP date)."""
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


class OtlpSender:
    """Encodes spans and sends them to one OTLP/HTTP endpoint.

    Raises:
        MissingExtraError: OpenTelemetry is not installed (names the extra).
        InvalidInputError: A certificate or key the settings name cannot be loaded.
    """

    def __init__(self, url: str, *, service_name: str = "thoughtledger", version: str = "") -> None:
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.util.re import parse_env_headers
        except ImportError as exc:
            raise MissingExtraError(
                "OpenTelemetry export needs the otel extra; install it with "
                "pip install 'thoughtledger[otel]'"
            ) from exc
        self._url, basic = _credentials_apart(url)
        self._given = url  # only to mask its secrets wherever an error quotes them
        self._shown = mask_url(url)  # the URL in messages: they reach logs and terminals
        self._resource = dict(Resource.create({"service.name": service_name}).attributes)
        self._version = version
        self._timeout = _timeout()
        encoding, self._compress = _compressor()
        self._headers = {
            "Content-Type": "application/x-protobuf",
            **parse_env_headers(_setting("HEADERS"), liberal=True),
        }
        if encoding is not None:
            self._headers["Content-Encoding"] = encoding
        if basic is not None and not any(k.lower() == "authorization" for k in self._headers):
            self._headers["Authorization"] = basic
        try:
            self._tls = _tls() if url.startswith("https:") else None
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            raise InvalidInputError(f"cannot load the OTLP exporter's TLS files: {exc}") from exc
        self._closed = threading.Event()

    def send_now(self, spans: Sequence[SpanData]) -> None:
        """Send ``spans`` in batches, blocking until each is accepted.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        self.send_encoded_now(self.encode(spans))

    def encode(self, spans: Sequence[SpanData]) -> list[bytes]:
        """Return each span's encoded ``Span`` message (for :meth:`send_encoded`)."""
        return [encode_span(span) for span in spans]

    def send_encoded_now(self, encoded: Sequence[bytes]) -> None:
        """Send spans made ready by :meth:`encode` in batches, blocking until each is accepted.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        for start in range(0, len(encoded), BATCH):
            body = request_of(
                encoded[start : start + BATCH],
                resource=self._resource,
                scope_name="thoughtledger",
                scope_version=self._version,
                schema_url=SEMCONV_SCHEMA_URL,
            )
            refusal = self._post(self._compress(body))
            if refusal is not None:
                raise TelemetryExportError(refusal)

    def _post(self, body: bytes) -> str | None:
        """Post one request, trying again as the SDK does; return why it failed, or ``None``."""
        deadline = time.monotonic() + self._timeout
        refusal = "no answer"
        for attempt in range(_ATTEMPTS):
            backoff = 2**attempt * random.uniform(1 - _JITTER, 1 + _JITTER)  # noqa: S311  # jitter
            status, wait, refusal = self._attempt(body, max(deadline - time.monotonic(), 0.01))
            if status is not None and status < 400:
                return None
            if status is not None and status not in _RETRYABLE:
                return f"{self._shown} did not accept the spans (HTTP {status})"
            backoff = wait if wait is not None else backoff
            if backoff > deadline - time.monotonic() or self._closed.wait(backoff):
                break
        refusal = mask_text(refusal, self._given)
        return f"cannot send spans to {self._shown} (after retrying): {refusal}"

    def _attempt(self, body: bytes, timeout: float) -> tuple[int | None, float | None, str]:
        """One POST: its status (``None``: no answer), the wait asked for, what went wrong."""
        # The URL is http(s): traces_url checked it.
        request = urllib.request.Request(  # noqa: S310
            self._url, data=body, headers=self._headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout, context=self._tls) as answer:  # noqa: S310
                answer.read()
                return answer.status, None, ""
        except urllib.error.HTTPError as exc:
            exc.close()
            return exc.code, _retry_after(exc.headers.get("Retry-After")), f"HTTP {exc.code}"
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, ConnectionRefusedError):
                return None, None, "connection refused"
            return None, None, str(exc.reason).splitlines()[0][:200]
        except (OSError, http.client.HTTPException) as exc:  # a timeout, a reset, a bad answer
            return None, None, (str(exc).splitlines() or [type(exc).__name__])[0][:200]

    async def send_encoded(self, encoded: Sequence[bytes]) -> None:
        """Send spans made ready by :meth:`encode` from a worker thread.

        Cancelling the call (Ctrl-C) returns at once (see :func:`_off_the_loop`).

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        await _off_the_loop(lambda: self.send_encoded_now(encoded), on_cancel=self.close)

    async def send(self, spans: Sequence[SpanData]) -> None:
        """Send ``spans`` from a worker thread (see :meth:`send_now`); cancellable at once.

        Raises:
            TelemetryExportError: The endpoint refused a batch or could not be reached.
        """
        await _off_the_loop(lambda: self.send_now(spans), on_cancel=self.close)

    def close(self) -> None:
        """Stop waiting to try again: a request being retried fails at once."""
        self._closed.set()


async def _off_the_loop(work: Callable[[], None], *, on_cancel: Callable[[], None]) -> None:
    """Run blocking ``work`` in a daemon thread; a cancelled wait returns without it.

    A post to an endpoint that accepts the connection and never answers blocks until its
    timeout (10 s by default), and neither a cancellation nor the end of ``asyncio.run`` could
    interrupt it in the loop's own worker threads (the run waits for them on its way out). On
    cancellation ``on_cancel`` stops any retry, and the thread is left to its timeout: as a
    daemon it never keeps the process alive.

    Raises:
        Exception: Whatever ``work`` raised.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.done():
            return  # the wait was cancelled
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def target() -> None:
        error: BaseException | None = None
        try:
            work()
        except Exception as exc:  # handed to the waiting coroutine, which raises it
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=target, name="thoughtledger-otlp", daemon=True).start()
    try:
        await done
    except asyncio.CancelledError:
        on_cancel()
        raise


__all__ = ["BATCH", "OtlpSender", "traces_url"]
