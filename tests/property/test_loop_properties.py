"""Properties of loop detection: a pure, resumable fold that finds what its definition says."""

import itertools
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.loops import (
    LOOP_SIMILARITY,
    LOOP_WINDOW,
    Repeat,
    detect,
    find_repeats,
    normalise,
    similarity,
)

_MOMENT = datetime(2026, 1, 1, tzinfo=UTC)
# Few words, so that repeats and near repeats are common.
_words = st.sampled_from(["check", "the", "file", "again", "Plan", "step", "é", "E\u0301", "42"])
_texts = st.lists(_words, max_size=12).map(" ".join)
_spellings = st.sampled_from([str.upper, str.lower, lambda t: f"  {t}!!", lambda t: t + "."])


def _entries(texts: list[str], redacted: frozenset[int] = frozenset()) -> list[ThoughtEntry]:
    return [
        ThoughtEntry(
            version=index + 1,
            position=index + 1,
            recorded_at=_MOMENT,
            kind="thought.recorded",
            thought=text,
            thought_number=index + 1,
            total_thoughts=len(texts),
            next_thought_needed=True,
            is_revision=None,
            revises_thought=None,
            branch_from_thought=None,
            branch_id=None,
            needs_more_thoughts=None,
            redacted=index in redacted,
        )
        for index, text in enumerate(texts)
    ]


def _by_definition(texts: list[str], redacted: frozenset[int]) -> dict[int, float]:
    """Version -> best similarity, by comparing every pair the definition names (no filters)."""
    found: dict[int, float] = {}
    kept = [(i + 1, t) for i, t in enumerate(texts) if i not in redacted]
    for index, (version, text) in enumerate(kept):
        window = kept[max(0, index - LOOP_WINDOW) : index]
        best = max((similarity(text, old) for _, old in window), default=0.0)
        if best >= LOOP_SIMILARITY:
            found[version] = best
    return found


@settings(max_examples=200, deadline=None)
@given(st.lists(_texts, max_size=70), st.frozensets(st.integers(0, 69), max_size=5))
def test_the_fold_finds_exactly_the_pairs_the_definition_names(
    texts: list[str], redacted: frozenset[int]
) -> None:
    repeats = find_repeats(_entries(texts, redacted))
    assert {r.version: r.similarity for r in repeats} == _by_definition(texts, redacted)
    for repeat in repeats:
        assert repeat.repeats_version < repeat.version
        assert repeat.version - 1 not in redacted
        assert repeat.repeats_version - 1 not in redacted
        assert similarity(texts[repeat.version - 1], texts[repeat.repeats_version - 1]) == (
            repeat.similarity
        )


# Templated sessions: each thought is the template, or an earlier thought of the session, with a
# few words replaced or dropped (by numbers that recur or not), so that thoughts share most of
# their shingles, meet many candidates in a row, repeat recent ones nearly or exactly, and pass
# the window more than twice.
_template_words = st.sampled_from([f"w{n}" for n in range(30)])
_replacements = st.one_of(
    st.sampled_from(["w0", "w1", "Step", "7", "8", ""]), st.integers(0, 400).map(str)
)
_edits = st.lists(st.tuples(st.integers(0, 44), _replacements), max_size=3)
_steps = st.lists(
    st.tuples(st.integers(0, 2 * LOOP_WINDOW), _edits),  # how far back its source is (0: none)
    min_size=LOOP_WINDOW // 5,
    max_size=3 * LOOP_WINDOW,
)


@st.composite
def _templated(draw: st.DrawFn) -> list[str]:
    template = draw(st.lists(_template_words, min_size=5, max_size=45))
    thoughts: list[list[str]] = []
    for back, edits in draw(_steps):
        words = list(thoughts[-back] if 0 < back <= len(thoughts) else template) or ["w2"]
        for at, word in edits:
            words[at % len(words)] = word
        thoughts.append([word for word in words if word])
    return [" ".join(words) for words in thoughts]


def _brute_force(texts: list[str], redacted: frozenset[int]) -> tuple[Repeat, ...]:
    """Every thought compared with every comparable one of its window: the most similar at the
    threshold repeats it, of equals the most recent."""
    scores: dict[tuple[str, str], float] = {}
    kept = [(i + 1, t) for i, t in enumerate(texts) if i not in redacted]
    found = []
    for index, (version, text) in enumerate(kept):
        best: tuple[int, float] | None = None
        for old_version, old in kept[max(0, index - LOOP_WINDOW) : index]:
            score = scores.get((text, old))
            if score is None:
                score = scores[text, old] = similarity(text, old)
            if score >= LOOP_SIMILARITY and (best is None or score >= best[1]):
                best = (old_version, score)
        if best is not None:
            found.append(Repeat(version, version, best[0], best[0], best[1]))
    return tuple(found)


