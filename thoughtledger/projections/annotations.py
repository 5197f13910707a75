"""Annotations as every adapter shows them: one JSON shape, grouped by thought, counted by label.

Pure functions over the :class:`~thoughtledger.projections.entries.Annotation` tuples a session's
fold holds (see :func:`thoughtledger.projections.state.replay`).
"""

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from thoughtledger.ledger.envelope import RecordedEvent, format_time
from thoughtledger.ledger.events import ThoughtAnnotated
from thoughtledger.projections.entries import Annotation


@dataclass(frozen=True, slots=True)
class LabelStats:
    """Figures over the annotations that carry one label.

    Attributes:
        label: The label.
        annotations: How many annotations carry it.
        sessions: In how many sessions.
        thoughts: How many distinct thoughts (session and number) it marks.
        scored: How many of them carry a score.
        score_mean: The mean of those scores (``None`` when none carries one).
    """

    label: str
    annotations: int
    sessions: int
    thoughts: int
    scored: int
    score_mean: float | None

    def as_json(self) -> dict[str, object]:
        """camelCase, for JSON output."""
        return {
            "label": self.label,
            "annotations": self.annotations,
            "sessions": self.sessions,
            "thoughts": self.thoughts,
            "scored": self.scored,
            "scoreMean": self.score_mean,
        }


def label_stats(records: Iterable[RecordedEvent]) -> list[LabelStats]:
    """Figures per label over the annotations among ``records``, the most used label first."""
    seen: dict[str, list[tuple[str, int, float | None]]] = {}
    for record in records:
        event = record.event
        if isinstance(event, ThoughtAnnotated):
            seen.setdefault(event.label, []).append(
                (record.session_id, event.thought_number, event.score)
            )
    out = []
    for label, marks in seen.items():
        scores = [score for _, _, score in marks if score is not None]
        out.append(
            LabelStats(
                label,
                len(marks),
                len({session for session, _, _ in marks}),
                len({(session, number) for session, number, _ in marks}),
                len(scores),
                round(sum(scores) / len(scores), 6) if scores else None,
            )
        )
    return sorted(out, key=lambda stats: (-stats.annotations, stats.label))


def annotation_json(annotation: Annotation) -> dict[str, object]:
    """One annotation as JSON (camelCase keys; ``score``, ``note`` and ``by`` only when given)."""
    out: dict[str, object] = {
        "version": annotation.version,
        "thoughtNumber": annotation.thought_number,
        "label": annotation.label,
        "recordedAt": format_time(annotation.recorded_at),
    }
    if annotation.score is not None:
        out["score"] = annotation.score
    if annotation.note:
        out["note"] = annotation.note
    if annotation.by is not None:
        out["by"] = annotation.by
    if annotation.redacted:
        out["redacted"] = True
    return out


def by_thought(annotations: Iterable[Annotation]) -> Mapping[int, tuple[Annotation, ...]]:
    """The annotations of each thought number, each in the order recorded."""
    grouped: dict[int, list[Annotation]] = {}
    for annotation in annotations:
        grouped.setdefault(annotation.thought_number, []).append(annotation)
    return {number: tuple(items) for number, items in grouped.items()}


def on_page(
    annotations: Iterable[Annotation], numbers: Iterable[int], version: int
) -> Mapping[int, tuple[Annotation, ...]]:
    """The annotations of the thought ``numbers`` a page shows, recorded by ``version``.

    What a page of a session's thoughts carries: a page read as of a version shows only the
    annotations that existed then, grouped by thought number in the order recorded.
    """
    shown = set(numbers)
    return by_thought(
        annotation
        for annotation in annotations
        if annotation.version <= version and annotation.thought_number in shown
    )


def label_counts(annotations: Iterable[Annotation]) -> dict[str, int]:
    """How many annotations carry each label, the most frequent first (ties by label)."""
    counted = Counter(annotation.label for annotation in annotations)
    return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))


__all__ = [
    "LabelStats",
    "annotation_json",
    "by_thought",
    "label_counts",
    "label_stats",
    "on_page",
]
