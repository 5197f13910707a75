"""``thoughtledger doctor``: which ledger the commands use, what is in it, what is installed.

One screen (or ``--json``) for the question a new user asks first: where is my ledger? It names
the ledger every command would open and why (``--db``, ``$THOUGHTLEDGER_URL``, the default
file, or the demo's while there is none), its size, its schema, whether an upgrade is pending,
which extras are installed and which servers ``serve`` and ``ui`` would start. It only reads:
a missing ledger is reported, never created.
"""

import argparse
import importlib.util
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from thoughtledger.adapters.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    Commands,
    Ui,
    add_json_option,
    command,
    plural,
    when,
)
from thoughtledger.adapters.cli.first_run import (
    demo_path,
    demo_until_there_is_a_ledger,
    installed_version,
)
from thoughtledger.api import (
    URL_ENV,
    default_path,
    open_ledger,
    schema_version,
)
from thoughtledger.ledger.errors import LedgerError, LedgerNotFoundError, SchemaVersionError
from thoughtledger.ledger.masking import mask_url

EXTRAS: dict[str, tuple[str, ...]] = {
    "postgres": ("asyncpg",),
    "llm": ("openai",),
    "parquet": ("pyarrow",),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
    "analysis": ("pandas", "matplotlib"),
    "openai-agents": ("agents",),
    "pydantic-ai": ("pydantic_ai",),
    "langchain": ("langchain_core",),
}
"""Each extra, and the modules whose presence says it is installed."""


BEHIND_CAP = 100_000
"""Events behind the loop marks doctor counts at most (it reads that many positions)."""


def register(commands: Commands) -> None:
    """Add the ``doctor`` command."""
    parser = command(
        commands,
        "doctor",
        run,
    )
    add_json_option(parser)


@dataclass
class Found:
    """What doctor found about the ledger (``None``: not known)."""

    url: str
    chosen_by: str
    file: Path | None
    exists: bool
    problem: str | None = None
    schema: int | None = None
    schema_note: str | None = None
    sessions: int | None = None
    events: int | None = None
    last_activity: str | None = None
    loops_behind: int | None = None


async def run(args: argparse.Namespace, ui: Ui) -> int:
    """Print the ledger's facts, the extras and the servers (exit 1 if the ledger cannot open).

    Raises:
        InvalidInputError: The URL is of no known form.
    """
    found = await _ledger(args.db)
    report = {
        "version": installed_version(),
        "python": platform.python_version(),
        "ledger": _ledger_json(found),
        "demo": _demo(),
        "extras": {name: _installed(modules) for name, modules in EXTRAS.items()},
        "servers": _servers(),
    }
    if args.json:
        ui.json(report)
    else:
        _print(ui, report)
    return EXIT_FAILURE if found.problem is not None else EXIT_OK


async def _ledger(given: str | None) -> Found:
    """The ledger the commands would read, opened read-only, and what it holds."""
    if given:
        url, chosen_by = given, "--db"
    elif os.environ.get(URL_ENV):
        url, chosen_by = os.environ[URL_ENV], f"${URL_ENV}"
    elif (demo := demo_until_there_is_a_ledger(lambda _said: None)) is not None:
        # As every reading command chooses it (see first_run): one rule, said here in words.
        url, chosen_by = demo, "the demo's, until there is a ledger of your own"
    else:
        url, chosen_by = str(default_path()), "the default file (no --db, no $THOUGHTLEDGER_URL)"
    file = _file_of(url)
    found = Found(mask_url(url), chosen_by, file, exists=file is None or file.exists())
    try:
        async with open_ledger(url, ttl=None, read_only=True) as ledger:
            heads = await ledger.all_heads()
            found.loops_behind = await ledger.loops.behind(cap=BEHIND_CAP)
            found.schema = ledger.stored_schema_version
    except LedgerNotFoundError:
        found.exists = False
        return found
    except SchemaVersionError as exc:
        found.schema_note = str(exc)
        return found
    except LedgerError as exc:
        found.problem = mask_url(str(exc))
        return found
    found.exists = True
    found.schema_note = _schema_note(found.schema)
    found.sessions = len(heads)
    found.events = sum(head.version for head in heads)
    latest = max((head.updated_at for head in heads), default=None)
    found.last_activity = when(latest) if latest is not None else None
    return found


