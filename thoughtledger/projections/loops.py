"""Loops: a thought that repeats an earlier thought of its session, found by a pure fold.

A thought *repeats* an earlier one when, among the last :data:`LOOP_WINDOW` thoughts of its
session before it, one reads the same once normalised (case folded, Unicode compatibility forms
folded, every run of punctuation and spaces one space), or nearly the same: the Jaccard
similarity of their sets of :data:`SHINGLE_WORDS`-word shingles is at least
:data:`LOOP_SIMILARITY`. A thought whose text was redacted is neither compared nor a repeat:
its text is gone.

What it catches: a thought said again word for word, or with other case, spacing or
punctuation; a long thought with a word or two changed (one word changed in a thought of 39
words or more). What it misses: a short thought reworded (any changed word of a ten-word thought
brings it under the threshold), the same idea in other words, a repeat of a thought more than
:data:`LOOP_WINDOW` thoughts back, and a cycle of different thoughts whose members each differ
enough from one another.

The fold is incremental (:func:`detect` takes and returns a :class:`LoopWindow`), so a prefix
folded then its suffix finds what the whole finds (a window is a value of one process: its
shingles are hashes). Each thought is normalised and shingled once, and compared only with the
earlier thoughts an index gives for its first few shingles (prefix filtering: two sets whose
similarity reaches the threshold share one of the first few shingles of each, in one fixed
order), then only when their sizes allow the threshold. A templated session (thoughts that share
most of their shingles, ``"Step 7: ..."``) makes every earlier thought a candidate; there two
exact bounds spare the comparisons: a thought with too many shingles found nowhere in the
window repeats none of it, and two sets of one size under 19 shingles repeat only when equal.
Counting over a whole ledger is in :mod:`thoughtledger.projections.loop_counts`.
"""

import itertools
import math
import re
import unicodedata
from collections import deque
from collections.abc import Iterable
from typing import NamedTuple

from thoughtledger.projections.entries import ThoughtEntry
from thoughtledger.projections.state import SessionState

LOOP_SIMILARITY = 0.9
"""The word-shingle (Jaccard) similarity at or above which a thought repeats an earlier one."""

LOOP_WINDOW = 50
"""How many of the session's earlier thoughts (the most recent) a thought is compared with."""

SHINGLE_WORDS = 2
"""Words per shingle: two catch a changed word in a long thought and keep word order."""

_SEPARATORS = re.compile(r"[\W_]+")
_ASCII_FOLD = bytes(ord(chr(b).lower()) if chr(b).isalnum() else 32 for b in range(128)) + bytes(
    range(128, 256)
)
"""An ASCII text's bytes folded: letters lowered, every other character but a digit a space (a
byte table: a third cheaper than the same mapping on the text, and it runs on every append)."""


class Repeat(NamedTuple):
    """A thought that repeats an earlier one of its session.

    Attributes:
        version: The repeating thought's version.
        thought_number: Its thought number.
        repeats_version: The version of the earlier thought it repeats (the most similar one
            in the window; of equals, the most recent).
        repeats_number: The earlier thought's number.
        similarity: Their shingle similarity, in [``LOOP_SIMILARITY``, 1]; 1.0 when equal once
            normalised.
    """

    version: int
    thought_number: int
    repeats_version: int
    repeats_number: int
    similarity: float


Shingle = int
"""A run of :data:`SHINGLE_WORDS` words (or a whole shorter text), as its hash: sets of ints
intersect and sort several times faster than sets of tuples, and two runs of words share a
64-bit hash about once in 10**19 comparisons."""


class _Seen(NamedTuple):
    version: int
    thought_number: int
    normal: str
    shingles: frozenset[Shingle]
    prefix: tuple[Shingle, ...]


class LoopWindow(NamedTuple):
    """What the fold remembers between calls: the session's latest comparable thoughts.

    Attributes:
        recent: Up to :data:`LOOP_WINDOW` thoughts, oldest first (redacted ones left out).
    """

    recent: tuple[_Seen, ...] = ()


EMPTY_WINDOW = LoopWindow()
"""The window before a session's first thought."""


