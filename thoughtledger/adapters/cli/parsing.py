"""The command line's parser, its exit codes and its errors, loading one command's code at most.

The parser lists every command (from :mod:`~thoughtledger.adapters.cli.catalogue`), but only the
command typed gets its options, from its own module: ``thoughtledger show`` loads the show
command and what it uses, ``thoughtledger --help`` loads no command at all. Every command
pays for its own imports alone, so each starts as fast as what it does allows.
"""

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from thoughtledger.adapters.cli.catalogue import CATALOGUE, module_of

PROG = "thoughtledger"

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

_EPILOG = """\
start here:
  thoughtledger demo                 record a sample session and show it
  thoughtledger sessions             what your agents thought, newest first
  thoughtledger show SESSION         one session as a tree (--at / --as-of: time travel)
  thoughtledger verify --all         check no recorded event was edited (what that proves: --help)
  thoughtledger ui                   the same in your browser: tree, version slider, live, charts
  thoughtledger doctor               which ledger the commands use, and what is installed

times are UTC; every command reads $THOUGHTLEDGER_URL (else the local file) or --db URL:
a URL with a password belongs in the variable, since ps shows every user a command line
"""


class CliError(Exception):
    """A problem to report as one line on stderr, with an exit code (1: it failed)."""

    code = EXIT_FAILURE


class UsageError(CliError):
    """What was typed is wrong: a bad option, a malformed time, an unknown session (exit 2)."""

    code = EXIT_USAGE


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit 2), not usage dumps."""

    def error(self, message: str) -> NoReturn:
        """Raise the error instead of printing usage and exiting.

        Raises:
            UsageError: Always.
        """
        raise UsageError(f"{message} (see: {self.prog} --help)")


class _Version(argparse.Action):
    """``--version``: the installed version, read from the package's metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any) -> NoReturn:
        from thoughtledger.adapters.cli.first_run import installed_version

        # As argparse's own version action: on stdout, then exit 0.
        formatter = parser._get_formatter()
        formatter.add_text(f"{PROG} {installed_version()}")
        parser._print_message(formatter.format_help(), sys.stdout)
        parser.exit()


def command_named(arguments: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option, if any.

    The program's own options (``--help``, ``--version``) take no value, so the first other
    word is the command (or a typo that the parser then refuses).
    """
    return next((word for word in arguments if not word.startswith("-")), None)


def build_parser(name: str | None = None) -> Parser:
    """Return the parser listing every command, with command ``name``'s options (if any).

    Args:
        name: The command about to run: its module is loaded and adds it (with its
            neighbours, as ``proofs`` adds ``keygen`` to ``verify-proof``); every other
            command is listed by name and summary alone. ``None`` (or an unknown name): only
            the list, as ``thoughtledger --help`` prints it.
    """
    parser = Parser(
        prog=PROG,
        description="Audit, replay and analyse the reasoning your agents recorded.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="print the installed version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if name in CATALOGUE:
        importlib.import_module(module_of(name)).register(commands)
    for listed, entry in CATALOGUE.items():
        if listed not in commands.choices:
            commands.add_parser(listed, help=entry.summary, description=entry.summary)
    # Listed by name, whichever module added its commands first.
    commands._choices_actions.sort(key=lambda action: action.dest)
    return parser


__all__ = [
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "CliError",
    "Parser",
    "UsageError",
    "build_parser",
    "command_named",
]
