"""What language models cost: tokens, latency and reported cost per model, from generated thoughts.

A pure fold over recorded events (one session's, or a whole store's from ``read_all``), for
``thoughtledger show`` and ``stats``. Percentiles are nearest-rank, as in
:mod:`thoughtledger.projections.analytics`: the p-th of n sorted values is the ceil(p * n / 100)-th.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import Generation, ThoughtGenerated
from thoughtledger.projections.analytics import percentile
from thoughtledger.projections.answers import JsonDict


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Figures over the thoughts one model wrote through one provider.

    Attributes:
        provider: Where it ran (``openai``, ``openrouter``, ``local``).
        model: The model asked for (aliases resolved).
        thoughts: How many thoughts it wrote.
        prompt_tokens: Prompt tokens over the thoughts whose usage was reported.
        completion_tokens: Completion tokens, likewise.
        unreported: Thoughts whose provider reported no token usage.
        cost: The provider's own cost figures added up (``None`` when it gave none).
        attempts: Requests made, retries included.
        latency_ms_p50: Median latency of the answering requests, in milliseconds.
        latency_ms_p95: 95th percentile, likewise.
        latency_ms_max: Slowest, likewise.
        structured: Thoughts that came as structured answers (the rest were plain text).
    """

    provider: str
    model: str
    thoughts: int
    prompt_tokens: int
    completion_tokens: int
    unreported: int
    cost: float | None
    attempts: int
    latency_ms_p50: int
    latency_ms_p95: int
    latency_ms_max: int
    structured: int

    def as_json(self) -> JsonDict:
        """camelCase, for JSON output."""
        return {
            "provider": self.provider,
            "model": self.model,
            "thoughts": self.thoughts,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "unreportedUsage": self.unreported,
            "cost": self.cost,
            "attempts": self.attempts,
            "latencyMsP50": self.latency_ms_p50,
            "latencyMsP95": self.latency_ms_p95,
            "latencyMsMax": self.latency_ms_max,
            "structured": self.structured,
        }


def cost_note(generation: Generation) -> str:
    """What one generation cost, in a few words: ``40+12 tokens · 850 ms · $0.00042``.

    Tokens are prompt+completion as the provider reported them (``tokens not reported`` when it
    did not); the price only when the provider gave one; retries when there were any.
    """
    if generation.prompt_tokens is None and generation.completion_tokens is None:
        parts = ["tokens not reported"]
    else:
        prompt, completion = generation.prompt_tokens or 0, generation.completion_tokens or 0
        parts = [f"{prompt}+{completion} tokens"]
    parts.append(f"{generation.latency_ms} ms")
    if generation.cost is not None:
        parts.append(f"${generation.cost:.6g}")
    if generation.attempts > 1:
        parts.append(f"{generation.attempts} attempts")
    return " · ".join(parts)


def usage_note(usage: ModelUsage) -> str:
    """One model's figures in a line: ``gpt-5 (openai): 3 thoughts · 120+45 tokens · ...``."""
    parts = [
        f"{usage.model} ({usage.provider}): {usage.thoughts} thought{'s' * (usage.thoughts != 1)}",
        f"{usage.prompt_tokens}+{usage.completion_tokens} tokens",
        f"latency p50 {usage.latency_ms_p50} ms, p95 {usage.latency_ms_p95} ms",
    ]
    if usage.cost is not None:
        parts.append(f"${usage.cost:.6g}")
    if usage.unreported:
        parts.append(f"{usage.unreported} without token figures")
    return " · ".join(parts)


def generations(records: Iterable[RecordedEvent]) -> list[Generation]:
    """The generation of every model-written thought among ``records``, in order."""
    return [r.event.generation for r in records if isinstance(r.event, ThoughtGenerated)]


def usage_by_model(items: Iterable[Generation]) -> list[ModelUsage]:
    """Figures per (provider, model), most thoughts first (then by name)."""
    groups: dict[tuple[str, str], list[Generation]] = {}
    for generation in items:
        groups.setdefault((generation.provider, generation.model), []).append(generation)
    usage = [_summarise(provider, model, group) for (provider, model), group in groups.items()]
    return sorted(usage, key=lambda u: (-u.thoughts, u.provider, u.model))


def _summarise(provider: str, model: str, group: list[Generation]) -> ModelUsage:
    reported = [g for g in group if g.prompt_tokens is not None or g.completion_tokens is not None]
    costs = [g.cost for g in group if g.cost is not None]
    latencies = sorted(g.latency_ms for g in group)
    return ModelUsage(
        provider=provider,
        model=model,
        thoughts=len(group),
        prompt_tokens=sum(g.prompt_tokens or 0 for g in reported),
        completion_tokens=sum(g.completion_tokens or 0 for g in reported),
        unreported=len(group) - len(reported),
        cost=sum(costs) if costs else None,
        attempts=sum(g.attempts for g in group),
        latency_ms_p50=percentile(latencies, 50) or 0,  # a group has at least one generation
        latency_ms_p95=percentile(latencies, 95) or 0,
        latency_ms_max=latencies[-1],
        structured=sum(1 for g in group if g.structured),
    )


__all__ = ["ModelUsage", "cost_note", "generations", "usage_by_model", "usage_note"]
