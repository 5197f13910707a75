"""One streamed attempt: ask with ``stream: true``, give back the thought as it is written.

The request is the one :class:`~thoughtledger.adapters.llm.LLMWriter` sends, plus ``stream: true``
and ``stream_options.include_usage`` (so the last event reports the tokens). The body is read as
server-sent events (:mod:`thoughtledger.adapters.llm.sse`) as it arrives; each event's
``delta.content`` goes through :class:`~thoughtledger.adapters.llm.partial.ThoughtStream`, and the
thought's new text is given back at once. At the end the whole answer is read exactly as a
non-streamed one is (:func:`~thoughtledger.adapters.llm.answer.read_completion`), so confidence,
hint, tokens and cost mean the same.

The thought recorded is always the text given back, so the pieces add up to it: when the answer
holds no thought to stream (the model wrote something other than the JSON asked for, and its
whole text is the thought) that text is given back in one piece at the end.

Bounds: the answer (what the model writes) may be at most ``max_bytes`` plus
:data:`ANSWER_ALLOWANCE`; an event line at most :data:`LINE_FACTOR` times that (a server may
send the whole answer, escaped, in one event); the whole stream at most :data:`STREAM_FACTOR`
times that (providers wrap each token in a few hundred bytes); and the attempt ends after
``timeout`` seconds in all, not only without news.
"""

import json
from collections.abc import AsyncGenerator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio

from thoughtledger.adapters.llm.answer import Answer, Failure, read_completion
from thoughtledger.adapters.llm.partial import ThoughtStream
from thoughtledger.adapters.llm.sse import StreamTooLarge, sse_data

if TYPE_CHECKING:
    import openai

ANSWER_ALLOWANCE = 64 * 1024
"""Room for what a structured answer holds besides the thought (its JSON, confidence, hint)."""
LINE_FACTOR = 8
STREAM_FACTOR = 256


async def stream_attempt(
    client: "openai.AsyncOpenAI",
    request: Mapping[str, Any],
    *,
    structured: bool,
    max_bytes: int,
    timeout: float,  # noqa: ASYNC109  # a deadline for the whole stream, not one await
) -> AsyncGenerator[str | Answer | Failure]:
    """Ask once with ``stream: true``: the thought's pieces, then an :class:`Answer` or a Failure.

    Args:
        client: The endpoint's client.
        request: ``chat.completions.create``'s arguments, ``stream`` aside.
        structured: Whether a structured answer was asked for.
        max_bytes: The longest thought the caller will record, in UTF-8 bytes.
        timeout: Seconds the whole attempt may take.

    Raises:
        openai.APIStatusError: The endpoint refused the request (before anything was given).
        openai.APIConnectionError: The endpoint could not be reached (likewise).
    """
    import httpx2  # the openai client's HTTP library, deferred with it

    answer_cap = max_bytes + ANSWER_ALLOWANCE
    deadline = anyio.current_time() + timeout
    reader = ThoughtStream(structured=structured)
    content: list[str] = []
    size = 0
    last: dict[str, Any] = {}
    usage: object = None
    finish_reason: object = None
    refusal = ""
    responses = client.chat.completions.with_streaming_response
    async with responses.create(**request, stream=True) as response:
        events = sse_data(
            response.iter_bytes(),
            max_line_bytes=LINE_FACTOR * answer_cap,
            max_total_bytes=STREAM_FACTOR * answer_cap,
        )
        try:
            while True:
                with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                    event = await anext(events, None)
                if event is None:
                    break
                chunk = _object(event)
                if chunk is None:
                    yield Failure("malformed answer from the provider: an event is not JSON", True)
                    return
                if isinstance(error := chunk.get("error"), dict | str):
                    said = error.get("message") if isinstance(error, dict) else error
                    yield Failure(f"the provider reported: {said}", retryable=True)
                    return
                last = chunk
                usage = chunk.get("usage") or usage
                delta, reason = _delta(chunk)
                finish_reason = reason or finish_reason
                if isinstance(said := delta.get("refusal"), str):
                    refusal += said
                piece = delta.get("content")
                if not isinstance(piece, str) or not piece:
                    continue
                size += len(piece.encode("utf-8"))
                if size > answer_cap:
                    yield Failure(f"the answer is longer than {answer_cap} bytes", False)
                    return
                content.append(piece)
                if text := reader.feed(piece):
                    yield text
        except TimeoutError:
            yield Failure(f"no complete answer within {timeout:g} s", retryable=True)
            return
        except StreamTooLarge as exc:
            yield Failure(str(exc), retryable=False)
            return
        except httpx2.HTTPError as exc:
            yield Failure(f"connection lost: {exc or type(exc).__name__}", retryable=True)
            return
        finally:
            await events.aclose()
    read = _read("".join(content), refusal, last, usage, finish_reason, structured)
    if isinstance(read, Failure) or read.thought == reader.text:
        yield read
        return
    if reader.text:
        # What was given back stands: the rest of the answer did not hold together around it.
        read = replace(read, thought=reader.text, structured=False)
        read = replace(read, confidence=None, reasoning_hint=None)
    else:
        yield read.thought
    yield read


def _object(event: str) -> dict[str, Any] | None:
    try:
        value = json.loads(event)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _delta(chunk: Mapping[str, Any]) -> tuple[Mapping[str, Any], object]:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return {}, None
    delta = choices[0].get("delta")
    return (delta if isinstance(delta, dict) else {}), choices[0].get("finish_reason")


def _read(
    content: str,
    refusal: str,
    last: Mapping[str, Any],
    usage: object,
    finish_reason: object,
    structured: bool,
) -> Answer | Failure:
    """The streamed answer read as the same answer would be, had it come whole."""
    from openai.types.chat import ChatCompletion  # deferred with the client

    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal:
        message["refusal"] = refusal
    completion = ChatCompletion.construct(
        id=last.get("id"),
        model=last.get("model"),
        object="chat.completion",
        created=last.get("created"),
        choices=[{"index": 0, "message": message, "finish_reason": finish_reason}],
        usage=usage if isinstance(usage, dict) else None,
    )
    return read_completion(completion, structured=structured)


__all__ = ["ANSWER_ALLOWANCE", "LINE_FACTOR", "STREAM_FACTOR", "stream_attempt"]
