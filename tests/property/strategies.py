"""Hypothesis strategies: events, and sequences of sequential-thinking calls."""

from typing import Any

from hypothesis import strategies as st

from ledger.events import (
    BranchExtended,
    BranchOpened,
    LedgerEvent,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtRecorded,
    ThoughtRevised,
)

# Valid Unicode: every code point but the surrogates, NUL included.
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
counts = st.integers(min_value=1, max_value=10_000)
maybe_bool = st.none() | st.booleans()
branch_ids = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)


def _facts() -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": counts,
        "total_thoughts": counts,
        "next_thought_needed": st.booleans(),
        "requested_total_thoughts": st.none() | counts,
        "needs_more_thoughts": maybe_bool,
        "is_revision": maybe_bool,
        "revises_thought": st.none() | counts,
    }


events: st.SearchStrategy[LedgerEvent] = st.one_of(
    st.builds(
        SessionStarted,
        metadata=st.dictionaries(text, text, max_size=3),
        predecessor_id=st.none() | text,
    ),
    st.builds(
        ThoughtRecorded,
        **_facts(),
        branch_from_thought=st.none() | counts,
        branch_id=st.none() | branch_ids,
    ),
    st.builds(
        ThoughtRevised,
        **_facts(),
        branch_from_thought=st.none() | counts,
        branch_id=st.none() | branch_ids,
    ),
    st.builds(BranchOpened, **_facts(), branch_from_thought=counts, branch_id=branch_ids),
    st.builds(BranchExtended, **_facts(), branch_from_thought=counts, branch_id=branch_ids),
    st.builds(SessionCleared, reason=st.none() | text, successor_id=st.none() | text),
    st.builds(
        SessionExpired,
        idle_seconds=st.floats(min_value=0, max_value=1e9),
        ttl_seconds=st.floats(min_value=1e-3, max_value=1e9),
    ),
)


@st.composite
def thinking_call(draw: st.DrawFn) -> dict[str, Any]:
    """Arguments of one valid sequential-thinking call (snake_case)."""
    call: dict[str, Any] = {
        "thought": draw(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)),
        "thought_number": draw(st.integers(1, 12)),
        "total_thoughts": draw(st.integers(1, 12)),
        "next_thought_needed": draw(st.booleans()),
    }
    kind = draw(st.sampled_from(["plain", "revision", "branch", "half-branch"]))
    if kind == "revision":
        call["is_revision"] = True
        call["revises_thought"] = draw(st.integers(1, 12))
    elif kind == "branch":
        call["branch_from_thought"] = draw(st.integers(1, 12))
        call["branch_id"] = draw(st.sampled_from(["a", "b", "c"]))
    elif kind == "half-branch":
        call["branch_id"] = draw(st.sampled_from(["a", "b"]))
    if draw(st.booleans()):
        call["needs_more_thoughts"] = draw(st.booleans())
    return call


calls = st.lists(thinking_call(), min_size=1, max_size=12)
