"""The OTLP/HTTP receiver: GenAI reasoning in OpenTelemetry spans, captured as thoughts.

:mod:`~thoughtledger.adapters.otel.receiver.decode` turns request bodies into
``opentelemetry-proto`` messages (within bounds),
:mod:`~thoughtledger.adapters.otel.receiver.dialects` reads each sender's reasoning from them,
:mod:`~thoughtledger.adapters.otel.receiver.app` serves the routes.
"""

from thoughtledger.adapters.otel.receiver.app import (
    LOGS_PATH,
    TRACES_PATH,
    Receiver,
    receiver_routes,
)

__all__ = ["LOGS_PATH", "TRACES_PATH", "Receiver", "receiver_routes"]
