"""``thoughtledger.think_external`` and ``think_external_stream``, the model from the environment.

The use case (:func:`thoughtledger.api.think_with_writer`) takes the writer it is given; a Python
user calling ``from thoughtledger import think_external`` need not build one: without a writer,
an :class:`~thoughtledger.adapters.llm.LLMWriter` configured from the environment is opened for the
call and closed after it.
"""

import contextlib
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from thoughtledger.adapters.llm.client import LLMWriter
from thoughtledger.api import (
    DEFAULT_MAX_PROMPT_CHARS,
    DEFAULT_TEMPERATURE,
    Ledger,
    ThinkCommand,
    ThinkOutcome,
    ThoughtWriter,
    stream_with_writer,
    think_with_writer,
)


async def think_external(
    ledger: Ledger,
    session_id: str | None,
    arguments: Mapping[str, Any] | ThinkCommand,
    *,
    writer: ThoughtWriter | None = None,
    use_llm: bool = True,
    model: str | None = None,
    temperature: float | None = DEFAULT_TEMPERATURE,
    clear: bool = False,
    metadata: Mapping[str, str] | None = None,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    owner: str | None = None,
) -> ThinkOutcome:
    """Record the next thought, written by ``writer``, or by the model the environment configures.

    The arguments are :func:`thoughtledger.api.think_with_writer`'s, but ``writer`` may be left out.

    Args:
        ledger: Where the thought is recorded.
        session_id: The session to continue; ``None`` starts a new one.
        arguments: The call's fields (snake_case): ``thought`` is the problem (first thought) or
            guidance (later ones); the others are the new thought's numbers, revision and branch
            fields, as for :meth:`Ledger.think`.
        writer: Who writes; by default an :class:`~thoughtledger.adapters.llm.LLMWriter` configured
            from the environment, opened and closed for this call.
        use_llm: ``False`` records ``thought`` as written (the MCP API reference's manual mode).
        model: A model name or alias (``None``: ``normal``, the MCP API reference's
            ``normal``, ``THOUGHTLEDGER_LLM_MODEL_NORMAL``).
        temperature: Sampling temperature, 0 to 2 (``None``: the model's default).
        clear: Retire ``session_id`` first and start afresh (the model then sees no history).
        metadata: Facts to record if a session starts here.
        max_prompt_chars: Roughly how long the prompt may be, in characters.
        owner: The principal recording (see :meth:`Ledger.think`).

    Returns:
        The outcome; for a generated thought its entry carries ``guidance`` and ``generation``.

    Raises:
        InvalidThoughtError: The arguments break a rule; nothing was asked or appended.
        InvalidInputError: A malformed session id, model or temperature; nothing was appended.
        ProviderNotConfiguredError: The model's provider has no key ("OpenAI API key not
            configured", "OpenRouter API key not configured"); nothing was appended.
        GenerationError: The model could not write the thought ("Failed to generate thought
            with LLM: ..." with the provider's message); nothing was appended.
        StoreError: The store failed; nothing was appended.
    """
    async with contextlib.AsyncExitStack() as stack:
        if writer is None and use_llm:
            # Cheap until it writes: no client library is loaded and no setting read before then.
            writer = await stack.enter_async_context(LLMWriter())
        return await think_with_writer(
            ledger,
            session_id,
            arguments,
            writer=writer,
            use_llm=use_llm,
            model=model,
            temperature=temperature,
            clear=clear,
            metadata=metadata,
            max_prompt_chars=max_prompt_chars,
            owner=owner,
        )


async def think_external_stream(
    ledger: Ledger,
    session_id: str | None,
    arguments: Mapping[str, Any] | ThinkCommand,
    *,
    writer: ThoughtWriter | None = None,
    model: str | None = None,
    temperature: float | None = DEFAULT_TEMPERATURE,
    clear: bool = False,
    metadata: Mapping[str, str] | None = None,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    owner: str | None = None,
) -> AsyncGenerator[str | ThinkOutcome]:
    """The next thought, written by a model: its text in pieces as written, then the outcome.

    The arguments are :func:`thoughtledger.api.stream_with_writer`'s, but ``writer`` may be
    left out (an :class:`~thoughtledger.adapters.llm.LLMWriter` configured from the environment is
    opened for the call). The pieces (``str``) add up to the recorded thought; the last item is
    the :class:`ThinkOutcome`. Close the iterator to stop early (``contextlib.aclosing``):
    nothing is then recorded.

    Raises:
        InvalidThoughtError: The arguments break a rule; nothing was asked or appended.
        InvalidInputError: A malformed session id, model or temperature; nothing was appended.
        ProviderNotConfiguredError: The model's provider has no key; nothing was appended.
        GenerationError: The model could not write the thought, its stream broke, or the
            thought grew past the ledger's limit; nothing was appended.
        StoreError: The store failed; nothing was appended.
    """
    async with contextlib.AsyncExitStack() as stack:
        if writer is None:
            writer = await stack.enter_async_context(LLMWriter())
        items = stream_with_writer(
            ledger,
            session_id,
            arguments,
            writer=writer,
            model=model,
            temperature=temperature,
            clear=clear,
            metadata=metadata,
            max_prompt_chars=max_prompt_chars,
            owner=owner,
        )
        async with contextlib.aclosing(items):
            async for item in items:
                yield item


__all__ = ["think_external", "think_external_stream"]
