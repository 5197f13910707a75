"""A method of an object that one of its parts carries out, declared once where the work is done.

``Ledger`` and ``Scope`` are each made of parts; a method of theirs that is exactly one part's
method is declared as that method (``state = PartMethod("_reads", Reads.state)``) instead of a
stub that forwards the call: typed and documented by the part, with no delegating base class.
"""

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")


class PartMethod(Generic[P, R]):
    """A method one of an object's parts carries out: ``ledger.head`` is ``ledger._lookup.head``.

    Typed and documented as the part's method, so that each reference is written once, where
    the work is done, and an object is its parts rather than a class that inherits them.

    Args:
        part: The attribute of the object holding the part.
        method: The part's method, of the same name as the object's.
    """

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self._part = part
        self._name = method.__name__
        self.__doc__ = method.__doc__
        self.__wrapped__ = method  # help() and inspect.signature show the part's signature

    @overload
    def __get__(self, whole: None, owner: type) -> Self: ...
    @overload
    def __get__(self, whole: object, owner: type) -> Callable[P, R]: ...
    def __get__(self, whole: object, owner: type) -> "Self | Callable[P, R]":
        if whole is None:
            return self
        method: Callable[P, R] = getattr(getattr(whole, self._part), self._name)
        return method


__all__ = ["PartMethod"]
