"""Language models writing thoughts: the provider client behind the facade's ``ThoughtWriter``.

The use case and the prompt live in the facade (:func:`thoughtledger.api.think_with_writer`,
:mod:`thoughtledger.api.prompt`); here are the settings, the client that implements the
port (:class:`LLMWriter`) and how its answers are read. ``thoughtledger.think_external``
(:mod:`thoughtledger.adapters.llm.external`) is loaded on its own: it supplies this client by
default.
"""

from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.adapters.llm.config import (
    ALIASES,
    OPENAI_KEY_MISSING,
    OPENROUTER_KEY_MISSING,
    Endpoint,
    LLMSettings,
)

__all__ = [
    "ALIASES",
    "OPENAI_KEY_MISSING",
    "OPENROUTER_KEY_MISSING",
    "Endpoint",
    "LLMSettings",
    "LLMWriter",
]
