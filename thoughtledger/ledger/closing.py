"""The one base of everything thoughtledger opens and closes: ``async with`` closes it."""

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self


class ClosedOnExit(ABC):
    """``async with x:`` returns ``x`` and awaits ``x.aclose()`` on the way out, whatever happened.

    Stores, the ledger, the model client and the stdio stream wrappers all close this way.
    """

    @abstractmethod
    async def aclose(self) -> None:
        """Release what this holds; it cannot be used afterwards."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


__all__ = ["ClosedOnExit"]
