"""Language models writing thoughts: settings, prompts, the client and the use case.

The use case, :mod:`api.llm.external`, is loaded on its own: it needs the facade, which this
client does not.
"""

from api.llm.client import FAILED, LLMWriter, ThoughtWriter, WrittenThought
from api.llm.config import (
    ALIASES,
    OPENAI_KEY_MISSING,
    OPENROUTER_KEY_MISSING,
    Endpoint,
    LLMSettings,
)
from api.llm.prompt import PROMPT_VERSION, ThoughtPrompt, build_prompt, prompt_sha256

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
