"""stdio's framing: lines cut however the bytes arrive, bounded, numbered and checked as UTF-8."""

import pytest

from thoughtledger.adapters.common.hardened import MAX_CONNECTIONS, RESERVED_FILES, connection_limit
from thoughtledger.adapters.mcp.stdio.framing import LineSplitter, UnreadableLineError, decoded

Found = list[tuple[int, bytes] | str]


def fed(splitter: LineSplitter, *chunks: bytes) -> Found:
    found: Found = []
    for chunk in (*chunks, b""):
        for item in splitter.feed(chunk):
            found.append(str(item) if isinstance(item, UnreadableLineError) else item)
    return found


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_lines_are_the_same_however_the_bytes_are_cut(size: int) -> None:
    data = b'{"a": 1}\n\n{"b": 2}\r\nlast'
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    assert fed(LineSplitter(100), *chunks) == [
        (1, b'{"a": 1}'),
        (2, b""),
        (3, b'{"b": 2}\r'),
        (4, b"last"),
    ]


def test_a_line_over_the_limit_is_reported_once_as_it_passes_it_and_the_rest_dropped() -> None:
    splitter = LineSplitter(10)
    assert splitter.feed(b"ok\n0123456") == [(1, b"ok")]
    assert [str(e) for e in splitter.feed(b"789abc")] == [
        "line 2 is over 10 bytes, the most one message may have; it was skipped"
    ]
    assert splitter.feed(b"x" * 1000) == []  # dropped as it arrives, never held
    assert splitter.feed(b"yz\nnext\n") == [(3, b"next")]


def test_a_line_over_the_limit_within_one_chunk_is_reported_at_its_end() -> None:
    assert fed(LineSplitter(4), b"12345\nab\n") == [
        "line 1 is over 4 bytes, the most one message may have; it was skipped",
        (2, b"ab"),
    ]


def test_a_line_of_exactly_the_limit_is_a_line() -> None:
    assert fed(LineSplitter(4), b"12", b"34\n") == [(1, b"1234")]


def test_invalid_utf8_is_named_by_line_and_byte_with_the_request_id_when_readable() -> None:
    line = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": {"t": "caf\xe9"}}'
    position = line.index(0xE9)
    with pytest.raises(UnreadableLineError) as caught:
        decoded(line, 3)
    assert str(caught.value).startswith(
        f"line 3 is not UTF-8: byte {position} (0xe9) is invalid continuation byte"
    )
    assert caught.value.request_id == 7
    with pytest.raises(UnreadableLineError) as unreadable:
        decoded(b'{"id": 7, \xff', 1)
    assert unreadable.value.request_id is None  # no JSON left to read it from
    assert decoded("café".encode(), 1) == "café"


def test_the_connection_limit_stays_below_the_open_files_limit() -> None:
    assert connection_limit(256) == 256 - RESERVED_FILES
    assert connection_limit(1_000_000) == MAX_CONNECTIONS
    assert connection_limit(10) == 1
    assert 1 <= connection_limit() <= MAX_CONNECTIONS
