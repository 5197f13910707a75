"""What a long transfer reports its progress to (a progress bar, or nothing)."""

from typing import Protocol


class Progress(Protocol):
    """Told how much more work is done: bytes read, events written."""

    def advance(self, amount: float = 1) -> None:
        """Record ``amount`` more units of work done."""


class NoProgress:
    """Progress that goes nowhere, for callers that show none."""

    def advance(self, amount: float = 1) -> None:
        """Do nothing."""


__all__ = ["NoProgress", "Progress"]
