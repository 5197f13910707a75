"""Reading a streamed answer: server-sent events within bounds, and the thought inside the JSON.

Whatever way the answer is cut into pieces, the thought given back adds up to what
:func:`parse_answer` reads from the whole answer.
"""

import itertools
import json
from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thoughtledger.adapters.llm.answer import parse_answer
from thoughtledger.adapters.llm.partial import ThoughtStream
from thoughtledger.adapters.llm.sse import StreamTooLarge, sse_data

ANSWERS = [
    json.dumps({"thought": '  Shared "counters" \\ é 😀\n across nodes.  ', "confidence": 0.9}),
    json.dumps({"confidence": 0.5, "reasoning_hint": "x", "thought": "The key comes last."}),
    json.dumps({"thought": "Escaped 😀 and é"}, ensure_ascii=True),
    "```json\n" + json.dumps({"thought": "Fenced.", "confidence": 1}) + "\n```",
    json.dumps({"nested": {"thought": "not this"}, "list": ["}", "{"], "thought": "This one."}),
    "  Plain text, not JSON.\n\n",
    "```python\nprint('a fence that is no JSON')\n```",
    "{ not quite JSON but braced }",
]


def pieces_of(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[start:end] for start, end in itertools.pairwise(points)]


@pytest.mark.parametrize("answer", ANSWERS)
@given(cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=40))
def test_the_thought_given_back_adds_up_to_the_thought_read_whole(
    answer: str, cuts: list[int]
) -> None:
    reader = ThoughtStream(structured=True)
    given_back = "".join(reader.feed(piece) for piece in pieces_of(answer, cuts))
    assert given_back == reader.text
    whole, _, _, structured = parse_answer(answer, structured=True)
    if structured or not answer.lstrip().startswith(("{", "`")):
        assert given_back == whole
    assert given_back == given_back.strip()


def test_an_unstructured_request_gives_the_answer_back_trimmed() -> None:
    reader = ThoughtStream(structured=False)
    assert [reader.feed(piece) for piece in ["  {", '"a": 1}  ', "\n"]] == ["{", '"a": 1}', ""]


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def read(*parts: bytes, line: int = 1000, total: int = 10_000) -> list[str]:
    return [
        data async for data in sse_data(chunks(*parts), max_line_bytes=line, max_total_bytes=total)
    ]


@pytest.mark.anyio
async def test_events_are_read_across_chunks_with_every_line_ending_until_done() -> None:
    events = await read(
        b": keep-alive\n\nda", b"ta: {\"a\"", b": 1}\r", b"\n\r\ndata: two\rdata: lines\r\r",
        b"event: x\ndata:3\n\n", b"data: [DONE]\n\ndata: after\n\n",
    )  # fmt: skip
    assert events == ['{"a": 1}', "two\nlines", "3"]


@pytest.mark.anyio
async def test_a_long_line_or_a_long_stream_is_refused() -> None:
    with pytest.raises(StreamTooLarge, match="line is longer than 10 bytes"):
        await read(b"data: " + b"x" * 20, line=10)
    with pytest.raises(StreamTooLarge, match="longer than 30 bytes"):
        await read(*[b"data: 1\n\n"] * 10, total=30)
