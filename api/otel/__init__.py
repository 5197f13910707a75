"""OpenTelemetry export: sessions as GenAI traces over OTLP/HTTP (the ``otel`` extra).

:mod:`api.otel.spans` maps a session's events to spans (pure, no OpenTelemetry import), reading
each stored event's few fields with :mod:`api.otel.payloads`; :mod:`api.otel.log` folds a whole
log, page by page, into the spans of its sessions (``export --otlp``), :mod:`api.otel.live` the
events a server records (``serve --otlp``); :mod:`api.otel.wire` encodes the spans, and
:mod:`api.otel.exporter` sends them with the OpenTelemetry SDK's OTLP/HTTP exporter.
"""
