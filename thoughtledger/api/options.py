"""Argparse types for numbers in a range, shared by the command line and ``serve``.

Kept apart from :mod:`thoughtledger.adapters.cli.common` so that starting the server imports
nothing of
the terminal output.
"""

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


def bounded(
    read: Callable[[str], N], accepts: Callable[[N], bool], expected: str
) -> Callable[[str], N]:
    """An argparse type: text that ``read`` turns into a number ``accepts`` holds for.

    Args:
        read: ``int`` or ``float``.
        accepts: The range rule; NaN and infinities are refused before it is asked.
        expected: What a valid value is, for the one-line error (``"a port number"``...).

    Returns:
        The parser; it raises :class:`argparse.ArgumentTypeError` naming ``expected`` and the text.
    """

    def parse(text: str) -> N:
        try:
            value = read(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not math.isfinite(value) or not accepts(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


__all__ = ["bounded"]
