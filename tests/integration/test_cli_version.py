"""``thoughtledger --version``: the installed package's version, without loading the heavy parts."""

import tomllib
from pathlib import Path

import pytest

from tests.support.processes import python_output
from thoughtledger.adapters.cli import main

ROOT = Path(__file__).resolve().parents[2]

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"thoughtledger {VERSION}\n"


def test_version_loads_neither_the_mcp_server_nor_a_database_engine() -> None:
    heavy = ("mcp", "uvicorn", "sqlalchemy", "aiosqlite", "asyncpg", "openai", "structlog")
    script = (
        "import sys\n"
        "from thoughtledger.adapters.cli import main\n"
        "code = main(['--version'])\n"
        f"print(code, [name for name in {heavy!r} if name in sys.modules])\n"
    )
    assert python_output(script).splitlines() == [f"thoughtledger {VERSION}", "0 []"]
