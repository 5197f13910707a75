"""The figures behind ``thoughtledger stats``: rates, percentiles, drift and two breakdowns.

A pure fold over what a store answers (:meth:`Statistics.stats_rows
<thoughtledger.ledger.store.stats_rows.Statistics.stats_rows>`): one row of facts per session and a
histogram of the time between thoughts, an order of magnitude fewer rows than events. The
definitions of those rows are in :mod:`thoughtledger.ledger.store.stats_rows`; percentiles are
nearest-rank (the p-th of n sorted values is the ceil(p * n / 100)-th).
"""

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from thoughtledger.ledger.store.stats_rows import SessionFacts


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


@dataclass(frozen=True, slots=True)
class GroupStats:
    """Figures over a group of sessions; rates are fractions in [0, 1].

    ``completion_rate``: share of sessions whose last thought needs no next one;
    ``revision_rate``: share of thoughts that are revisions; ``branch_rate``: share of sessions
    that open a branch; ``fan_out``: branches per session that branches; ``drift``: the last
    estimate of ``totalThoughts`` minus the first, per session with thoughts.
    """

    sessions: int
    events: int
    thoughts: int
    completion_rate: float
    revision_rate: float
    branch_rate: float
    branches: int
    fan_out: float
    thoughts_p50: int
    thoughts_p95: int
    drift_mean: float | None
    drift_p50: int | None
    drift_p95: int | None


@dataclass(frozen=True, slots=True)
class LedgerStats:
    """The whole answer: overall figures, time between thoughts, and two breakdowns."""

    overall: GroupStats
    gap_p50_seconds: float | None
    gap_p95_seconds: float | None
    by_agent: list[tuple[str | None, str | None, GroupStats]] = field(default_factory=list)
    by_day: list[tuple[str, GroupStats]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Return the figures as plain JSON-ready data."""
        return {
            "overall": {
                **asdict(self.overall),
                "gap_p50_seconds": self.gap_p50_seconds,
                "gap_p95_seconds": self.gap_p95_seconds,
            },
            "by_agent": [
                {"agent": agent, "client": client, **asdict(group)}
                for agent, client, group in self.by_agent
            ],
            "by_day": [{"day": day, **asdict(group)} for day, group in self.by_day],
        }

    def as_json(self) -> dict[str, Any]:
        """Return :meth:`as_dict` with camelCase keys (``byAgent``, ``thoughtsP50``).

        As the command line's and the MCP server's JSON name every field.
        """
        camel: dict[str, Any] = _camel_keys(self.as_dict())
        return camel


def _camel_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {_camel(key): _camel_keys(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_camel_keys(item) for item in data]
    return data


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def summarize_group(facts: Sequence[SessionFacts]) -> GroupStats:
    """Fold per-session facts into the figures of one group."""
    thoughts = sum(f.thoughts for f in facts)
    branches = sum(f.branches for f in facts)
    branching = sum(1 for f in facts if f.branches)
    counts = Counter(f.thoughts for f in facts)
    drifts = Counter(
        f.last_total - f.first_total
        for f in facts
        if f.last_total is not None and f.first_total is not None
    )
    drifted = sum(drifts.values())
    return GroupStats(
        sessions=len(facts),
        events=sum(f.events for f in facts),
        thoughts=thoughts,
        completion_rate=_share(sum(1 for f in facts if f.completed), len(facts)),
        revision_rate=_share(sum(f.revisions for f in facts), thoughts),
        branch_rate=_share(branching, len(facts)),
        branches=branches,
        fan_out=_share(branches, branching),
        thoughts_p50=nearest_rank(counts, 50) or 0,
        thoughts_p95=nearest_rank(counts, 95) or 0,
        drift_mean=round(sum(k * n for k, n in drifts.items()) / drifted, 4) if drifted else None,
        drift_p50=nearest_rank(drifts, 50),
        drift_p95=nearest_rank(drifts, 95),
    )


def summarize(facts: Sequence[SessionFacts], gaps_ms: Mapping[int, int]) -> LedgerStats:
    """Fold per-session facts and the time-between-thoughts histogram into the answer."""
    by_agent: defaultdict[tuple[str | None, str | None], list[SessionFacts]] = defaultdict(list)
    by_day: defaultdict[str, list[SessionFacts]] = defaultdict(list)
    for item in facts:
        by_agent[item.agent, item.client].append(item)
        by_day[item.day].append(item)
    p50, p95 = nearest_rank(gaps_ms, 50), nearest_rank(gaps_ms, 95)
    return LedgerStats(
        overall=summarize_group(facts),
        gap_p50_seconds=None if p50 is None else p50 / 1000,
        gap_p95_seconds=None if p95 is None else p95 / 1000,
        by_agent=[
            (agent, client, summarize_group(group))
            for (agent, client), group in sorted(
                by_agent.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")
            )
        ],
        by_day=[(day, summarize_group(group)) for day, group in sorted(by_day.items())],
    )


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


__all__ = [
    "GroupStats",
    "LedgerStats",
    "nearest_rank",
    "percentile",
    "summarize",
    "summarize_group",
]
