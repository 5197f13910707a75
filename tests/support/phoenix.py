"""A real Arize Phoenix server started locally, for the one test that sends it traces.

Phoenix is not among the dev extras: it installs some 850 MB of dependencies in minutes, so the
test runs where ``THOUGHTLEDGER_TEST_PHOENIX`` names an installed ``phoenix`` executable (for
example from ``python -m venv /tmp/px && /tmp/px/bin/pip install arize-phoenix``).
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
from typing import Any

import pytest

PHOENIX_ENV = "THOUGHTLEDGER_TEST_PHOENIX"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """Start Phoenix on free loopback ports; yield its base URL once it answers; stop it after."""
    executable = os.environ.get(PHOENIX_ENV)
    if not executable:
        pytest.skip(f"no Phoenix installed (set {PHOENIX_ENV} to its phoenix executable)")
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
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
