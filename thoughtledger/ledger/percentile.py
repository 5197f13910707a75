"""Percentiles by nearest rank: the one definition every summary uses."""

from collections import Counter
from collections.abc import Iterable, Mapping


def nearest_rank(histogram: Mapping[int, int], percent: int) -> int | None:
    """Return the ``percent``-th percentile of the values a histogram (value: count) counts.

    The nearest-rank method: the smallest value with at least ``percent`` % of the counts at or
    below it (so p50 of 1..4 is 2, and p95 of few values is their maximum); ``None`` when the
    histogram counts nothing.
    """
    total = sum(histogram.values())
    if not total:
        return None
    rank = max(1, (total * percent + 99) // 100)
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= rank:
            return value
    raise AssertionError("unreachable: the ranks add up to the total")  # pragma: no cover


def percentile(values: Iterable[int], percent: int) -> int | None:
    """Return the ``percent``-th percentile of ``values`` (see :func:`nearest_rank`)."""
    return nearest_rank(Counter(values), percent)


__all__ = ["nearest_rank", "percentile"]