@settings(max_examples=150, deadline=None)
@given(_templated(), st.frozensets(st.integers(0, 3 * LOOP_WINDOW), max_size=5), st.data())
def test_templated_thoughts_repeat_exactly_what_comparing_every_pair_finds(
    texts: list[str], redacted: frozenset[int], data: st.DataObject
) -> None:
    entries = _entries(texts, redacted)
    expected = _brute_force(texts, redacted)
    assert find_repeats(entries) == expected
    cut = data.draw(st.integers(0, len(entries)))
    first, window = detect(entries[:cut])
    assert first + detect(entries[cut:], window)[0] == expected


def test_a_templated_thought_said_again_after_many_is_a_repeat_of_that_one() -> None:
    texts = [
        f"Thought {n}: weigh the options and note what changed since the last step."
        for n in range(1, 120)
    ]
    assert find_repeats(_entries(texts)) == ()
    again = find_repeats(_entries([*texts, texts[99].upper()]))
    assert [(r.version, r.repeats_version, r.similarity) for r in again] == [(120, 100, 1.0)]


def test_a_templated_thought_one_shingle_off_repeats_at_the_threshold_from_19_shingles() -> None:
    for size, expected in ((19, [(120, 100, LOOP_SIMILARITY)]), (18, [])):
        middle = " ".join(f"w{k}" for k in range(size - 1))  # size + 1 words: size shingles
        # Two numbers per thought: any two differ in four shingles, too many to repeat.
        texts = [f"{n} {middle} {n}" for n in range(1, 120)]
        assert find_repeats(_entries(texts)) == ()
        first_changed = f"other {middle} 100"  # 18 of 19 shingles shared: 18 / 20 = 0.9
        found = find_repeats(_entries([*texts, first_changed]))
        assert [(r.version, r.repeats_version, r.similarity) for r in found] == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(_texts, max_size=80), st.data())
def test_folding_a_prefix_then_its_suffix_finds_what_the_whole_finds(
    texts: list[str], data: st.DataObject
) -> None:
    entries = _entries(texts)
    cut = data.draw(st.integers(0, len(entries)))
    first, window = detect(entries[:cut])
    second, _ = detect(entries[cut:], window)
    assert first + second == find_repeats(entries)


@settings(max_examples=100, deadline=None)
@given(_texts, _spellings, st.lists(_texts, max_size=LOOP_WINDOW - 1))
def test_a_thought_said_again_in_another_case_or_punctuation_is_a_repeat(
    text: str, spelling: object, between: list[str]
) -> None:
    again = spelling(text)  # type: ignore[operator]  # one of the callables above
    repeats = find_repeats(_entries([text, *between, again]))
    last = repeats[-1] if repeats else None
    assert last is not None
    assert last.version == len(between) + 2
    assert last.similarity == 1.0


@given(st.lists(_texts, min_size=1, max_size=20))
def test_similarity_is_symmetric_and_within_bounds(texts: list[str]) -> None:
    for first, second in itertools.product(texts, repeat=2):
        score = similarity(first, second)
        assert 0.0 <= score <= 1.0
        assert score == similarity(second, first)
        if normalise(first) == normalise(second):
            assert score == 1.0


def test_a_repeat_beyond_the_window_is_missed_and_one_within_it_is_found() -> None:
    filler = [f"distinct thought number {n} about {n * 7}" for n in range(LOOP_WINDOW)]
    assert find_repeats(_entries(["the same words", *filler, "the same words"])) == ()
    found = find_repeats(_entries(["the same words", *filler[1:], "THE same, words"]))
    assert [(r.version, r.repeats_version) for r in found] == [(LOOP_WINDOW + 1, 1)]


def test_one_word_changed_in_a_long_thought_is_a_repeat_and_in_a_short_one_is_not() -> None:
    long = [f"w{n}" for n in range(39)]
    changed = [*long[:20], "other", *long[21:]]
    assert find_repeats(_entries([" ".join(long), " ".join(changed)]))
    short = long[:10]
    assert not find_repeats(_entries([" ".join(short), " ".join([*short[:5], "x", *short[6:]])]))
