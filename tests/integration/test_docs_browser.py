"""The browser view's page of the docs runs as written: its commands, then its socket client.

The ``sh`` block's commands run one after another in an empty directory (``ui`` with
``--port 0`` added, as a test cannot take the default port), then the ``py`` block's client runs
against that app with the token the commands wrote: it prints the demo session's events and
returns once none comes. A writer's token reads an empty list, and the page says why.
"""

import asyncio
import contextlib
import io
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs import ROOT, fenced_blocks
from tests.support.processes import WAIT, child_env

PAGE = ROOT / "docs" / "browser.md"


def _command(line: str) -> list[str]:
    words = shlex.split(line)
    assert words[0] == "thoughtledger", line
    return [sys.executable, "-m", "thoughtledger.adapters.cli", *words[1:]]


@pytest.mark.slow
def test_the_browser_page_s_commands_and_socket_client_run_as_written(tmp_path: Path) -> None:
    (commands,) = [block for block in fenced_blocks(PAGE, "sh") if "ui --db" in block]
    (client,) = fenced_blocks(PAGE, "py")
    lines = [line for line in commands.splitlines() if line.strip()]
    *setup, serve = lines
    env = {**child_env(), "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for line in setup:
        ran = subprocess.run(  # noqa: S603  # our interpreter, the documented command
            _command(line), cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert ran.returncode == 0, (line, ran.stderr)
    with subprocess.Popen(  # noqa: S603  # our interpreter, the documented command
        [*_command(serve), "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            address = process.stdout.readline().split()[2]
            port = int(address.rstrip("/").rsplit(":", 1)[1])
            namespace: dict[str, object] = {"__name__": "docs_browser"}
            exec(compile(client, str(PAGE), "exec"), namespace)  # noqa: S102  # the documented client is the test
            follow = namespace["follow"]
            token = (tmp_path / "audrey.token").read_text().strip()
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                # A loaded machine may take longer than the one quiet second to send the first.
                last = asyncio.run(follow(token, port, 5.0))  # type: ignore[operator]  # the documented function
            shown = printed.getvalue().splitlines()
            assert len(shown) == 10  # the demo session's ten events, then quiet: it returns
            assert shown[0].split()[2] == "session.started"
            assert last == int(shown[-1].split()[0])
            alice = (tmp_path / "alice.token").read_text().strip()
            with contextlib.redirect_stdout(io.StringIO()) as nothing:
                assert asyncio.run(follow(alice, port, 0.5)) == 0  # type: ignore[operator]
            assert nothing.getvalue() == ""
        finally:
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=WAIT)
