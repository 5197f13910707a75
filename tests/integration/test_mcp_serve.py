"""The serve options, and how the entry point fails when it cannot start."""

import argparse
import re
import socket
from typing import Any

import pytest

from tests.support.processes import thoughtledger
from thoughtledger.adapters.mcp import create_server, serve
from thoughtledger.adapters.mcp.serve import add_serve_arguments
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.errors import InvalidInputError
from thoughtledger.ledger.store.memory import MemoryEventStore


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(argv)


def test_serve_options_default_to_stdio_with_the_official_tool_and_the_read_tool() -> None:
    args = parse()
    # --host and --port stay unset unless given (so serve can refuse them without --http); with
    # --http, 127.0.0.1 and 8765 apply (serve_options.DEFAULT_HOST, DEFAULT_PORT).
    assert (args.db, args.http, args.host, args.port) == (None, False, None, None)
    assert args.profile == "official"
    assert args.tools == ["sequentialthinking", "thinking_history"]
    assert args.ttl_minutes == 30


def test_tools_are_a_comma_separated_list_or_all() -> None:
    assert parse("--tools", "sequential_thinking, sequentialthinking").tools == [
        "sequential_thinking",
        "sequentialthinking",
    ]
    assert len(parse("--tools", "all").tools) == 6


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--tools", "sequentialthinking,nope"], "unknown tools nope"),
        (["--host", "0.0.0.0"], "listens on loopback only"),  # noqa: S104  # the refused case
        (["--host", "example.com"], "is not one of 127.0.0.1, localhost, ::1"),
        (["--host", "127.0.0.2"], "listens on loopback only"),
        (["--port", "70000"], "expected a port number, 0-65535"),
        (["--profile", "verbose"], "invalid choice"),
        (["--ttl-minutes", "-1"], "0 (never) or a positive number"),
    ],
)
def test_bad_serve_options_are_refused_with_a_reason(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse(*argv)
    assert exited.value.code == 2
    assert complaint in capsys.readouterr().err


def test_loopback_hosts_are_accepted() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        assert parse("--http", "--host", host).host == host


def test_a_ledger_url_of_no_known_form_exits_2_with_the_reason_on_stderr() -> None:
    done = thoughtledger("serve", "--db", "nosuch://ledger")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("thoughtledger: error: unknown ledger URL 'nosuch://ledger'")


def test_a_port_in_use_exits_1_with_the_reason_on_stderr() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        done = thoughtledger("serve", "--db", "memory://", "--http", "--port", port)
    assert done.returncode == 1
    assert "thoughtledger: error: " in done.stderr
    assert "in use" in done.stderr


def test_the_serve_module_exposes_exactly_what_the_cli_wires() -> None:
    assert serve.__all__ == ["LiveExport", "ServeParts", "add_serve_arguments", "run_serve"]


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"tools": ["sequentialthinking", "nope"]}, "unknown tools ['nope']"),
        ({"tools": []}, "list at least one tool"),
        ({"profile": "verbose"}, "unknown profile 'verbose'"),
    ],
)
def test_create_server_refuses_unknown_tools_and_profiles(
    options: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(complaint)):
        create_server(Ledger(MemoryEventStore()), **options)


def test_a_database_password_never_reaches_the_logs() -> None:
    done = thoughtledger("serve", "--db", "postgresql://agent:s3cr3t-pw@127.0.0.1:1/none")
    assert done.returncode == 1
    assert "thoughtledger: error: cannot reach" in done.stderr
    assert "s3cr3t-pw" not in done.stderr
    assert "s3cr3t-pw" not in done.stdout
