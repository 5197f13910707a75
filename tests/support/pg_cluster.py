"""A PostgreSQL server of its own for one test worker: ``initdb`` in a private folder, a free port.

Test workers running side by side cannot share one PostgreSQL server: a reader of the whole log
sees only positions below the oldest transaction in flight on the whole server (see
:mod:`thoughtledger.ledger.store.postgres.positions`), so one worker's open transactions would hold
back another's reads and its tests would read stale pages. Each worker therefore starts a server
from the machine's PostgreSQL binaries (the same version as the shared one), with a database
``test``, trust authentication on loopback only, and durability off (a test server is thrown
away: ``fsync=off`` and friends only make it faster). As root (CI), the server runs as the
``postgres`` user, which PostgreSQL requires.
"""

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

_TIMEOUT = 120
"""Seconds any one step (initdb, start, createdb, stop) may take before the worker gives up."""

_SETTINGS = (
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
    "-c full_page_writes=off -c max_connections=200"
)


class ClusterError(RuntimeError):
    """A private PostgreSQL server could not be started."""


@dataclass(frozen=True)
class Cluster:
    """A running private server: its folder and port, and the binaries that run it."""

    root: Path
    port: int
    bindir: Path

    @property
    def url(self) -> str:
        """The test database's URL, as ``THOUGHTLEDGER_TEST_PG_URL`` takes it."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/test"


def _bindir() -> Path:
    """The folder of ``initdb`` and ``pg_ctl``: ``THOUGHTLEDGER_PG_BIN``, else ``pg_config``'s.

    Raises:
        ClusterError: No PostgreSQL server binaries are installed.
    """
    named = os.environ.get("THOUGHTLEDGER_PG_BIN")
    if named:
        return Path(named)
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if candidates:
        return candidates[-1].parent
    found = shutil.which("initdb")
    if found is None:
        raise ClusterError("no PostgreSQL server binaries (initdb) found; set THOUGHTLEDGER_PG_BIN")
    return Path(found).parent


def _as_owner() -> list[str]:
    """The prefix that runs a command as the server's owner: PostgreSQL refuses to run as root."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _run(command: list[str]) -> None:
    """Run one step, raising with its own words when it fails.

    Raises:
        ClusterError: The step failed or took too long.
    """
    try:
        subprocess.run(  # noqa: S603  # our own binaries and arguments
            command, check=True, capture_output=True, text=True, timeout=_TIMEOUT
        )
    except subprocess.CalledProcessError as exc:
        raise ClusterError(f"{command[len(_as_owner())]} failed: {exc.stderr.strip()}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"{command} took more than {_TIMEOUT} s") from exc


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start() -> Cluster:
    """Create and start a private server with an empty database ``test``.

    Raises:
        ClusterError: The server could not be created or started.
    """
    bindir = _bindir()
    root = Path(tempfile.mkdtemp(prefix="tl-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    owner = _as_owner()
    _run(
        [
            *owner,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
            "--no-instructions",
        ]
    )
    # Another process may take the free port between the probe and the start: try a few.
    for attempt in range(5):
        port = _free_port()
        options = f"-p {port} -k {root} {_SETTINGS}"
        log = root / "server.log"
        try:
            _run(
                [
                    *owner,
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-w",
                    "-t",
                    str(_TIMEOUT),
                    "-o",
                    options,
                    "start",
                ]
            )
        except ClusterError:
            if attempt == 4:
                raise
            continue
        cluster = Cluster(root=root, port=port, bindir=bindir)
        _run(
            [
                *owner,
                str(bindir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "test",
            ]
        )
        return cluster
    raise ClusterError("unreachable")  # pragma: no cover


def stop(cluster: Cluster) -> None:
    """Stop the server at once and remove its folder (nothing in it is kept)."""
    try:
        _run(
            [
                *_as_owner(),
                str(cluster.bindir / "pg_ctl"),
                "-D",
                str(cluster.root / "data"),
                "-m",
                "immediate",
                "-w",
                "stop",
            ]
        )
    finally:
        shutil.rmtree(cluster.root, ignore_errors=True)
