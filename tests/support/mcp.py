"""MCP clients in this process: the server on a ledger, in either protocol era, and its calls."""

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, cast

from mcp import Client
from mcp.types import CallToolResult, RequestParamsMeta, TextContent, TextResourceContents

from tests.support.raw_store import raw_store
from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.mcp.server import WriterFactory
from thoughtledger.adapters.mcp.tools.context import ProfileName, RunsName
from thoughtledger.adapters.mcp.tools.render import ThoughtSink
from thoughtledger.api import AGENT_META_KEY
from thoughtledger.api.service import Ledger

Mode = Literal["auto", "legacy"]
Json = dict[str, Any]

OFFICIAL_TOOLS_LIST_BYTES = 4_775
"""The official server's ``tools/list`` result (2026.8.31, the version the parity tests pin) as
:func:`listed_bytes` measures it; ``test_official_parity.py`` measures it again where node runs."""

TOOLS_LIST_BUDGET = 1.5
"""Most the default ``tools/list`` may cost against the official server's: every conversation
pays it."""


def listed_bytes(result: Json) -> int:
    """The size of a ``tools/list`` result, one measure for every server: JSON as Python writes
    it by default (``", "`` and ``": "`` separators), UTF-8 text unescaped."""
    return len(json.dumps(result, ensure_ascii=False).encode())


@asynccontextmanager
async def connect(
    ledger: Ledger,
    mode: Mode,
    *,
    profile: ProfileName = "official",
    tools: Sequence[str] = ("sequentialthinking", "thinking_history"),
    thought_sink: ThoughtSink | None = None,
    runs: RunsName = "separate",
    open_writer: WriterFactory | None = None,
) -> AsyncIterator[Client]:
    server = create_server(
        ledger,
        profile=profile,
        tools=tools,
        thought_sink=thought_sink,
        runs=runs,
        open_writer=open_writer,
    )
    async with Client(server, mode=mode) as client:
        yield client


def thought(number: int, total: int = 3, *, more: bool = True, **extra: Any) -> Json:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": more,
        **extra,
    }


def agent_meta(name: object) -> RequestParamsMeta:
    """A request's ``_meta`` naming its agent ``name`` (as a caller's SDK sends it)."""
    # RequestParamsMeta is an open TypedDict (extra_items=Any), which mypy does not model yet.
    return cast(RequestParamsMeta, {AGENT_META_KEY: name})


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def call(client: Client, tool: str, arguments: Json) -> Json:
    """Call a tool that must succeed; its text must be the structured content, pretty-printed."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, text_of(result)
    structured: Json | None = result.structured_content
    assert structured is not None
    assert text_of(result) == json.dumps(structured, indent=2, ensure_ascii=False)
    return structured


async def think(client: Client, arguments: Json) -> Json:
    return await call(client, "sequentialthinking", arguments)


async def refused(client: Client, tool: str, arguments: Json) -> str:
    """Call a tool that must refuse; return the message the model reads."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    assert result.structured_content is None
    return text_of(result)


async def event_count(ledger: Ledger) -> int:
    return len(await raw_store(ledger).read_all(limit=10_000))


async def resource_text(client: Client, uri: str) -> Json:
    """The JSON document a text resource holds."""
    contents = (await client.read_resource(uri)).contents
    assert isinstance(contents[0], TextResourceContents)
    document: Json = json.loads(contents[0].text)
    return document
