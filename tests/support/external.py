"""Helpers of the external-thought tests: a thought's arguments, and backoff pauses recorded."""

from typing import Any


class Pauses:
    """Records the backoff delays asked for instead of waiting them out."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def call(number: int, text: str, *, total: int = 3, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": number < total,
        **extra,
    }
