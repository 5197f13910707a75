"""What a start of ``thoughtledger`` loads: the command typed and what it uses, nothing more.

Each probe is a real process started as users start the command (``python -m thoughtledger``),
which writes down every module loaded by the time it exits. Start-up time is what it loads, so
these lists are the start-up budget, pinned: the test suite and every agent's MCP client start
the command thousands of times, and a stray import costs each of them.
"""

import contextlib
import importlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.lines import initialize
from thoughtledger.adapters.cli import main
from thoughtledger.adapters.cli.catalogue import CATALOGUE, module_of
from thoughtledger.adapters.cli.parsing import Parser

_PROBE = """
import atexit, json, runpy, sys
listing = sys.argv[1]
def write_down():
    with open(listing, "w", encoding="utf-8") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(write_down)
sys.argv = ["thoughtledger", *sys.argv[2:]]
runpy.run_module("thoughtledger", run_name="__main__", alter_sys=True)
"""
"""Runs the command as ``python -m thoughtledger`` does, then lists ``sys.modules`` at exit."""

NEVER_ON_START = (
    "mcp",
    "starlette",
    "uvicorn",
    "pydantic_ai",
    "opentelemetry",
    "pyarrow",
    "httpx",
    "sqlalchemy",
)
"""What no reading command loads: the MCP SDK and its web stack, the model client, telemetry,
Parquet, the HTTP client, and on SQLite the SQL toolkit (the reads are plain statements)."""


def loaded(
    tmp_path: Path, *argv: str, stdin: str = ""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``thoughtledger ARGV`` in a process of its own; return it and the modules it loaded."""
    listing = tmp_path / "modules.json"
    done = subprocess.run(  # noqa: S603  # our own interpreter, a constant probe, no shell
        [sys.executable, "-c", _PROBE, str(listing), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, set(json.loads(listing.read_text(encoding="utf-8")))


def under(modules: set[str], *packages: str) -> list[str]:
    """The modules of ``packages`` (each package and everything inside it) among ``modules``."""
    return sorted(m for m in modules if any(m == p or m.startswith(f"{p}.") for p in packages))


def commands_loaded(modules: set[str]) -> set[str]:
    """The command modules among ``modules``."""
    return {module_of(name) for name in CATALOGUE} & modules


@pytest.fixture(scope="module")
def demo_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SQLite ledger holding the demo session, and the session's id."""
    path = tmp_path_factory.mktemp("start-up") / "demo.db"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["demo", "--db", str(path), "--json"]) == 0
    return path, str(json.loads(out.getvalue())["sessionId"])


def test_help_loads_no_command_no_ledger_and_no_console(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    assert "show a session as a tree of its thoughts" in done.stdout
    assert commands_loaded(modules) == set()
    assert under(modules, *NEVER_ON_START, "rich", "pydantic", "asyncio", "thoughtledger.api") == []
    assert under(modules, "thoughtledger.ledger.store", "thoughtledger.projections") == []


def test_a_command_s_own_help_loads_that_command_alone(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "sessions", "--help")
    assert done.returncode == 0, done.stderr
    assert "--status" in done.stdout
    assert commands_loaded(modules) == {module_of("sessions")}
    assert under(modules, *NEVER_ON_START) == []


def test_show_loads_show_and_the_facade_but_nothing_of_other_ways_in(
    tmp_path: Path, demo_ledger: tuple[Path, str]
) -> None:
    path, session_id = demo_ledger
    done, modules = loaded(tmp_path, "show", session_id, "--db", str(path))
    assert done.returncode == 0, done.stderr
    assert session_id in done.stdout
    # show warns in verify's words when a chain does not verify: that module, and no other.
    assert commands_loaded(modules) == {module_of("show"), module_of("verify")}
    assert under(modules, *NEVER_ON_START) == []
    assert under(modules, "thoughtledger.adapters.mcp", "thoughtledger.adapters.ui") == []
    assert under(modules, "thoughtledger.adapters.otel", "thoughtledger.adapters.llm") == []


@pytest.mark.parametrize(
    ("argv", "shown"), [(("stats",), "completion rate"), (("search", "latency"), "latency")]
)
def test_stats_and_search_on_sqlite_run_their_sql_without_the_sql_toolkit(
    tmp_path: Path, demo_ledger: tuple[Path, str], argv: tuple[str, ...], shown: str
) -> None:
    path, _session_id = demo_ledger
    done, modules = loaded(tmp_path, *argv, "--db", str(path))
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout
    assert commands_loaded(modules) == {module_of(argv[0])}
    # Their statements are SQL text with the user's filters bound: no SQLAlchemy, no engine.
    assert under(modules, *NEVER_ON_START, "aiosqlite") == []


def test_a_mistyped_command_is_refused_before_any_command_loads(tmp_path: Path) -> None:
    done, modules = loaded(tmp_path, "shwo", "x")
    assert done.returncode == 2
    assert "invalid choice: 'shwo'" in done.stderr
    assert commands_loaded(modules) == set()
    assert under(modules, "thoughtledger.api") == []


def test_serve_on_stdio_answers_without_loading_what_only_its_options_use(
    tmp_path: Path, demo_ledger: tuple[Path, str]
) -> None:
    path, _session_id = demo_ledger
    done, modules = loaded(
        tmp_path, "serve", "--db", str(path), stdin=json.dumps(initialize("probe")) + "\n"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"]
    # Tokens, an OAuth issuer (PyJWT), OTLP, the live socket: loaded when an option asks.
    assert under(modules, "thoughtledger.adapters.auth", "jwt", "sqlalchemy", "pyarrow") == []
    assert under(modules, "thoughtledger.adapters.otel", "thoughtledger.adapters.ui") == []
    assert commands_loaded(modules) == {module_of("serve")}


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_listed_command_is_added_by_the_module_listed(name: str) -> None:
    commands = Parser(prog="thoughtledger").add_subparsers()
    importlib.import_module(module_of(name)).register(commands)
    assert name in commands.choices
    assert set(commands.choices) <= set(CATALOGUE)
