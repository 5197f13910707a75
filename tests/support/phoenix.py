"""A real Arize Phoenix server started locally, for the one test that sends it traces.

Phoenix is not among the dev extras (some 600 MB of dependencies): ``tools/phoenix_env`` installs
the version ``tools/phoenix-requirements.txt`` pins into ``.venv-phoenix``, and the test runs where
``THOUGHTLEDGER_TEST_PHOENIX`` names its ``phoenix`` executable. ``tools/test`` sets it when that
is installed and, in CI (``CI=true``), installs it in the background while the other tests run,
naming in ``THOUGHTLEDGER_TEST_PHOENIX_DONE`` a file that gets the installer's exit status. Without
Phoenix the test is skipped with the reason, except in CI, where it fails.
"""

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

PHOENIX_ENV = "THOUGHTLEDGER_TEST_PHOENIX"
DONE_ENV = "THOUGHTLEDGER_TEST_PHOENIX_DONE"
INSTALL_WAIT = 240
"""Seconds to wait for a background install: it takes up to about a minute, and CI starts it
minutes before this test runs."""


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the Phoenix test must run in CI: {reason}")
    pytest.skip(reason)


def phoenix_executable() -> Path:
    """The ``phoenix`` executable to start, once a background install of it has ended."""
    named = os.environ.get(PHOENIX_ENV)
    if not named:
        _unavailable(f"no Phoenix installed (tools/phoenix_env installs it; set {PHOENIX_ENV})")
    executable = Path(named)
    done = os.environ.get(DONE_ENV)
    if done:
        deadline = time.monotonic() + INSTALL_WAIT
        while not (status := Path(done).read_text().strip()) and time.monotonic() < deadline:
            time.sleep(1)
        if status != "0":
            log = executable.parent.parent / "install.log"
            said = log.read_text()[-2000:] if log.exists() else "(no log)"
            outcome = f"failed (exit {status})" if status else f"took over {INSTALL_WAIT} s"
            _unavailable(f"installing Phoenix {outcome}: {said}")
    if not executable.is_file():
        _unavailable(f"no Phoenix at {executable} (tools/phoenix_env installs it)")
    return executable


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """Start Phoenix on free loopback ports; yield its base URL once it answers; stop it after."""
    executable = phoenix_executable()
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",  # the test's traffic stays on this machine
    }
    log = (workdir / "phoenix.log").open("wb")
    process = subprocess.Popen(  # noqa: S603  # the executable the tester named
        [executable, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/v1/projects", timeout=5):  # noqa: S310
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        "Phoenix did not start: " + (workdir / "phoenix.log").read_text()[-2000:]
                    ) from None
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def get_json(url: str) -> Any:
    """GET ``url`` and parse its JSON body."""
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310  # loopback
        return json.loads(response.read())
