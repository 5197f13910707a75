"""An adapter whose framework is absent says which extra to install, not which module is missing.

The framework is made absent the way Python itself reports one (``None`` in ``sys.modules``
makes its import fail); the clean-install stage checks the same in an environment that never
had it.
"""

import sys
from collections.abc import Callable

import pytest

from thoughtledger import Ledger
from thoughtledger.adapters.tool import SequentialThinkingTool, sequential_thinking_tool
from thoughtledger.adapters.tool.frameworks import (
    langchain_tool,
    openai_agents_tool,
    pydantic_ai_tool,
)

pytestmark = pytest.mark.anyio

Adapter = Callable[[SequentialThinkingTool], object]


@pytest.mark.parametrize(
    ("adapter", "framework", "extra"),
    [
        (openai_agents_tool, "agents", "openai-agents"),
        (pydantic_ai_tool, "pydantic_ai", "pydantic-ai"),
        (langchain_tool, "langchain_core", "langchain"),
    ],
)
async def test_an_adapter_without_its_framework_names_the_extra_to_install(
    ledger: Ledger,
    monkeypatch: pytest.MonkeyPatch,
    adapter: Adapter,
    framework: str,
    extra: str,
) -> None:
    # Its submodules too: one already imported (by another test) would be found without it.
    for name in [name for name in sys.modules if name.split(".")[0] == framework] or [framework]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, framework, None)
    with pytest.raises(ImportError) as raised:
        adapter(sequential_thinking_tool(ledger))
    message = str(raised.value)
    assert message.endswith(f"pip install 'thoughtledger[{extra}]'")
    assert message.startswith(f"{adapter.__name__} needs ")
    assert str(raised.value.name).split(".")[0] == framework  # what is really missing
