"""What several adapters share, and nothing that decides who may see what.

Origins and the loopback names (:mod:`~thoughtledger.adapters.common.origins`), where log records
go (:mod:`~thoughtledger.adapters.common.logs`), argparse types
(:mod:`~thoughtledger.adapters.common.options`), the tools' JSON Schemas compacted
(:mod:`~thoughtledger.adapters.common.json_schema`), and the bounded HTTP server both ``serve
--http`` and ``ui`` run (:mod:`~thoughtledger.adapters.common.hardened`, stopped by the signals of
:mod:`~thoughtledger.adapters.common.stopping`). Visibility is the API's access door
(:class:`thoughtledger.api.Scope`).
"""