def normalise(text: str) -> str:
    """``text`` compared as: compatibility forms folded, case folded, punctuation as spaces."""
    if text.isascii():  # most thoughts: a table lookup per character, a tenth of the regex's cost
        return " ".join(text.encode().translate(_ASCII_FOLD).decode().split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SEPARATORS.sub(" ", folded).strip()


def shingles(normal: str) -> frozenset[Shingle]:
    """The :data:`SHINGLE_WORDS`-word shingles of a normalised text (a shorter text is one)."""
    words = normal.split(" ") if normal else []
    if len(words) <= SHINGLE_WORDS:
        return frozenset((hash(tuple(words)),))
    return frozenset(map(hash, zip(*(words[i:] for i in range(SHINGLE_WORDS)), strict=False)))


def similarity(first: str, second: str) -> float:
    """The shingle similarity of two texts: 1.0 when equal once normalised, else Jaccard."""
    a, b = normalise(first), normalise(second)
    if a == b:
        return 1.0
    return _jaccard(shingles(a), shingles(b))


def _jaccard(a: frozenset[Shingle], b: frozenset[Shingle]) -> float:
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


_SLACK = 1e-9  # float products near a bound must not drop a pair at the threshold exactly

_CROWD = 8
"""Candidates from which a thought that follows another such thought is first checked against
every shingle of the window (see :meth:`LoopFinder._ruled_out`): a templated session, whose
thoughts share most of their shingles, meets that many on every thought; other text seldom."""


def _words(text: str) -> list[str]:
    """``normalise(text)``'s words (split once: the window needs the text and its shingles)."""
    if text.isascii():
        return text.encode().translate(_ASCII_FOLD).decode().split()
    return _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split()


def _shingled(words: list[str]) -> frozenset[Shingle]:
    """``shingles(" ".join(words))``, from the words themselves."""
    if len(words) <= SHINGLE_WORDS:
        return frozenset((hash(tuple(words)),))
    if SHINGLE_WORDS == 2:  # the setting: pairs straight from C, no generator of slices
        return frozenset(map(hash, itertools.pairwise(words)))
    return frozenset(map(hash, zip(*(words[i:] for i in range(SHINGLE_WORDS)), strict=False)))


def _seen(version: int, thought_number: int, text: str) -> _Seen:
    # What normalise() and shingles() give, with one split: this runs on every append.
    words = _words(text)
    normal = " ".join(words)
    grams = _shingled(words)
    # Prefix filtering: two sets whose Jaccard reaches t share one of each set's first
    # |s| - ceil(t * |s|) + 1 shingles in any one fixed order. The order is by hash (fixed
    # within a process, which is all a window lives in): sorted by text, the first shingles
    # would start with the same few words and every thought would be a candidate.
    keep = len(grams) - math.ceil(LOOP_SIMILARITY * len(grams) - _SLACK) + 1
    return _Seen(version, thought_number, normal, grams, tuple(sorted(grams)[:keep]))


class LoopFinder:
    """The fold for a reader that takes a session one thought at a time (a trace, a page).

    Keeps the window's thoughts indexed by their prefix shingles, so a thought is compared only
    with the earlier ones that share one (prefix filtering: no pair at the threshold is missed),
    not with all :data:`LOOP_WINDOW`, and, while crowds of candidates follow one another, the
    window's shingles as one set, to rule a thought out before them; :attr:`window` is the pure
    value :func:`detect` resumes from (what is kept besides it only speeds the fold).

    Args:
        window: Where to resume (the window after the thoughts already seen).
    """

    def __init__(self, window: LoopWindow = EMPTY_WINDOW) -> None:
        self._recent: deque[_Seen] = deque()
        self._index: dict[Shingle, dict[int, _Seen]] = {}
        # Every shingle of the window and of at most LOOP_WINDOW thoughts that have left it,
        # up to the thought of version _union_upto: built by the first crowd of a run of them
        # (and afresh once every thought it was built from has left), then only added to.
        self._union: set[Shingle] = set()
        self._union_upto = self._union_since = 0
        self._crowded = 0  # the version of the latest crowd that the union did not let through
        for seen in window.recent:
            self._add(seen)

    def see(self, version: int, thought_number: int, text: str, *, redacted: bool) -> Repeat | None:
        """Fold the next thought of the session; return its repeat, if it is one.

        Args:
            version: The thought's version.
            thought_number: Its number.
            text: Its text.
            redacted: Whether its text was redacted (it is then left out).
        """
        if redacted:
            return None
        seen = _seen(version, thought_number, text)
        repeat = self._match(seen)
        self._add(seen)
        return repeat

    @property
    def window(self) -> LoopWindow:
        """The window after every thought seen so far."""
        return LoopWindow(tuple(self._recent))

    def _add(self, seen: _Seen) -> None:
        if len(self._recent) == LOOP_WINDOW:
            oldest = self._recent.popleft()
            for gram in oldest.prefix:
                holders = self._index[gram]
                del holders[oldest.version]
                if not holders:
                    del self._index[gram]
        self._recent.append(seen)
        index = self._index
        for gram in seen.prefix:  # not setdefault: that builds a dict for every shingle
            held = index.get(gram)
            if held is None:
                index[gram] = {seen.version: seen}
            else:
                held[seen.version] = seen

    def _ruled_out(self, new: _Seen) -> bool:
        """Whether no thought of the window can repeat ``new``, which met a crowd of candidates.

        A thought shares with ``new`` at most the shingles of ``new`` found anywhere in the
        window, so no Jaccard exceeds their count over ``len(new.shingles)`` (the bound taken in
        the same float division as the score): a templated thought (``"Step 7: ..."``) has
        shingles no earlier one has, and is ruled out at once instead of compared with every
        thought its common shingles index. A superset of the window's shingles bounds as
        safely, so the union is added to, and built afresh only once a window has passed.

        Checked only for a crowd right after one the union did not let through: a lone crowd, or a
        session whose crowds are true candidates, would pay for the union and save nothing.
        """
        recent = self._recent
        follows = self._crowded == recent[-1].version
        self._crowded = new.version
        if not follows:
            return False
        union = self._union
        if not union or self._union_since < recent[0].version:
            union = self._union = set().union(*(seen.shingles for seen in recent))
            self._union_since = recent[-1].version
        else:
            for seen in reversed(recent):
                if seen.version <= self._union_upto:
                    break
                union |= seen.shingles
        self._union_upto = recent[-1].version
        grams = new.shingles
        if len(grams & union) / len(grams) >= LOOP_SIMILARITY:
            self._crowded = 0
            return False
        return True

    def _match(self, new: _Seen) -> Repeat | None:
        index = self._index
        candidates: dict[int, _Seen] = {}
        for gram in new.prefix:
            holders = index.get(gram)
            if holders:
                candidates.update(holders)
        if not candidates:
            return None
        if len(candidates) >= _CROWD and self._ruled_out(new):
            return None
        grams, normal = new.shingles, new.normal
        size = len(grams)
        # Jaccard is at most the smaller size over the larger.
        low, high = size * LOOP_SIMILARITY - _SLACK, size / LOOP_SIMILARITY + _SLACK
        # Two sets of one size sharing all but one shingle score (size - 1) / (size + 1): below
        # the threshold (under 19 shingles), only the same set repeats, and an unequal one is
        # told apart without counting what they share.
        whole = (size - 1) / (size + 1) < LOOP_SIMILARITY
        best: _Seen | None = None
        best_score = 0.0
        for version in sorted(candidates, reverse=True):  # newest first: of equals, it wins
            old = candidates[version]
            if old.normal == normal:
                best, best_score = old, 1.0
                break
            other = len(old.shingles)
            if other < low or other > high or (whole and other == size and old.shingles != grams):
                continue
            score = _jaccard(grams, old.shingles)
            if score >= LOOP_SIMILARITY and score > best_score:
                best, best_score = old, score
                if score == 1.0:
                    break
        if best is None:
            return None
        return Repeat(
            new.version, new.thought_number, best.version, best.thought_number, best_score
        )


def detect(
    thoughts: Iterable[ThoughtEntry], window: LoopWindow = EMPTY_WINDOW
) -> tuple[tuple[Repeat, ...], LoopWindow]:
    """Find the repeats among ``thoughts`` (one session's, in version order) after ``window``.

    Args:
        thoughts: The thoughts to fold, in version order.
        window: What an earlier call returned for the thoughts before these.

    Returns:
        The repeats found, in version order, and the window to pass with the next thoughts.
    """
    finder = LoopFinder(window)
    found = [
        repeat
        for entry in thoughts
        if (
            repeat := finder.see(
                entry.version, entry.thought_number, entry.thought, redacted=entry.redacted
            )
        )
        is not None
    ]
    return tuple(found), finder.window


def find_repeats(thoughts: Iterable[ThoughtEntry]) -> tuple[Repeat, ...]:
    """The repeats among one session's thoughts (in version order), from its first thought."""
    return detect(thoughts)[0]


def session_repeats(state: SessionState) -> tuple[Repeat, ...]:
    """The repeats of a session; none when ``state`` does not hold every thought (trimmed)."""
    return find_repeats(state.thoughts) if state.complete else ()


__all__ = [
    "EMPTY_WINDOW",
    "LOOP_SIMILARITY",
    "LOOP_WINDOW",
    "SHINGLE_WORDS",
    "LoopFinder",
    "LoopWindow",
    "Repeat",
    "Shingle",
    "detect",
    "find_repeats",
    "normalise",
    "session_repeats",
    "shingles",
    "similarity",
]
