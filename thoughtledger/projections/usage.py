"""What language models did: thoughts, tokens, latency and reported cost per model.

A pure fold over recorded events (one session's, or a whole store's from ``read_all``), for
``thoughtledger show`` and ``stats``: the thoughts a model wrote for the ledger
(``thought.generated``, with their tokens, latency and cost) and the reasoning captured from an
agent's telemetry (``thought.captured``, with its model and the call's reasoning tokens).
Percentiles are nearest-rank, as in :mod:`thoughtledger.projections.analytics`: the p-th of n
sorted values is the ceil(p * n / 100)-th.
"""

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from thoughtledger.ledger.envelope import RecordedEvent
from thoughtledger.ledger.events import Generation, ThoughtGenerated
from thoughtledger.projections.analytics import nearest_rank
from thoughtledger.projections.answers import JsonDict

UNNAMED = "-"
"""The model (or provider) of captured reasoning whose sender named none."""


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Figures over the thoughts of one model through one provider.

    Attributes:
        provider: Where it ran (``openai``, ``openrouter``, ``local``; ``-`` when captured
            reasoning named none).
        model: The model asked for (aliases resolved), or the one that answered captured
            reasoning (``-`` when its sender named none).
        thoughts: How many thoughts it wrote or thought: model-written and captured ones.
        prompt_tokens: Prompt tokens over the model-written thoughts whose usage was reported.
        completion_tokens: Completion tokens, likewise.
        unreported: Model-written thoughts whose provider reported no token usage.
        cost: The provider's own cost figures added up (``None`` when it gave none).
        attempts: Requests made for model-written thoughts, retries included.
        latency_ms_p50: Median latency of the answering requests, in milliseconds (``None``
            when the model wrote none of the thoughts: captured reasoning has no latency).
        latency_ms_p95: 95th percentile, likewise.
        latency_ms_max: Slowest, likewise.
        structured: Thoughts that came as structured answers (the rest were plain text).
        captured: Thoughts captured from an agent's telemetry (reasoning parts).
        reasoning_tokens: Reasoning tokens of the captured calls, each call counted once
            (several reasoning parts of one call carry the call's count); ``None`` when no
            captured call reported any.
    """

    provider: str
    model: str
    thoughts: int
    prompt_tokens: int
    completion_tokens: int
    unreported: int
    cost: float | None
    attempts: int
    latency_ms_p50: int | None
    latency_ms_p95: int | None
    latency_ms_max: int | None
    structured: int
    captured: int = 0
    reasoning_tokens: int | None = None

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
            "captured": self.captured,
            "reasoningTokens": self.reasoning_tokens,
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
        f"{usage.model} ({usage.provider}): {usage.thoughts} thought{'s' * (usage.thoughts != 1)}"
    ]
    if usage.captured:
        parts.append(f"{usage.captured} captured")
    if usage.reasoning_tokens is not None:
        parts.append(f"{usage.reasoning_tokens} reasoning tokens")
    if usage.latency_ms_p50 is not None:  # a model wrote some: their tokens and latency
        parts += [
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
    """Figures per (provider, model) of model-written thoughts, most thoughts first."""
    tally = UsageTally()
    for generation in items:
        tally.generated(generation)
    return tally.result()


@dataclass(slots=True)
class _Group:
    thoughts: int = 0
    captured: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported: int = 0
    cost: float | None = None
    attempts: int = 0
    latencies: Counter[int] = field(default_factory=Counter)
    structured: int = 0
    reasoning_tokens: int | None = None


class UsageTally:
    """Figures per (provider, model), folded one thought at a time (memory: one row per model).

    ``generated`` takes a model-written thought's generation, ``captured_fields`` a captured
    thought's ``capture`` fields (as :func:`thoughtledger.projections.event_fields.event_fields`
    reads them, or a model's dump). A captured call's reasoning tokens are counted once: the
    parts of one call are recorded one after another in their session, so a part of the same
    call as its session's previous captured part adds none.
    """

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], _Group] = {}
        self._last_call: dict[str, tuple[str, str]] = {}

    def _group(self, provider: str, model: str) -> _Group:
        group = self._groups.get((provider, model))
        if group is None:
            group = self._groups[provider, model] = _Group()
        return group

    def generated(self, generation: Generation) -> None:
        """Count one model-written thought."""
        group = self._group(generation.provider, generation.model)
        group.thoughts += 1
        if generation.prompt_tokens is None and generation.completion_tokens is None:
            group.unreported += 1
        else:
            group.prompt_tokens += generation.prompt_tokens or 0
            group.completion_tokens += generation.completion_tokens or 0
        if generation.cost is not None:
            group.cost = (group.cost or 0) + generation.cost
        group.attempts += generation.attempts
        group.latencies[generation.latency_ms] += 1
        group.structured += generation.structured

    def captured_fields(self, session_id: str, capture: Mapping[str, Any]) -> None:
        """Count one captured thought of ``session_id``, from its ``capture`` fields."""
        group = self._group(capture.get("provider") or UNNAMED, capture.get("model") or UNNAMED)
        group.thoughts += 1
        group.captured += 1
        call = (capture.get("trace_id") or "", capture.get("span_id") or "")
        if self._last_call.get(session_id) == call:
            return
        self._last_call[session_id] = call
        tokens = capture.get("reasoning_tokens")
        if tokens is not None:
            group.reasoning_tokens = (group.reasoning_tokens or 0) + tokens

    def result(self) -> list[ModelUsage]:
        """The figures so far, most thoughts first (then by provider and model)."""
        usage = [
            _summarise(provider, model, group) for (provider, model), group in self._groups.items()
        ]
        return sorted(usage, key=lambda u: (-u.thoughts, u.provider, u.model))


def _summarise(provider: str, model: str, group: _Group) -> ModelUsage:
    return ModelUsage(
        provider=provider,
        model=model,
        thoughts=group.thoughts,
        prompt_tokens=group.prompt_tokens,
        completion_tokens=group.completion_tokens,
        unreported=group.unreported,
        cost=group.cost,
        attempts=group.attempts,
        latency_ms_p50=nearest_rank(group.latencies, 50),
        latency_ms_p95=nearest_rank(group.latencies, 95),
        latency_ms_max=max(group.latencies) if group.latencies else None,
        structured=group.structured,
        captured=group.captured,
        reasoning_tokens=group.reasoning_tokens,
    )


__all__ = [
    "UNNAMED",
    "ModelUsage",
    "UsageTally",
    "cost_note",
    "generations",
    "usage_by_model",
    "usage_note",
]
