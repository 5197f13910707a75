"""What a first run has to find: the demo's file, the ledger a reading command falls back to.

``thoughtledger demo`` records into the cache folder, never into the ledger the other commands
read (``$THOUGHTLEDGER_URL``, else the data folder's file); until that ledger exists, the
commands that only read read the demo's, and say so. The installed version is here too: what
``--version`` and ``doctor`` print.
"""

import os
from collections.abc import Callable
from pathlib import Path

from thoughtledger.api import URL_ENV, default_path


def demo_path() -> Path:
    """Where a demo without ``--db`` records: ``demo.db`` in the user's cache folder."""
    import platformdirs  # loaded when asked: most commands never look for the demo

    return platformdirs.user_cache_path("thoughtledger", appauthor=False) / "demo.db"


def installed_version() -> str:
    """Return the version of the installed package, as its metadata says."""
    import importlib.metadata  # reading metadata loads the email parser: only when asked

    try:
        return importlib.metadata.version("thoughtledger")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree never installed
        return "(not installed)"


def demo_until_there_is_a_ledger(say: Callable[[str], None]) -> str | None:
    """The demo's file while there is no ledger yet and none is named, else ``None``.

    ``thoughtledger demo`` records into the cache folder, never into the ledger the other
    commands read; until that ledger exists, a command that only reads reads the demo's (and
    says so, through ``say``), so the command typed right after the demo finds what it
    recorded.
    """
    if os.environ.get(URL_ENV) or default_path().exists():
        return None
    demo = demo_path()
    if not demo.is_file():
        return None
    say(f"(no ledger at {default_path()} yet: reading the demo's, {demo})")
    return str(demo)


def where_ledgers_come_from(given: str | None) -> str:
    """What to add to "no ledger at the default file": how one is made."""
    if given or os.environ.get(URL_ENV):
        return ""
    return (
        "; it is made by the first thought an agent records (thoughtledger serve), or by "
        "record or import"
    )


__all__ = [
    "demo_path",
    "demo_until_there_is_a_ledger",
    "installed_version",
    "where_ledgers_come_from",
]
