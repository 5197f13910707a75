"""The facade: the use cases over the event store and the projections.

Its public surface is :mod:`thoughtledger.api`; the ways in and out beside it (``mcp``, ``cli``,
``ui``, ``otel``, ``llm``, ``tool``, ``auth``) import that surface, never these modules.
"""
