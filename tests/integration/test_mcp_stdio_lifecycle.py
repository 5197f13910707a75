"""The stdio server as ``cat requests.jsonl | thoughtledger serve`` runs it: a whole file, then EOF.

Each test writes its requests to a real subprocess's stdin in one go and closes it, on both stdio
transports (our pipe transport, and the SDK's with ``THOUGHTLEDGER_STDIO=sdk``); every byte the
server writes must be a JSON-RPC message, and the ledger file is read back afterwards.
"""

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.lines import INITIALIZED, initialize
from tests.support.mcp import Json
from tests.support.processes import ROOT, WAIT, child_env, serve_command, sqlite_in
from thoughtledger import open_ledger

pytestmark = pytest.mark.anyio

TRANSPORTS = ["pipes", "sdk"]


def call(request_id: int, tool: str, arguments: Json) -> Json:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def thought(number: int, total: int, **extra: Any) -> Json:
    return {
        "thought": f"piped thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
        **extra,
    }


async def served(db: str, lines: list[str], transport: str) -> tuple[list[Json], str]:
    """Pipe ``lines`` into a fresh server, close stdin, and return its messages and stderr."""
    with anyio.fail_after(WAIT):
        done = await anyio.run_process(
            serve_command(db),
            input="".join(line + "\n" for line in lines).encode(),
            cwd=ROOT,
            env=child_env(THOUGHTLEDGER_STDIO=transport),
            check=False,
        )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, stderr
    messages = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert all(message["jsonrpc"] == "2.0" for message in messages)
    return messages, stderr


async def recorded_thoughts(db: str) -> list[str]:
    async with open_ledger(db, ttl=None) as ledger:
        sessions = await ledger.list_sessions()
    return sorted(entry.thought for state in sessions for entry in state.thoughts)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_request_piped_before_eof_is_answered_once_and_recorded(
    tmp_path: Path, transport: str
) -> None:
    db = sqlite_in(tmp_path)
    count = 12
    requests = [initialize("piped-client"), INITIALIZED]
    requests += [call(n, "sequentialthinking", thought(n, count)) for n in range(1, count + 1)]
    requests.append(call(count + 1, "thinking_history", {}))

    messages, stderr = await served(db, [json.dumps(r) for r in requests], transport)

    answered = Counter(message.get("id") for message in messages)
    assert answered == Counter(range(count + 2)), stderr  # each id, exactly once
    errors = [message for message in messages if "error" in message]
    assert errors == []  # no "Connection closed" for a call cut short by EOF
    results = {message["id"]: message["result"] for message in messages}
    assert all(results[n]["isError"] is False for n in range(1, count + 2))
    assert await recorded_thoughts(db) == sorted(f"piped thought {n}" for n in range(1, count + 1))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_request_the_client_cancelled_does_not_hold_the_exit(
    tmp_path: Path, transport: str
) -> None:
    cancel: Json = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "changed my mind"},
    }
    requests = [
        initialize("piped-client"),
        INITIALIZED,
        call(1, "sequentialthinking", thought(1, 2)),
        call(2, "sequentialthinking", thought(2, 2)),
        cancel,
    ]

    messages, _ = await served(sqlite_in(tmp_path), [json.dumps(r) for r in requests], transport)

    answered = Counter(message.get("id") for message in messages)
    assert answered[0] == answered[1] == 1
    assert answered[2] <= 1  # answered if it finished before the cancel arrived, never twice


# Written by hand: json.dumps would escape the surrogate itself, and the escape is the point.
SURROGATE_ARGUMENTS = {
    "thought": r'{"thought": "a\ud800b", "thoughtNumber": 1, "totalThoughts": 2, '
    r'"nextThoughtNeeded": true}',
    "branchId": r'{"thought": "t", "thoughtNumber": 2, "totalThoughts": 2, '
    r'"nextThoughtNeeded": false, "branchFromThought": 1, "branchId": "\udc00x"}',
    "sessionId": r'{"thought": "t", "thoughtNumber": 1, "totalThoughts": 2, '
    r'"nextThoughtNeeded": true, "sessionId": "s\ud83d"}',
}
CALL = r'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
CALL += r'"params": {"name": "sequentialthinking", "arguments": %s}}'


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_lone_surrogate_is_refused_by_field_name_and_nothing_is_recorded(
    tmp_path: Path, transport: str
) -> None:
    db = sqlite_in(tmp_path)
    # A lone surrogate outside a tool's arguments (here the client's name) is kept as its escape.
    opening = json.dumps(initialize("piped CLIENT")).replace("CLIENT", r"\udfff")
    lines = [opening, json.dumps(INITIALIZED)]
    lines += [
        CALL % (request_id, arguments)
        for request_id, arguments in enumerate(SURROGATE_ARGUMENTS.values(), start=1)
    ]
    # A surrogate pair is one valid character: stored as sent.
    lines.append(
        CALL
        % (
            9,
            r'{"thought": "pair \ud83d\ude00", "thoughtNumber": 1, '
            r'"totalThoughts": 1, "nextThoughtNeeded": false}',
        )
    )

    messages, stderr = await served(db, lines, transport)

    by_id = {message["id"]: message for message in messages}
    assert set(by_id) == {0, 1, 2, 3, 9}, stderr  # never -32700 with id null
    for request_id, field in enumerate(SURROGATE_ARGUMENTS, start=1):
        result = by_id[request_id]["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith(
            f"Invalid sequential thinking params: {field}: contains a lone surrogate (\\u"
        ), result
    assert by_id[9]["result"]["isError"] is False, by_id[9]
    assert await recorded_thoughts(db) == ["pair \U0001f600"]
