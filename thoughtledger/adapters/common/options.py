"""Argparse types and options shared by the command line, ``serve``, ``ui`` and ``receive``.

Numbers in a range, addresses, and the options of tokens from an OAuth issuer (declared once,
with their one check).

Kept apart from :mod:`thoughtledger.adapters.cli.common` so that starting the server imports
nothing of the terminal output.
"""

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from thoughtledger.adapters.common.origins import LOOPBACK_HOSTS

DEFAULT_HOST = "127.0.0.1"
"""Where ``serve --http`` and ``ui`` listen unless told: loopback only."""
DEFAULT_MCP_PORT = 8765
"""The port of ``serve --http`` unless told (``doctor`` says it without loading the server)."""

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


ISSUER_OPTIONS: dict[str, str] = {
    "--auth-issuer": "accept JWT access tokens of this OAuth issuer (its metadata names its "
    "keys); each token's sub is its principal. With --auth too, either kind of token",
    "--audience": "with --auth-issuer: the audience (aud) tokens must carry, as the issuer sets "
    "it for this server (RFC 8707; default: the server's own URL: http://HOST:PORT/, or the "
    "served /mcp URL for serve --http)",
    "--jwks-url": "with --auth-issuer: the issuer's key set (JWKS), instead of the one its "
    "metadata names",
    "--role-claim": "with --auth-issuer: the claim naming the role (writer, reader or auditor; "
    "default: thoughtledger_role); without it in a token, its thoughtledger:ROLE scopes decide "
    "(none: writer)",
    "--map-subject": "with --auth and --auth-issuer: the issuer's tokens whose sub is SUB stand "
    "for the token file's principal NAME (again for more); other subjects are ISSUER#sub, never "
    "a token file's principal",
}
"""The options of tokens from an OAuth issuer, in order, and their help: the same words in
``serve``, ``ui`` and ``receive``."""


def add_issuer_options(parser: argparse.ArgumentParser) -> None:
    """Add :data:`ISSUER_OPTIONS` to ``parser``, in order, with their words.

    :func:`check_issuer_options` checks them once parsed.
    """
    help_of = ISSUER_OPTIONS
    parser.add_argument("--auth-issuer", metavar="URL", help=help_of["--auth-issuer"])
    parser.add_argument("--audience", metavar="AUD", help=help_of["--audience"])
    parser.add_argument("--jwks-url", metavar="URL", help=help_of["--jwks-url"])
    parser.add_argument("--role-claim", metavar="NAME", help=help_of["--role-claim"])
    parser.add_argument(
        "--map-subject",
        action="append",
        type=subject_mapping,
        metavar="SUB=NAME",
        help=help_of["--map-subject"],
    )


def check_issuer_options(args: argparse.Namespace) -> None:
    """Refuse an issuer's options given without what they go with (the one check of them).

    Raises:
        InvalidInputError: ``--audience``, ``--jwks-url``, ``--role-claim`` or ``--map-subject``
            without ``--auth-issuer``, or ``--map-subject`` without ``--auth``.
    """
    from thoughtledger.ledger.errors import InvalidInputError

    if args.map_subject and (args.auth is None or args.auth_issuer is None):
        raise InvalidInputError("--map-subject goes with --auth FILE and --auth-issuer URL")
    if args.auth_issuer is None:
        for flag, value in (
            ("--audience", args.audience),
            ("--jwks-url", args.jwks_url),
            ("--role-claim", args.role_claim),
        ):
            if value is not None:
                raise InvalidInputError(f"{flag} goes with --auth-issuer URL")


__all__ = [
    "ISSUER_OPTIONS",
    "add_issuer_options",
    "bounded",
    "check_issuer_options",
    "loopback_host",
    "port_number",
    "subject_mapping",
]
