"""Language models writing thoughts: settings, prompts, the client and the use case.

The use case, :mod:`thoughtledger.api.llm.external`, is loaded on its own: it needs the facade,
which this client does not.
"""

from thoughtledger.api.llm.client import FAILED, LLMWriter, ThoughtWriter, WrittenThought
from thoughtledger.api.llm.config import (
    ALIASES,
    OPENAI_KEY_MISSING,
    OPENROUTER_KEY_MISSING,
    Endpoint,
    LLMSettings,
)
from thoughtledger.api.llm.prompt import PROMPT_VERSION, ThoughtPrompt, build_prompt, prompt_sha256

__all__ = [
    "ALIASES",
    "FAILED",
    "OPENAI_KEY_MISSING",
    "OPENROUTER_KEY_MISSING",
    "PROMPT_VERSION",
    "Endpoint",
    "LLMSettings",
    "LLMWriter",
    "ThoughtPrompt",
    "ThoughtWriter",
    "WrittenThought",
    "build_prompt",
    "prompt_sha256",
]
