"""The ways in and out, beside the API: one subpackage each.

``mcp`` (the MCP server), ``cli`` (the ``thoughtledger`` command), ``ui`` (the browser view),
``otel`` (OpenTelemetry export), ``llm`` (a model writing thoughts), ``tool`` (the in-process
tool for agent frameworks) and ``auth`` (bearer tokens). Each imports :mod:`thoughtledger.api`'s
surface and the core's public types only; what several share sits in
:mod:`thoughtledger.adapters.common`.
"""