def _ledger_json(found: Found) -> dict[str, Any]:
    size = _size(found.file) if found.file is not None and found.exists else None
    return {
        "url": found.url,
        "chosenBy": found.chosen_by,
        "file": None if found.file is None else str(found.file),
        "exists": found.exists,
        "bytes": size,
        # The version the ledger holds, beside this release's: what a read-only opening saw.
        "schema": found.schema,
        "releaseSchema": schema_version(),
        "schemaNote": found.schema_note,
        "sessions": found.sessions,
        "events": found.events,
        "lastActivity": found.last_activity,
        # Events the stored loop marks have not taken in (at most BEHIND_CAP is counted).
        "loopMarksBehind": found.loops_behind,
        "problem": found.problem,
    }


def _file_of(url: str) -> Path | None:
    """The SQLite file a URL names (``None`` for another database)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        return Path(parts.path if scheme == "file" else url).resolve()
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        return Path(url.split("://", 1)[1].split("?", 1)[0].removeprefix("/")).resolve()
    return None


def _size(file: Path) -> int:
    """The bytes of a SQLite ledger: its file and its write-ahead log."""
    total = 0
    for part in (file, file.with_name(file.name + "-wal")):
        try:
            total += part.stat().st_size
        except OSError:
            continue
    return total


def _demo() -> dict[str, Any] | None:
    demo = demo_path()
    return {"file": str(demo), "bytes": _size(demo)} if demo.is_file() else None


def _installed(modules: tuple[str, ...]) -> bool:
    try:
        return all(importlib.util.find_spec(module) is not None for module in modules)
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False


def _servers() -> dict[str, Any]:
    """What ``serve`` and ``ui`` would start with their defaults."""
    from thoughtledger.adapters.cli.ui import DEFAULT_PORT as UI_PORT
    from thoughtledger.adapters.common.options import DEFAULT_HOST, DEFAULT_MCP_PORT

    return {
        "serve": "MCP on stdio, for the client that starts it",
        "serve --http": f"MCP at http://{DEFAULT_HOST}:{DEFAULT_MCP_PORT}/mcp (loopback only)",
        "ui": f"the browser view at http://{DEFAULT_HOST}:{UI_PORT}/ (read-only, loopback only)",
    }


def _print(ui: Ui, report: dict[str, Any]) -> None:
    ledger = report["ledger"]
    lines = [f"thoughtledger {report['version']} on Python {report['python']}", ""]
    lines.append(f"ledger    {ledger['file'] or ledger['url']}")
    lines.append(f"          chosen by {ledger['chosenBy']}")
    if ledger["problem"] is not None:
        lines.append(f"          cannot be opened: {ledger['problem']}")
    elif not ledger["exists"]:
        lines.append(
            "          not made yet: the first thought an agent records makes it "
            "(thoughtledger serve), as do record and import"
        )
    elif ledger["sessions"] is None:
        lines.append(f"          {ledger['schemaNote']}")
    else:
        size = f"{_megabytes(ledger['bytes'])} · " if ledger["bytes"] is not None else ""
        lines.append(
            f"          {size}{plural(ledger['sessions'], 'session')} · "
            f"{plural(ledger['events'], 'event')} · last activity {ledger['lastActivity'] or '-'}"
        )
        lines.append(f"schema    {ledger['schemaNote']}")
        lines.append(f"derived   {_behind(ledger['loopMarksBehind'])}")
    if report["demo"] is not None:
        lines.append(f"demo      {report['demo']['file']} (thoughtledger demo records there)")
    extras = report["extras"]
    have = [name for name, present in extras.items() if present]
    lack = [name for name, present in extras.items() if not present]
    lines.append(f"extras    installed: {', '.join(have) or 'none'}")
    if lack:
        lines.append(
            f"          not installed: {', '.join(lack)} (pip install 'thoughtledger[NAME]')"
        )
    servers = report["servers"]
    lines.append("servers   " + "\n          ".join(f"{k:<13} {v}" for k, v in servers.items()))
    for line in lines:
        ui.out.print(line, highlight=False, soft_wrap=True)


def _schema_note(stored: int | None) -> str:
    """The stored schema beside this release's, in words (what the next writable opening does)."""
    release = schema_version()
    if stored is None:
        return "none: kept in memory"
    if stored < release:
        return (
            f"{stored}, behind this release's {release}: read as it is; the next writable "
            "opening (serve, record) upgrades it"
        )
    return f"{stored}, this release's; nothing to upgrade"


def _behind(count: int | None) -> str:
    """The loop marks' lag, in words (what the next writable opening takes in)."""
    if not count:
        return "loop marks up to date"
    more = "+" if count >= BEHIND_CAP else ""
    return (
        f"loop marks {count:,}{more} events behind (reads fold them meanwhile; the next "
        "writable opening, serve or record takes them in)"
    )


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else plural(size, "byte")


__all__ = ["EXTRAS", "register", "run"]
