import logging
from collections.abc import Iterator

import pytest
import structlog

from tests.support.processes import python_output
from thoughtledger.adapters.common import logs


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


def test_a_record_logged_before_structlog_was_imported_goes_where_the_server_routes() -> None:
    # A store (or the facade) imports structlog on its first record, behind the server's back:
    # that record must already go through logging, never to stdout (the JSON-RPC channel).
    probe = (
        "import logging, sys\n"
        "from thoughtledger.adapters.common import logs\n"
        "seen = []\n"
        "handler = logging.Handler()\n"
        "handler.emit = lambda record: seen.append(record.getMessage())\n"
        "logging.getLogger().addHandler(handler)\n"
        "logging.getLogger().setLevel(logging.INFO)\n"
        "logs.route_to_stdlib()\n"
        "before = 'structlog' in sys.modules\n"
        "import structlog\n"
        "structlog.get_logger('store').warning('listen_failed', error='gone')\n"
        "print(before, seen)\n"
    )
    assert python_output(probe).strip() == "False ['listen_failed error=gone']"
