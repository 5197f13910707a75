r"""Server-sent events read as they arrive, within bounds: the data of each event, until ``[DONE]``.

OpenAI's chat completions with ``stream: true`` answer ``data: {...}`` lines separated by blank
lines and end with ``data: [DONE]``; OpenRouter adds comment lines (``: OPENROUTER PROCESSING``)
to keep the connection open. Lines may end in ``\\n``, ``\\r\\n`` or ``\\r``. Nothing is read
past a line of more than ``max_line_bytes`` or past ``max_total_bytes`` in all: a provider cannot
make the reader hold more than that.
"""

from collections.abc import AsyncGenerator, AsyncIterator

DONE = "[DONE]"


class StreamTooLarge(Exception):
    # Caught where it arises and turned into a failure; never public.
    """The stream broke a bound; the message says which."""


async def sse_data(
    chunks: AsyncIterator[bytes], *, max_line_bytes: int, max_total_bytes: int
) -> AsyncGenerator[str]:
    """The ``data`` of each event in ``chunks``, in order, up to ``[DONE]`` or the end.

    Raises:
        StreamTooLarge: A line or the whole stream is longer than its bound.
    """
    buffer = bytearray()
    data: list[str] = []
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > max_total_bytes:
            raise StreamTooLarge(f"the stream is longer than {max_total_bytes} bytes")
        buffer += chunk
        while True:
            line, rest = _next_line(buffer)
            if line is None:
                break
            del buffer[: len(buffer) - rest]
            if not line:
                if data:
                    event, data = "\n".join(data), []
                    if event == DONE:
                        return
                    yield event
                continue
            text = line.decode("utf-8", errors="replace")
            field, _, value = text.partition(":")
            if field == "data":
                data.append(value.removeprefix(" "))
        if len(buffer) > max_line_bytes:
            raise StreamTooLarge(f"an event line is longer than {max_line_bytes} bytes")
    if data and (event := "\n".join(data)) != DONE:
        yield event


def _next_line(buffer: bytearray) -> tuple[bytes | None, int]:
    """The first complete line in ``buffer`` and how many bytes follow it (``None``: no line)."""
    newline = buffer.find(b"\n")
    carriage = buffer.find(b"\r")
    if carriage != -1 and (newline == -1 or carriage < newline):
        if carriage == len(buffer) - 1:
            return None, 0  # a \r\n may be split across chunks: wait for the next byte
        end = carriage + (2 if buffer[carriage + 1] == ord("\n") else 1)
        return bytes(buffer[:carriage]), len(buffer) - end
    if newline == -1:
        return None, 0
    return bytes(buffer[:newline]), len(buffer) - newline - 1


__all__ = ["DONE", "StreamTooLarge", "sse_data"]
