"""The ``tools/list`` answer is pinned, byte for byte, for every configuration the server offers.

Clients cache tool schemas and models are prompted against their exact words, so a change in
how the tools are built (the thinking tools' signatures are generated from the definition of a
thought) must not move a byte of what they list. Each configuration's answer is serialised as
the SDK writes it on the wire and compared with the SHA-256 recorded when it was last meant to
change; a deliberate change of a schema or a description updates the digest here.
"""

import hashlib
from collections.abc import Sequence

import pytest
from mcp import Client

from thoughtledger.adapters.mcp import create_server
from thoughtledger.adapters.mcp.server import (
    DEFAULT_TOOLS,
    PROFILES,
    TOOL_NAMES,
    DescriptionsName,
)
from thoughtledger.adapters.mcp.tools.context import ProfileName
from thoughtledger.api import Ledger
from thoughtledger.ledger.store.memory import MemoryEventStore

pytestmark = pytest.mark.anyio

TOOL_SETS: dict[str, Sequence[str]] = {
    "default": DEFAULT_TOOLS,
    "all": TOOL_NAMES,
    "official-alone": ("sequentialthinking",),
    "snake": ("sequential_thinking", "sequential_thinking_external", "thinking_history"),
}
"""The tool sets ``serve --tools`` is given in practice: the default, ``all``, the official tool
without the read tool (its description then names none), and the snake_case tools."""

PINNED = {
    "all/compact/full": "e0912d2ab2690bf5573b6fbc1116c5cc8ecdfd805dc156bf0b78ecffba5ae3ab",
    "all/compact/minimal": "13066f0d78d6e943ef2d5c6dbc423fe7bfd6383937ac54855e9c8b760105dca7",
    "all/compact/official": "1d5f61d3b203139ad30e9889c426419acb83fd047e48f6f3dd4c0efaeec2dc28",
    "all/official/full": "601362cab553fa2fe05832437f52e6c81bb5d2da699e069e425c68a4938bd7e8",
    "all/official/minimal": "587442c8cf01533a4672f0d9a07730fc4cb1dc80f71a1816b166b71814801db1",
    "all/official/official": "c7cdfd8adef98a4ec897aff091426a4fc3276a1461f43c8ab8a50d369e6d2bac",
    "default/compact/full": "618d81e6de277114543be4c747ec765d10022961ec0a68f26c52653bc9425fae",
    "default/compact/minimal": "bd8f9e02e715c7f9b3a329cea87370391059907baa00053392ad1cdbd32340c7",
    "default/compact/official": "2f9b9043ddd3233fa1b44d9b31f7bce0ef99da81dc7d6e74d516729bbc8d4491",
    "default/official/full": "83245840f253ea63687b4308631174af347d3dd9e258bbee87fede80ad16a4db",
    "default/official/minimal": "1dbd07d6e02b13603e666f7db110fb7b347b84793edfdb38ca7d52513a047d2b",
    "default/official/official": "97855baec2f716089deda70b0e2c2eefaa898fa094649ee4650dee3ec905d70d",
    "official-alone/compact/full": (
        "d928f22a147c15d8712d248c513be94bea1e6b2c48e65dec38b8dfa9eaf0137e"
    ),
    "official-alone/compact/minimal": (
        "dca546f775a82807b44b3435d7f0d607ef1c7f3fb21d15ca56ad8d8fbfbabd29"
    ),
    "official-alone/compact/official": (
        "97561aa847b350b7e60e32841a7755f66c150d81f53f329dc0717865dbd1e952"
    ),
    "official-alone/official/full": (
        "e395e21575510449737371c1288f06996a8d714221586a6b8ac69cf069748163"
    ),
    "official-alone/official/minimal": (
        "aec92c177201dfa9462637e4ad7dc18737209850661cadf2ac49d132098bc42c"
    ),
    "official-alone/official/official": (
        "01c034347c51d74f3699521dcd805ff57727498195522eaddd9842e0da3a5e32"
    ),
    "snake/compact/official": "57022dd745ad803888404b968c4409fd0129fb5fe840f638507e7b4649861f43",
    "snake/official/official": "57022dd745ad803888404b968c4409fd0129fb5fe840f638507e7b4649861f43",
}
"""Each configuration's ``tools/list`` digest: ``tools/descriptions/profile``. The snake_case
tools do not depend on the profile (it shapes ``sequentialthinking``'s answer only)."""

DESCRIPTION_SETS: tuple[DescriptionsName, ...] = ("official", "compact")


async def listed_bytes(tools: Sequence[str], descriptions: DescriptionsName, profile: str) -> bytes:
    """The ``tools/list`` result as the SDK serialises it on the wire (aliases, no nulls)."""
    chosen: ProfileName = next(name for name in PROFILES if name == profile)
    ledger = Ledger(MemoryEventStore())
    try:
        server = create_server(ledger, tools=tools, descriptions=descriptions, profile=chosen)
        async with Client(server) as client:
            result = await client.list_tools()
    finally:
        await ledger.aclose()
    return result.model_dump_json(by_alias=True, exclude_none=True).encode()


@pytest.mark.parametrize("configuration", sorted(PINNED))
async def test_tools_list_is_byte_for_byte_what_it_was(configuration: str) -> None:
    tools, descriptions, profile = configuration.split("/")
    assert descriptions in DESCRIPTION_SETS
    listed = await listed_bytes(
        TOOL_SETS[tools], "compact" if descriptions == "compact" else "official", profile
    )
    assert hashlib.sha256(listed).hexdigest() == PINNED[configuration], configuration


def test_every_profile_and_description_style_is_pinned() -> None:
    for tools in TOOL_SETS:
        if tools == "snake":
            continue
        for descriptions in DESCRIPTION_SETS:
            for profile in PROFILES:
                assert f"{tools}/{descriptions}/{profile}" in PINNED
