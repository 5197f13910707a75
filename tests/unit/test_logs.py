import logging
from collections.abc import Iterator

import pytest
import structlog

from tests.support.processes import python_output
from thoughtledger.api import logs


@pytest.fixture
def restored() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    logs._routing.use(None)
    structlog.configure(**saved)


@pytest.mark.usefixtures("restored")
def test_the_server_routing_sends_structlog_records_through_stdlib_logging(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.route_to_stdlib()
    with caplog.at_level(logging.INFO):
        logs.get_logger("tests.lazy").info("thought_generated", model="m", tokens=3)
    assert [r.getMessage() for r in caplog.records] == ["thought_generated model=m tokens=3"]
    assert capsys.readouterr().out == ""  # stdout carries JSON-RPC on stdio


@pytest.mark.usefixtures("restored")
def test_commands_log_to_stderr_and_restore_the_previous_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = structlog.get_config()
    with logs.logging_to_stderr(logging.WARNING):
        logs.get_logger("tests.lazy").info("hidden")
        logs.get_logger("tests.lazy").warning("shown", n=1)
    captured = capsys.readouterr()
    assert "shown" in captured.err
    assert "hidden" not in captured.err
    assert captured.out == ""
    assert structlog.get_config() == before


def test_serving_does_not_import_structlog_before_something_logs() -> None:
    probe = (
        "import sys\n"
        "from thoughtledger.adapters.cli import command\n"
        "from thoughtledger.adapters.mcp import serve\n"
        "serve.configure_logging()\n"
        "print('structlog' in sys.modules)\n"
    )
    assert python_output(probe).strip() == "False"
