"""Annotations as every adapter shows them: one JSON shape, grouped by thought, counted by label.

Pure functions over the :class:`~thoughtledger.projections.state.Annotation` tuples a session's
fold holds (see :func:`thoughtledger.projections.state.replay`).
"""

from collections import Counter
from collections.abc import Iterable, Mapping

from thoughtledger.ledger.envelope import format_time
from thoughtledger.projections.state import Annotation


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


def label_counts(annotations: Iterable[Annotation]) -> dict[str, int]:
    """How many annotations carry each label, the most frequent first (ties by label)."""
    counted = Counter(annotation.label for annotation in annotations)
    return dict(sorted(counted.items(), key=lambda item: (-item[1], item[0])))


__all__ = ["annotation_json", "by_thought", "label_counts"]
