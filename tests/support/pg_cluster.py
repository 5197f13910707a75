"""A PostgreSQL server of its own for one test worker: ``initdb`` in a private folder, a free port.

Test workers running side by side cannot share one PostgreSQL server: a reader of the whole log
sees only positions below the oldest transaction in flight on the whole server (see
:mod:`thoughtledger.ledger.store.postgres.positions`), so one worker's open transactions would hold
back another's reads and its tests would read stale pages. Each worker therefore starts a server
from the machine's PostgreSQL binaries (the same version as the shared one), with a database
``test``, trust authentication on loopback only, and durability off (a test server is thrown
away: ``fsync=off`` and friends only make it faster). As root (CI), the server runs as the
``postgres`` user, which PostgreSQL requires.

:func:`start_pair` makes a replicated pair the same way: a primary that ships its WAL, and a hot
standby copied from it with ``pg_basebackup -R`` on another port, streaming before it is handed
over; asynchronously by default, or synchronously (each commit acknowledged only once the
standby has applied it). :func:`crash` kills a server's postmaster as a power cut would, and
:func:`promote` makes a standby the primary.
"""

import contextlib
import gc
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

_TIMEOUT = 120
"""Seconds any one step (initdb, start, createdb, stop) may take before the worker gives up."""

_SETTINGS = (
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
    "-c full_page_writes=off -c max_connections=200"
)

_REPLICATION = (
    "-c wal_level=replica -c max_wal_senders=4 -c hot_standby=on -c synchronous_commit=on "
    "-c log_statement=all -c log_line_prefix=%a:"
)
"""What a primary needs to feed a standby (initdb's trust lines already admit replication on
loopback), and what lets the standby answer reads while it replays. Commits are flushed as in
production (with ``fsync`` still off), so the standby receives each one when it commits rather
than when the WAL writer next wakes. Every statement is logged with the connection's
``application_name``, so a test can tell which server answered what (:func:`statements`)."""


STANDBY_NAME = "standby"
"""The standby's ``cluster_name``, which its WAL receiver gives the primary as its
``application_name``: what a synchronous primary's ``synchronous_standby_names`` names."""


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


def binaries() -> Path:
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


def _private_folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="tl-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    return root


