"""OpenTelemetry export: sessions as GenAI traces over OTLP/HTTP (the ``otel`` extra).

:mod:`thoughtledger.adapters.otel.spans` maps a session's events to spans (pure, no OpenTelemetry
import), reading each stored event's few fields with :mod:`thoughtledger.projections.event_fields`;
:mod:`thoughtledger.adapters.otel.log` folds a whole log, page by page, into the spans of its
sessions
(``export --otlp``), :mod:`thoughtledger.adapters.otel.live` the events a server records (``serve
--otlp``); :mod:`thoughtledger.adapters.otel.wire` encodes the spans, and
:mod:`thoughtledger.adapters.otel.exporter` sends them over OTLP/HTTP, configured as the
OpenTelemetry
SDK's exporter is.
"""
