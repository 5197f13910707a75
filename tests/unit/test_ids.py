import itertools
import os
import time
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from thoughtledger.ledger.ids import _after, new_event_id


def test_event_ids_are_version_7_unique_and_increasing() -> None:
    ids = [new_event_id() for _ in range(50_000)]
    assert all(a < b for a, b in itertools.pairwise(ids))
    assert all(i.version == 7 and i.variant == uuid.RFC_4122 for i in ids)
    assert all(uuid.UUID(str(i)) == i for i in ids[:100])


def test_event_ids_carry_the_current_millisecond_even_under_load() -> None:
    before = time.time_ns() // 1_000_000
    ids = [new_event_id() for _ in range(20_000)]
    after = time.time_ns() // 1_000_000
    assert before <= ids[0].int >> 80
    assert ids[-1].int >> 80 <= after


@given(
    millis=st.integers(0, 2**48 - 2),
    fraction=st.integers(0, 0xFFF),
    random_bits=st.integers(0, 2**62 - 1),
)
def test_the_id_after_another_is_the_next_valid_uuid7(
    millis: int, fraction: int, random_bits: int
) -> None:
    value = (millis << 80) | (0x7 << 76) | (fraction << 64) | (0x2 << 62) | random_bits
    following = uuid.UUID(int=_after(value))
    assert following.int > value
    assert following.version == 7
    assert following.variant == uuid.RFC_4122
    carried = random_bits == 2**62 - 1
    assert (following.int & (2**62 - 1)) == (0 if carried else random_bits + 1)


# Python 3.12+ warns about fork() in a process with threads; this child only mints one id.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    new_event_id()  # the parent has a pool of random bits now
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(reader)
        os.write(writer, new_event_id().bytes)
        os._exit(0)
    os.close(writer)
    theirs = os.read(reader, 16)
    os.close(reader)
    os.waitpid(child, 0)
    ours = new_event_id().bytes
    assert theirs[8:] != ours[8:]  # different random bits, not the same pool
