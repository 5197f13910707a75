"""Argument coercion side by side with the official server: the same calls, the same verdicts.

The official ``@modelcontextprotocol/server-sequential-thinking`` (Node, zod) runs next to ours,
each over one stdio connection for the whole module; hypothesis generates the arguments (numbers
as JavaScript's ``Number()`` reads them, or not; flags spelled every way) and each call must be
accepted by both or refused by both, with the same coerced numbers and flags in the answer.

The package is installed with npm into a cache directory on first use; the test is skipped only
where node or npm is missing. The deliberate differences (booleans and arrays as numbers, null for
an optional argument; see :mod:`thoughtledger.ledger.thought_types`) are not generated:
tests/unit/test_coercion.py pins them.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lines import INITIALIZED, initialize
from tests.support.mcp import OFFICIAL_TOOLS_LIST_BYTES, TOOLS_LIST_BUDGET, listed_bytes
from tests.support.processes import ROOT, WAIT, child_env

Json = dict[str, Any]

OFFICIAL_PACKAGE = "@modelcontextprotocol/server-sequential-thinking"
OFFICIAL_VERSION = "2026.8.31"  # pinned, so a new release cannot fail an unrelated change
CACHE_ENV = "THOUGHTLEDGER_TEST_CACHE"
"""Where test downloads are kept (default: ~/.cache/thoughtledger-tests)."""


def official_server() -> Path:
    """The official server's ``dist/index.js``, installed into the cache on first use."""
    explicit = os.environ.get("THOUGHTLEDGER_OFFICIAL_SERVER")  # as tools/bench reads it
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "thoughtledger-tests")
    home = cache / f"server-sequential-thinking-{OFFICIAL_VERSION}"
    script = home / "node_modules" / OFFICIAL_PACKAGE / "dist" / "index.js"
    if script.exists():
        return script
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the official server to compare with cannot be fetched")
    staging = cache / f".installing-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    installed = subprocess.run(  # noqa: S603  # npm from PATH, a fixed package and version
        [
            npm,
            "install",
            "--prefix",
            str(staging),
            "--no-audit",
            "--no-fund",
            "--silent",
            f"{OFFICIAL_PACKAGE}@{OFFICIAL_VERSION}",
        ],
        check=False,
        timeout=600,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    assert installed.returncode == 0, f"npm install failed: {installed.stderr.decode()[-2000:]}"
    try:
        staging.rename(home)  # whole or not at all, even with several test runs at once
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # another run installed it first
    return script


