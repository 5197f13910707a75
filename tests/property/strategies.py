"""Hypothesis strategies: events, and sequences of sequential-thinking calls."""

from typing import Any, get_args

from hypothesis import strategies as st

from thoughtledger.ledger.events import (
    ActionTaken,
    BranchExtended,
    BranchOpened,
    Capture,
    CaptureForm,
    Generation,
    LedgerEvent,
    SessionCleared,
    SessionExpired,
    SessionStarted,
    ThoughtCaptured,
    ThoughtGenerated,
    ThoughtKind,
    ThoughtRecorded,
    ThoughtRedacted,
    ThoughtRevised,
)

# Valid Unicode: every code point but the surrogates, NUL included.
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
# Counts have no upper bound: some beyond 64 bits, which fast JSON parsers read as floats.
counts = st.integers(min_value=1, max_value=10_000) | st.integers(min_value=2**63, max_value=2**80)
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


tokens = st.none() | st.integers(0, 10**7)
unit = st.floats(min_value=0, max_value=1)

generations: st.SearchStrategy[Generation] = st.builds(
    Generation,
    model=text,
    provider=st.sampled_from(["openai", "openrouter", "local"]),
    served_model=st.none() | text,
    temperature=st.none() | st.floats(min_value=0, max_value=2),
    prompt_sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    prompt_version=st.integers(1, 5),
    context_version=st.integers(0, 10_000),
    structured=st.booleans(),
    prompt_tokens=tokens,
    completion_tokens=tokens,
    cost=st.none() | st.floats(min_value=0, max_value=1e3),
    latency_ms=st.integers(0, 10**6),
    attempts=st.integers(1, 10),
    finish_reason=st.none() | text,
    response_id=st.none() | text,
    confidence=st.none() | unit,
    reasoning_hint=st.none() | text,
)


@st.composite
def generated_thoughts(draw: st.DrawFn) -> ThoughtGenerated:
    """A thought a model wrote, of any kind (branch kinds always name their branch)."""
    kind: ThoughtKind = draw(st.sampled_from(get_args(ThoughtKind)))
    branch = kind.startswith("branch.")
    return ThoughtGenerated(
        **{name: draw(strategy) for name, strategy in _facts().items()},
        kind=kind,
        branch_from_thought=draw(counts if branch else st.none() | counts),
        branch_id=draw(branch_ids if branch else st.none() | branch_ids),
        guidance=draw(text),
        generation=draw(generations),
    )


hex_ids = {
    "trace_id": st.text("0123456789abcdef", min_size=32, max_size=32),
    "span_id": st.text("0123456789abcdef", min_size=16, max_size=16),
    "part": st.integers(0, 100),
}
digests = st.none() | st.text("0123456789abcdef", min_size=64, max_size=64)

captures: st.SearchStrategy[Capture] = st.builds(
    Capture,
    form=st.sampled_from(get_args(CaptureForm)),
    dialect=st.sampled_from(["gen_ai", "openinference"]),
    **hex_ids,
    provider=st.none() | text,
    model=st.none() | text,
    response_id=st.none() | text,
    reasoning_tokens=tokens,
    signature_sha256=digests,
    opaque_sha256=digests,
    opaque_bytes=tokens,
)

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
    generated_thoughts(),
    # Captured reasoning: a plain step of the main line, and the actions it led to.
    st.builds(ThoughtCaptured, **_facts(), capture=captures),
    st.builds(
        ActionTaken,
        name=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20),
        call_id=st.none() | text,
        arguments=text,
        arguments_cut=st.booleans(),
        after_thought=st.none() | counts,
        **hex_ids,
    ),
    st.builds(SessionCleared, reason=st.none() | text, successor_id=st.none() | text),
    st.builds(
        SessionExpired,
        idle_seconds=st.floats(min_value=0, max_value=1e9),
        ttl_seconds=st.floats(min_value=1e-3, max_value=1e9),
    ),
    # Names a version that may or may not hold a thought: the fold redacts what it holds there.
    st.builds(
        ThoughtRedacted,
        event_id=st.uuids().map(str),
        version=st.integers(1, 12),
        thought_number=counts,
        by=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20),
        reason=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40),
    ),
)


@st.composite
def thinking_call(draw: st.DrawFn) -> dict[str, Any]:
    """Arguments of one valid sequential-thinking call (snake_case)."""
    call: dict[str, Any] = {
        "thought": draw(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)),
        "thought_number": draw(st.integers(1, 12)),
        # Estimates have no upper bound; some beyond 64 bits (fast JSON parsers read them as
        # floats, see thoughtledger.projections.fastfold).
        "total_thoughts": draw(st.integers(1, 12) | st.integers(2**63, 2**80)),
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
