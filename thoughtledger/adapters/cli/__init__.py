"""The ``thoughtledger`` command line: audit, replay, time travel, analytics, export and import.

Every command takes ``--db URL`` (else ``$THOUGHTLEDGER_URL``, else the local SQLite file), prints
tables and trees on a terminal, plain text when piped, and ``--json`` on request. A problem is one
line on stderr: exit code 2 when the command line was wrong, 1 when the work failed.
"""

from thoughtledger.adapters.cli.command import main

__all__ = ["main"]