class Peer:
    """One MCP server over stdio, driven by raw JSON-RPC lines; answers matched by id."""

    def __init__(self, command: list[str]) -> None:
        env = child_env(DISABLE_THOUGHT_LOGGING="true")
        self.process = subprocess.Popen(  # noqa: S603  # our interpreter, or node on a fixed script
            command,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._buffer = b""
        self._next_id = 0

    def send(self, messages: list[Json]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.process.stdin.flush()

    def receive(self, ids: set[int]) -> dict[int, Json]:
        """Read until every id in ``ids`` is answered (each within :data:`WAIT` seconds)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        answers: dict[int, Json] = {}
        deadline = time.monotonic() + WAIT
        while not ids <= answers.keys():
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") in ids:
                    answers[message["id"]] = message
            if ids <= answers.keys():
                break
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer within {WAIT} s; still waiting for {ids - answers.keys()}"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server closed stdout"
            self._buffer += chunk
        return answers

    def handshake(self) -> None:
        self.send([initialize("parity")])
        self.receive({0})
        self.send([INITIALIZED])

    def request(self, method: str) -> Json:
        """Send one request without parameters; return its result."""
        self._next_id += 1
        self.send([{"jsonrpc": "2.0", "id": self._next_id, "method": method}])
        result: Json = self.receive({self._next_id})[self._next_id]["result"]
        return result

    def calls(self, batch: list[Json]) -> list[Json]:
        """Send every call in ``batch`` at once; return the answers in the same order."""
        ids = list(range(self._next_id + 1, self._next_id + 1 + len(batch)))
        self._next_id += len(batch)
        self.send(
            [
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": {"name": "sequentialthinking", "arguments": arguments},
                }
                for request_id, arguments in zip(ids, batch, strict=True)
            ]
        )
        answers = self.receive(set(ids))
        return [answers[request_id] for request_id in ids]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(WAIT)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture(scope="module")
def peers() -> Iterator[tuple[Peer, Peer]]:
    """Theirs and ours, each on one stdio connection, both shaken hands."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the official server cannot run")
    script = official_server()
    theirs = Peer([node, str(script)])
    ours = Peer(
        [
            sys.executable,
            "-m",
            "thoughtledger.adapters.cli",
            "serve",
            "--db",
            "memory://",
            "--tools",
            "sequentialthinking",
        ]
    )
    try:
        theirs.handshake()
        ours.handshake()
        yield theirs, ours
    finally:
        theirs.close()
        ours.close()


def verdict(answer: Json) -> Json | None:
    """What a call came to: the coerced numbers and flag, or ``None`` when it was refused."""
    result = answer.get("result")
    if result is None or result.get("isError"):
        return None
    content = result["structuredContent"]
    return {key: content[key] for key in ("thoughtNumber", "totalThoughts", "nextThoughtNeeded")}


# -- generated arguments ------------------------------------------------------------------------

JS_WHITE_SPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# White space to Python (str.strip) or to no one, but not to JavaScript's Number().
NOT_JS_WHITE_SPACE = "\x1c\x1d\x1e\x1f\x85\u180e\u200b\x00\x08"
DIGITS = "0123456789"
OTHER_DIGITS = "\u0663\uff13\u0ed3\U0001d7d1\u00b3\u00bd\u2463"  # Arabic-Indic, fullwidth...

padding = st.text(st.sampled_from(JS_WHITE_SPACE + NOT_JS_WHITE_SPACE), max_size=2)
digits = st.text(st.sampled_from(DIGITS), min_size=1, max_size=4) | st.text(
    st.sampled_from(DIGITS + OTHER_DIGITS + "_"), min_size=1, max_size=3
)
sign = st.sampled_from(["", "", "+", "-"])
decimal = st.builds(
    lambda s, whole, point, fraction, exponent: s + whole + point + fraction + exponent,
    sign,
    digits | st.just(""),
    st.sampled_from(["", "", "."]),
    st.just("") | digits,
    st.just("") | st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"), sign, digits),
)
radix = st.builds(
    lambda s, prefix, body: s + prefix + body,
    st.sampled_from(["", "", "-", "+"]),
    st.sampled_from(["0x", "0X", "0o", "0O", "0b", "0B"]),
    st.text(st.sampled_from("0123456789abcdefABCDEF"), min_size=0, max_size=4),
)
named = st.sampled_from(
    ["Infinity", "-Infinity", "+Infinity", "infinity", "NaN", "", "1e400", "null", "[3]", "true"]
)
numerals = st.builds(
    lambda before, body, after: before + body + after,
    padding,
    decimal | radix | named | st.integers(0, 2**56).map(str),
    padding,
)
whole_numbers = st.integers(-3, 40) | st.integers(2**53 - 3, 2**53 + 3) | st.integers(0, 2**64)
numbers = (
    whole_numbers
    | st.floats(allow_nan=False, allow_infinity=False)
    | whole_numbers.map(float)
    | numerals
    | st.text(max_size=4)
)


def _spelled(word: str) -> st.SearchStrategy[str]:
    cases = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
    return cases.map(
        lambda up: "".join(c.upper() if u else c for c, u in zip(word, up, strict=True))
    )


flags = (
    st.booleans()
    | _spelled("true")
    | _spelled("false")
    | st.sampled_from(["yes", "on", "1", "0", "", "tru", "\u0442rue", " true", "false\n", "null"])
    | st.integers(-1, 2)
    | st.text(max_size=4)
)


REQUIRED = {
    "thoughtNumber": numbers | st.none(),
    "totalThoughts": numbers | st.none(),
    "nextThoughtNeeded": flags | st.none(),
}
# Absent or present; never null (for an optional argument a deliberate difference).
OPTIONAL = {
    "revisesThought": numbers,
    "branchFromThought": numbers,
    "isRevision": flags,
    "needsMoreThoughts": flags,
}
calls = st.fixed_dictionaries({"thought": st.just("same for both"), **REQUIRED}, optional=OPTIONAL)
"""The arguments of one ``sequentialthinking`` call."""


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(batch=st.lists(calls, min_size=60, max_size=100))
def test_generated_arguments_get_the_official_servers_verdict(
    peers: tuple[Peer, Peer], batch: list[Json]
) -> None:
    theirs, ours = peers
    their_answers, our_answers = theirs.calls(batch), ours.calls(batch)
    for arguments, their_answer, our_answer in zip(batch, their_answers, our_answers, strict=True):
        assert verdict(our_answer) == verdict(their_answer), (arguments, their_answer, our_answer)


@pytest.mark.parametrize(
    "number",
    [1e30, 2**53 + 1, 2**53, 2**53 - 1, 1e16, "1e30", str(2**53 + 1), "9007199254740991.0"],
)
def test_numbers_past_the_safe_range_get_the_same_verdict(
    peers: tuple[Peer, Peer], number: float | int | str
) -> None:
    # zod's int() stops at 2**53 - 1, however the number is written; so does LaxCount.
    theirs, ours = peers
    for field in ("thoughtNumber", "totalThoughts"):
        arguments = {
            "thought": "t",
            "thoughtNumber": 1,
            "totalThoughts": 1,
            "nextThoughtNeeded": True,
            field: number,
        }
        (their_answer,) = theirs.calls([arguments])
        (our_answer,) = ours.calls([arguments])
        assert verdict(our_answer) == verdict(their_answer), (field, number)


def test_the_default_tools_list_costs_at_most_the_budget_against_the_officials(
    peers: tuple[Peer, Peer],
) -> None:
    theirs, _ = peers
    ours = Peer([sys.executable, "-m", "thoughtledger.adapters.cli", "serve", "--db", "memory://"])
    try:
        ours.handshake()
        our_bytes = listed_bytes(ours.request("tools/list"))
    finally:
        ours.close()
    their_bytes = listed_bytes(theirs.request("tools/list"))
    assert their_bytes == OFFICIAL_TOOLS_LIST_BYTES  # the figure tools/bench uses without node
    assert our_bytes <= TOOLS_LIST_BUDGET * their_bytes, (our_bytes, their_bytes)
