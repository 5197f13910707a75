"""A thought field added to the definition, sent through every way in and read from every way out.

Run as a script in a copy of the package whose definition has the field (see
``test_a_field_added_to_the_definition_reaches_every_way_in_and_out``): ``python -P
field_probe.py URL NAME VALUE``, ``VALUE`` as JSON, from a working directory of its own. It
records thoughts carrying ``NAME = VALUE`` through each way in (the MCP tools
``sequentialthinking``, ``sequential_thinking``, ``sequential_thinking_external`` as written and
by a model, ``sequential_thinking_batch``; the in-process tool; the Python API) and writes what
each way out shows of it as one JSON object in :data:`REPORT`. The test reads the SQL views.
"""

import asyncio
import contextlib
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pyarrow.parquet as pq
from mcp import Client

from tests.support.raw_store import raw_store
from thoughtledger import open_ledger
from thoughtledger.adapters.cli import main as cli
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.otel.spans import Conventions, session_spans
from thoughtledger.adapters.tool import PARAMETERS, sequential_thinking_tool
from thoughtledger.adapters.ui.payload import event_json
from thoughtledger.api import ThoughtPrompt, WrittenThought
from thoughtledger.ledger.events import Generation
from thoughtledger.ledger.thought import CAMEL_NAMES

REPORT = "reach.json"
"""Where the probe writes what it found, in its working directory."""

TOOLS = [
    "sequentialthinking",
    "thinking_history",
    "sequential_thinking",
    "sequential_thinking_external",
    "sequential_thinking_batch",
]


def official(number: int, total: int, *, more: bool = True) -> dict[str, Any]:
    """A thought in the official tool's (camelCase) arguments."""
    return {
        "thought": f"official {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": more,
    }


def snake(number: int, total: int, session_id: str) -> dict[str, Any]:
    """A thought in the snake_case tools' arguments."""
    return {
        "thought": f"{session_id} {number}",
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
        "session_id": session_id,
    }


class PromptKeeper:
    """The port a language model sits behind, answering a fixed thought: it keeps each prompt."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def write(
        self, prompt: ThoughtPrompt, *, model: str | None, temperature: float | None
    ) -> WrittenThought:
        self.prompts.append(prompt.body)
        generation = Generation(
            model="probe",
            provider="local",
            prompt_sha256="0" * 64,
            context_version=prompt.context_version,
            structured=False,
            latency_ms=1,
            attempts=1,
        )
        return WrittenThought("written by the model", generation)


def input_schemas(listed: dict[str, Any], camel: str, name: str) -> dict[str, Any]:
    """The field's schema in each thinking tool's input (a batch's inside its item)."""
    batch = listed["sequential_thinking_batch"]
    item = batch["properties"]["thoughts"]["items"]
    if "$ref" in item:
        item = batch["$defs"][item["$ref"].rsplit("/", 1)[-1]]
    return {
        "sequentialthinking": listed["sequentialthinking"]["properties"].get(camel),
        "sequential_thinking": listed["sequential_thinking"]["properties"].get(name),
        "sequential_thinking_external": listed["sequential_thinking_external"]["properties"].get(
            name
        ),
        "sequential_thinking_batch": item["properties"].get(camel),
        "in_process": PARAMETERS["properties"].get(camel),
    }


async def record(url: str, name: str, value: object) -> dict[str, Any]:
    """Record thoughts carrying the field through every way in; read it back from the ledger."""
    camel = CAMEL_NAMES[name]
    out: dict[str, Any] = {}
    boxes: list[str] = []
    writer = PromptKeeper()
    async with open_ledger(url) as ledger:
        server = create_server(ledger, tools=TOOLS, thought_sink=boxes.append, writer=writer)
        async with Client(server) as client:
            listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            out["schemas"] = input_schemas(listed, camel, name)
            done = await client.call_tool("sequentialthinking", {**official(1, 3), camel: value})
            assert done.structured_content is not None, done
            first = done.structured_content["sessionId"]
            await client.call_tool("sequential_thinking", {**snake(1, 1, "snake"), name: value})
            external = {**snake(1, 2, "external"), name: value, "use_llm": False}
            await client.call_tool("sequential_thinking_external", external)
            external = {**snake(2, 2, "external"), name: value, "thought": "guidance"}
            written = await client.call_tool("sequential_thinking_external", external)
            assert not written.is_error, written
            batch = {"thoughts": [{**official(2, 3), camel: value}], "sessionId": first}
            batched = await client.call_tool("sequential_thinking_batch", batch)
            assert not batched.is_error, batched
            read = await client.call_tool("thinking_history", {"sessionId": first})
            assert read.structured_content is not None, read
            out["mcp_history"] = read.structured_content["history"]
        tool = sequential_thinking_tool(ledger)
        answer = await tool.execute({**official(1, 1, more=False), camel: value})
        out["in_process"] = answer["thoughtHistory"]
        session = await ledger.new_session()
        # A mark the checked-in typed arguments do not name (they are the original package's).
        added: dict[str, Any] = {name: value}
        await session.process_sequential_thinking("by the api", 1, 1, False, **added)
        out["api"] = await session.history()
        # On PostgreSQL a reader sees an event once no older transaction is in flight anywhere on
        # the server: wait for the last one, so that the exports below read every thought.
        last = (await session.events())[-1].position
        with anyio.fail_after(30):
            while not await raw_store(ledger).read_all(after_position=last - 1, limit=1):  # noqa: ASYNC110  # polls the server
                await anyio.sleep(0.05)
        out["history"] = list((await ledger.history(first)).items)
        records = await ledger.events(first)
        out["ui"] = [event_json(r).get("f") for r in records if r.event_type != "session.started"]
        spans = session_spans(records, Conventions())
        key = f"thoughtledger.{name}"
        out["spans"] = [s.attributes[key] for s in spans if s.attributes and key in s.attributes]
    out["boxes"] = boxes
    out["prompts"] = writer.prompts
    out["session"] = first
    return out


def command(*arguments: str) -> str:
    """Run the ``thoughtledger`` command line here, as a shell would; return its stdout."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = cli(list(arguments))
    assert code == 0, (arguments, code)
    return printed.getvalue()


def exported(url: str, name: str, session: str, parquet: Path) -> dict[str, Any]:
    """What the command line shows of the field: exports (CSV, Parquet, JSONL) and ``show``."""
    every = ["export", "--db", url, "--all"]
    rows = csv.DictReader(io.StringIO(command(*every, "-o", "-", "--format", "csv")))
    command(*every, "-o", str(parquet), "--format", "parquet")
    table = pq.read_table(parquet)
    lines = [json.loads(line) for line in command(*every, "-o", "-").splitlines()]
    payloads = [json.loads(line["payload"]) for line in lines if "payload" in line]
    return {
        "csv": [row[name] for row in rows],
        "parquet": table.column(name).to_pylist(),
        "parquet_type": str(table.schema.field(name).type),
        "jsonl": [payload[name] for payload in payloads if name in payload],
        "tree": command("show", session, "--db", url),
        "page": command("show", session, "--db", url, "--limit", "10"),
    }


def main() -> None:
    url, name, value = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out = asyncio.run(record(url, name, value))
    out |= exported(url, name, out["session"], Path.cwd() / "thoughts.parquet")
    # A file, not stdout: the library logs there when nothing configured it to go elsewhere.
    (Path.cwd() / REPORT).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
