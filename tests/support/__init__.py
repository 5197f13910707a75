"""Helpers the tests share, one module per job; fixtures live in the conftest.py files.

- :mod:`~tests.support.cli`: run ``thoughtledger`` in this process, export files, reading commands
- :mod:`~tests.support.samples`: sample sessions recorded through the API, a recording clock
- :mod:`~tests.support.mcp`: MCP clients in this process and the calls they make
- :mod:`~tests.support.processes`: the server as a subprocess (stdio and HTTP), its environment
- :mod:`~tests.support.auth`: ``serve --http --auth FILE`` as a subprocess, tokens, clients with one
- :mod:`~tests.support.backends`: memory, SQLite and PostgreSQL stores for the contract suite
- :mod:`~tests.support.factories`: small builders of events
- :mod:`~tests.support.folding`: sessions recorded from generated calls, the fold laws
- :mod:`~tests.support.forged`: chains sealed by hand, as a foreign writer could
- :mod:`~tests.support.hostile`: hypothesis strategies of hostile values
- :mod:`~tests.support.llm_server`: a scripted OpenAI-compatible server on loopback
- :mod:`~tests.support.raw_store`: the store below a ledger's facade, for the tests that must
  reach it

Test modules import from here, never from each other (``tests/unit/test_test_layout.py``).
"""
