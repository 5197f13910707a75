"""Argparse types shared by the command line, ``serve`` and ``ui``: numbers in a range, addresses.

Kept apart from :mod:`thoughtledger.adapters.cli.common` so that starting the server imports
nothing of the terminal output.
"""

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS

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


port_number = bounded(int, lambda port: 0 <= port <= 65535, "a port number, 0-65535")
"""An argparse type: a TCP port (0: any free one)."""


def loopback_host(value: str) -> str:
    """An argparse type: one of :data:`~thoughtledger.adapters.common.origins.LOOPBACK_HOSTS`.

    A server that speaks plain HTTP (with tokens crossing it, or none asked for) must not be
    reachable from elsewhere, nor from a web page through DNS rebinding: the ``Host`` checks
    know only these names.

    Raises:
        argparse.ArgumentTypeError: ``value`` is another name or address.
    """
    if value not in LOOPBACK_HOSTS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not one of {', '.join(LOOPBACK_HOSTS)}: the server speaks plain "
            "HTTP, so it listens on loopback only (put a TLS proxy in front to share it)"
        )
    return value


def subject_mapping(value: str) -> tuple[str, str]:
    """An argparse type: ``SUB=NAME``, an issuer's subject mapped to a token file's principal.

    Raises:
        argparse.ArgumentTypeError: Not ``SUB=NAME``, or ``NAME`` is not a principal name.
    """
    from thoughtledger.ledger.errors import InvalidInputError
    from thoughtledger.ledger.ids import check_id

    subject, equals, name = value.partition("=")
    if not equals or not subject or not subject.isprintable():
        raise argparse.ArgumentTypeError(f"expected SUB=NAME, got {value[:80]!r}")
    try:
        return subject, check_id(name, "principal name")
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


__all__ = ["bounded", "loopback_host", "port_number", "subject_mapping"]
