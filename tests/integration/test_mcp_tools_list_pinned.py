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

from thoughtledger.api import Ledger
from thoughtledger.api.mcp import create_server
from thoughtledger.api.mcp.context import ProfileName
from thoughtledger.api.mcp.server import (
    DEFAULT_TOOLS,
    PROFILES,
    TOOL_NAMES,
    DescriptionsName,
)
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
    "default/official/minimal": (
        "406bbc519228a60880ad1031eb2466a757b9a352385f07feb0e4ea79321ad3f0"
    ),
    "default/official/official": (
        "49645d3a56a28c622924a03d8858049598550ffeabc06948b71d3e5ce1b4f870"
    ),
    "default/official/full": ("d8c51b53b2f73121e259be1405b92510ff2f6d50809bb2438eec5f2e7ee38716"),
    "default/compact/minimal": ("940942c806bdd479dff606216bda48cadf86d8e609ae889825a89ade3ac00ba8"),
    "default/compact/official": (
        "1176dd037af643b34808d8dc3ade75da181f2ae978c5e22da85469a2b71c7a18"
    ),
    "default/compact/full": ("e0c1478bff9ffff337f7f29c9c916a4ec9688feaebed8695a088d117e3947ebe"),
    "all/official/minimal": ("e0014913d64fcfa49fe9529ffe985b49ff00badf8dac2d1ca558c6e2f155cace"),
    "all/official/official": ("11701faf9792e58b2f1d460705e95ac1c2ca08c1d84992ee05c88049e8145542"),
    "all/official/full": ("9cefff3ed7c023bf0512e9c128bdac3426b65255e50310c87d7de82aa576e752"),
    "all/compact/minimal": ("92a75d6cfa91f168867b82d83a7768d0c57a168e0a5104de10267403ad4d7da2"),
    "all/compact/official": ("0d457b75294cdfa93d0ab73d5d8f3521d425260514bb9105b73d44352409eefc"),
    "all/compact/full": "c836c7f13b2c13a5410d1cad6bfe08d50a3cb393846d2f664b217a1cc759db3b",
    "official-alone/official/minimal": (
        "373c20cf9e2ae7ecddfb7e51cba49c34b741652d96d657d6868db3ed0135c369"
    ),
    "official-alone/official/official": (
        "45e83f9ef29507910da90cd988e28d4a4e47de28dd26676c674850432f3a180e"
    ),
    "official-alone/official/full": (
        "b7b6a7c9c0f7716f1ff52482155d082140010367cb20511aa09fbd821e5ccb6d"
    ),
    "official-alone/compact/minimal": (
        "54e962b3768261d68897d08d18213906966d41d07645b31b117f7225186e8ce2"
    ),
    "official-alone/compact/official": (
        "673867e2f27f6bba442f397f893d1ca1c9a0a9736658a1d6de7b2d346754e697"
    ),
    "official-alone/compact/full": (
        "f007ee076ae100ce2740c1bf98b2ab169d0b9ab8085c1f15704597af57ab6d80"
    ),
    "snake/official/official": ("bcef9a53886d3a9686215853a30c846dbc173e9c251132bcdec1455675558dd4"),
    "snake/compact/official": ("bcef9a53886d3a9686215853a30c846dbc173e9c251132bcdec1455675558dd4"),
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
