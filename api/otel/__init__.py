"""OpenTelemetry export: sessions as GenAI traces over OTLP/HTTP (the ``otel`` extra).

:mod:`api.otel.spans` maps a session's events to spans (pure, no OpenTelemetry import);
:mod:`api.otel.exporter` sends them with the OpenTelemetry SDK's OTLP/HTTP protobuf exporter.
"""