def start(settings: str = "") -> Cluster:
    """Create and start a private server with an empty database ``test``.

    Args:
        settings: More ``-c name=value`` server options.

    Raises:
        ClusterError: The server could not be created or started.
    """
    bindir = binaries()
    root = _private_folder()
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
    cluster = _serve(bindir, root, settings)
    _run(
        [
            *owner,
            str(bindir / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(cluster.port),
            "-U",
            "postgres",
            "test",
        ]
    )
    return cluster


def _serve(bindir: Path, root: Path, settings: str) -> Cluster:
    """Start the server whose data is in ``root/data`` on a free port.

    Raises:
        ClusterError: It did not start.
    """
    # Another process may take the free port between the probe and the start: try a few.
    for attempt in range(5):
        port = _free_port()
        options = f"-p {port} -k {root} {_SETTINGS} {settings}"
        try:
            _run(
                [
                    *_as_owner(),
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(root / "data"),
                    "-l",
                    str(root / "server.log"),
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
        return Cluster(root=root, port=port, bindir=bindir)
    raise ClusterError("unreachable")  # pragma: no cover


def halt(cluster: Cluster) -> None:
    """Stop the server at once, keeping its folder (as a crash or a pulled plug would).

    Raises:
        ClusterError: ``pg_ctl stop`` failed (the server was not running).
    """
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


def stop(cluster: Cluster) -> None:
    """Stop the server at once and remove its folder (nothing in it is kept)."""
    try:
        halt(cluster)
    finally:
        shutil.rmtree(cluster.root, ignore_errors=True)


@dataclass(frozen=True)
class Pair:
    """A primary and a hot standby streaming its WAL, each a private server."""

    primary: Cluster
    standby: Cluster


def value(cluster: Cluster, sql: str) -> str:
    """One value from ``psql`` on ``cluster`` (its database ``test``).

    Raises:
        ClusterError: psql failed.
    """
    command = [str(cluster.bindir / "psql"), "-h", "127.0.0.1", "-p", str(cluster.port)]
    command += ["-U", "postgres", "-d", "test", "-X", "-tA", "-c", sql]
    try:
        done = subprocess.run(  # noqa: S603  # our own binaries and arguments
            command, check=True, capture_output=True, text=True, timeout=_TIMEOUT
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise ClusterError(f"psql on port {cluster.port} failed: {exc}") from exc
    return done.stdout.strip()


def start_pair(*, synchronous: bool = False) -> Pair:
    """Start a primary, copy it with ``pg_basebackup -R``, start the copy as a hot standby.

    Returns once the primary reports the standby ``streaming`` in ``pg_stat_replication``
    (and, ``synchronous``, as its ``sync`` standby).

    Args:
        synchronous: Make the primary acknowledge a commit only once the standby has applied
            it (``synchronous_standby_names`` naming the standby, ``synchronous_commit``
            ``remote_apply``). Set once the standby streams: before, every commit would wait.

    Raises:
        ClusterError: Either server could not be made or started, or the standby did not
            stream within the bound.
    """
    # On the command line, which a configuration file cannot override; without
    # synchronous_standby_names it waits for no standby yet.
    primary = start(
        f"{_REPLICATION} -c synchronous_commit=remote_apply" if synchronous else _REPLICATION
    )
    try:
        root = _private_folder()
        _run(
            [
                *_as_owner(),
                str(primary.bindir / "pg_basebackup"),
                "-h",
                "127.0.0.1",
                "-p",
                str(primary.port),
                "-U",
                "postgres",
                "-D",
                str(root / "data"),
                "-R",  # standby.signal and primary_conninfo: it starts as a streaming standby
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ]
        )
        standby = _serve(primary.bindir, root, f"{_REPLICATION} -c cluster_name={STANDBY_NAME}")
    except BaseException:
        stop(primary)
        raise
    pair = Pair(primary, standby)
    try:
        _await_value(primary, _STREAMING, "1", "the standby did not stream")
        if synchronous:
            value(primary, f"ALTER SYSTEM SET synchronous_standby_names = '{STANDBY_NAME}'")
            value(primary, "SELECT pg_reload_conf()")
            _await_value(primary, _SYNCHRONOUS, "1", "the standby did not become synchronous")
    except BaseException:
        stop_pair(pair)
        raise
    return pair


_STREAMING = "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
_SYNCHRONOUS = (
    "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'standby' "
    "AND sync_state = 'sync' AND current_setting('synchronous_commit') = 'remote_apply'"
)


def _await_value(cluster: Cluster, sql: str, expected: str, failure: str) -> None:
    """Wait (bounded) until ``sql`` answers ``expected`` on ``cluster``.

    Raises:
        ClusterError: It has not within the bound, or psql failed.
    """
    deadline = time.monotonic() + _TIMEOUT
    while value(cluster, sql) != expected:
        if time.monotonic() > deadline:
            raise ClusterError(f"{failure} within {_TIMEOUT} s")
        time.sleep(0.05)  # polling a condition, bounded above


def crash(cluster: Cluster) -> None:
    """SIGKILL the server's postmaster (as a power cut would) and wait until it is gone.

    Its backends notice and end on their own, acknowledging nothing more; the folder is kept.

    Raises:
        ClusterError: The server was not running, or its postmaster outlived the bound.
    """
    pid_file = cluster.root / "data" / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError) as exc:
        raise ClusterError(f"no running server in {cluster.root}: {exc}") from exc
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _TIMEOUT
    while _alive(pid):
        if time.monotonic() > deadline:
            raise ClusterError(f"postmaster {pid} outlived SIGKILL for {_TIMEOUT} s")
        time.sleep(0.01)  # polling a condition, bounded above


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody has reaped yet does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def promote(cluster: Cluster) -> None:
    """Promote a standby to primary (``pg_ctl promote``), returning once it takes writes.

    Raises:
        ClusterError: The server is no standby, or did not finish promoting within the bound.
    """
    _run(
        [
            *_as_owner(),
            str(cluster.bindir / "pg_ctl"),
            "-D",
            str(cluster.root / "data"),
            "-w",
            "-t",
            str(_TIMEOUT),
            "promote",
        ]
    )
    _await_value(cluster, "SELECT pg_is_in_recovery()", "f", "the standby did not leave recovery")


def statements(cluster: Cluster, application_name: str) -> list[str]:
    """The statements ``application_name``'s connections ran on ``cluster``, from its log."""
    prefix = f"{application_name}:"
    entries: list[str] = []
    for line in (cluster.root / "server.log").read_text(errors="replace").splitlines():
        if line.startswith("\t") and entries:  # a statement's next line
            entries[-1] += " " + line.strip()
        else:
            entries.append(line)
    # A simple query is logged as "statement: ...", a prepared one as "execute <name>: ...".
    return [
        entry
        for entry in entries
        if entry.startswith(prefix) and ("LOG:  statement:" in entry or "LOG:  execute " in entry)
    ]


def wait_replayed(pair: Pair) -> None:
    """Wait (bounded) until the standby has replayed all the primary has written so far.

    Raises:
        ClusterError: It has not within the bound, or psql failed.
    """
    written = value(pair.primary, "SELECT pg_current_wal_insert_lsn()")
    deadline = time.monotonic() + _TIMEOUT
    while value(pair.standby, f"SELECT pg_last_wal_replay_lsn() >= '{written}'") != "t":
        if time.monotonic() > deadline:
            raise ClusterError(f"the standby did not replay {written} within {_TIMEOUT} s")
        time.sleep(0.01)  # polling a condition, bounded above


def stop_pair(pair: Pair) -> None:
    """Stop both servers (either may have been halted already) and remove their folders."""
    for cluster in (pair.standby, pair.primary):
        with contextlib.suppress(ClusterError):  # a halted server has nothing left to stop
            stop(cluster)


def collect_cut_connections() -> None:
    """Collect what a test that had the server cut connections left behind.

    A connection the server ends mid-query is dropped by SQLAlchemy without asyncpg's own close
    (its socket is already dead), and asyncpg warns when the object is collected, at whatever
    moment: in a later, unrelated test, which the warning would fail. Collected right after the
    test that cut it, the warning about that connection is expected and set aside.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
