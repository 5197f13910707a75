"""``stream_with_writer``: a model's thought given back as it is written, then recorded once.

The use case of :func:`thoughtledger.api.think_with_writer`, as an async iterator: the thought's
text in pieces while the model writes it, then the :class:`ThinkOutcome` once the whole thought
is recorded. The pieces add up to the recorded thought. Nothing is recorded before the last piece
has been given back and the caller has asked for the next item, so a caller that stops early
(closes the iterator, or is cancelled) leaves the ledger as it was.

A writer that can stream (:class:`StreamingWriter`, as
:class:`~thoughtledger.adapters.llm.LLMWriter`)
streams; any other :class:`ThoughtWriter` writes the whole thought, given back as one piece.
The thought is held to the ledger's limit as it arrives: past ``max_thought_bytes`` the stream
stops and nothing is recorded.
"""

import contextlib
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol, runtime_checkable

from thoughtledger.api.errors import GenerationError, ProviderNotConfiguredError
from thoughtledger.api.generation import (
    DEFAULT_TEMPERATURE,
    GENERATION_FAILED,
    NO_WRITER,
    Asked,
    ThoughtWriter,
    WrittenThought,
    masked,
    model_command,
    prepare_generation,
    record_generation,
)
from thoughtledger.api.prompt import DEFAULT_MAX_PROMPT_CHARS, ThoughtPrompt
from thoughtledger.api.recording import ThinkOutcome
from thoughtledger.api.service import Ledger
from thoughtledger.ledger.decide import ThinkCommand, parse_command


@runtime_checkable
class StreamingWriter(Protocol):
    """A :class:`ThoughtWriter` that can also give the thought back as it is written."""

    def stream(
        self,
        prompt: ThoughtPrompt,
        *,
        model: str | None,
        temperature: float | None,
        max_bytes: int,
    ) -> AsyncGenerator[str | WrittenThought]:
        """The thought's text in pieces, then the :class:`WrittenThought` they add up to.

        Raises:
            GenerationError: No thought could be had (the message says why).
        """
        ...


async def stream_with_writer(
    ledger: Ledger,
    session_id: str | None,
    arguments: Mapping[str, Any] | ThinkCommand,
    *,
    writer: ThoughtWriter | None,
    model: str | None = None,
    temperature: float | None = DEFAULT_TEMPERATURE,
    clear: bool = False,
    metadata: Mapping[str, str] | None = None,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    owner: str | None = None,
) -> AsyncGenerator[str | ThinkOutcome]:
    """Have a model write the next thought: its text in pieces (``str``), then the outcome.

    Use it in ``contextlib.aclosing`` so that stopping early closes the model's request::

        async with contextlib.aclosing(stream_with_writer(...)) as items:
            async for item in items:
                if isinstance(item, str):
                    print(item, end="", flush=True)
                else:
                    outcome = item

    The arguments are :func:`thoughtledger.api.think_with_writer`'s (there is no manual mode:
    a thought the caller wrote needs no streaming).

    Raises:
        InvalidThoughtError: The arguments break a rule; nothing was asked or appended.
        InvalidInputError: A malformed session id, model or temperature; nothing was appended.
        ProviderNotConfiguredError: No ``writer`` was given, or the model's provider has no key;
            nothing was appended.
        GenerationError: The model could not write the thought, its stream broke, or its thought
            grew past the ledger's limit ("Failed to generate thought with LLM: ..."); nothing
            was appended.
        StoreError: The store failed; nothing was appended.
    """
    request = (
        arguments
        if isinstance(arguments, ThinkCommand)
        else parse_command(arguments, max_thought_bytes=ledger.max_thought_bytes)
    )
    if writer is None:
        raise ProviderNotConfiguredError(NO_WRITER)
    asked = await prepare_generation(
        ledger, session_id, request, model, temperature, clear=clear, max_chars=max_prompt_chars
    )
    limit = ledger.max_thought_bytes
    given: list[str] = []
    size = 0
    written: WrittenThought | None = None
    try:
        async with contextlib.aclosing(_pieces(writer, asked, limit)) as pieces:
            async for piece in pieces:
                if isinstance(piece, WrittenThought):
                    written = piece
                    break
                size += len(piece.encode("utf-8"))
                given.append(piece)
                if size > limit:
                    model_command(request, "".join(given), limit)  # raises, in the rule's words
                yield piece
    except GenerationError as exc:
        raise masked(exc) from None
    if written is None or written.text != "".join(given):
        raise GenerationError(
            f"{GENERATION_FAILED}: the writer's pieces do not add up to its thought"
        )
    yield await record_generation(
        ledger, session_id, request, written, clear=clear, metadata=metadata, owner=owner
    )


async def _pieces(
    writer: ThoughtWriter, asked: Asked, limit: int
) -> AsyncGenerator[str | WrittenThought]:
    prompt = asked.prompt
    if isinstance(writer, StreamingWriter):
        stream = writer.stream(
            prompt, model=asked.model, temperature=asked.temperature, max_bytes=limit
        )
        async with contextlib.aclosing(stream) as items:
            async for item in items:
                yield item
        return
    written = await writer.write(prompt, model=asked.model, temperature=asked.temperature)
    yield written.text
    yield written


__all__ = ["StreamingWriter", "stream_with_writer"]
