"""The ``thoughtledger`` command: parse, dispatch, and turn every failure into one line."""

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

from thoughtledger.adapters.cli.parsing import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    UsageError,
    build_parser,
    command_named,
)
from thoughtledger.adapters.common.logs import logging_to_stderr
from thoughtledger.ledger.errors import InvalidInputError, LedgerError, SessionNotFoundError
from thoughtledger.ledger.printable import visible

DEBUG_ENV = "THOUGHTLEDGER_DEBUG"
"""Set to 1 to let unexpected errors show their traceback."""


def main(argv: list[str] | None = None) -> int:
    """Run the ``thoughtledger`` command line; return the exit code.

    Args:
        argv: The arguments after the program name (``sys.argv[1:]`` when ``None``).

    Returns:
        0 on success (no arguments at all print the help), 1 when the work failed, 2 when the
        command line was wrong, 130 when interrupted.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["serve"]:
        # Kept apart so the MCP server's imports load only when serving, and so nothing but
        # its JSON-RPC ever reaches stdout.
        from thoughtledger.adapters.cli.serve import serve

        return _guarded(lambda: serve(arguments[1:]))
    if not arguments:  # the first thing a newcomer types: where to start, not an error
        build_parser().print_help()
        return EXIT_OK

    def run() -> int:
        # Only the command typed is loaded (see ``parsing``), and only once it is known.
        args, extra = build_parser(command_named(arguments)).parse_known_args(arguments)
        if extra:  # named with the command's own help, not the program's
            named = " ".join(filter(None, (args.command, getattr(args, "action", None))))
            raise UsageError(
                f"unrecognized arguments: {' '.join(extra)} (see: {PROG} {named} --help)"
            )
        import asyncio  # loaded for a command that runs, not for --help or a usage error

        from thoughtledger.adapters.cli.common import Ui

        ui = Ui.create()
        with _interrupting():
            code: int = asyncio.run(args.handler(args, ui))
        return code

    with _logging_to_stderr():
        return _guarded(run)


def _guarded(run: Callable[[], int]) -> int:
    try:
        return run()
    except CliError as exc:
        return _fail(str(exc), exc.code)
    except (SessionNotFoundError, InvalidInputError) as exc:  # what was asked for is wrong
        return _fail(str(exc), EXIT_USAGE)
    except LedgerError as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except SystemExit as exc:  # --help ends through argparse's exit()
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (| head): stop quietly, and keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    except Exception as exc:  # the entry point: nothing may escape as a traceback
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        return _fail(
            f"unexpected {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1 to see where)",
            EXIT_FAILURE,
        )


@contextlib.contextmanager
def _interrupting() -> Iterator[None]:
    """Let Ctrl-C raise ``KeyboardInterrupt`` where the command is, not at its next ``await``.

    asyncio's runner turns Ctrl-C into a cancellation of the command's coroutine, which lands
    only when it next waits on the loop: an export whose reads return at once ran to its end,
    file and all. A handler of our own (the runner installs its own only over Python's
    default) interrupts at once; the ``KeyboardInterrupt`` unwinds the command, closing the
    ledger and removing a half-written file (``atomic_file``), and ``main`` reports it (130).
    ``serve`` and ``ui`` watch the signal themselves while they serve.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _fail(message: str, code: int) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    # A message may quote what was typed or what a server answered: shown, never obeyed.
    sys.stderr.write(f"{PROG}: error: {visible(first, one_line=True)}\n")
    sys.stderr.flush()
    return code


@contextlib.contextmanager
def _logging_to_stderr() -> Iterator[None]:
    """Send logs (warnings and up; everything with THOUGHTLEDGER_DEBUG=1) to stderr.

    stdout carries only what the user asked for. The configuration is undone afterwards, since
    ``main`` may run inside another program (a test, a notebook) that has its own.
    """
    level = logging.DEBUG if os.environ.get(DEBUG_ENV) == "1" else logging.WARNING
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(level)
    root = logging.getLogger()
    root.addHandler(handler)
    root_level = root.level
    root.setLevel(min(root_level, level) if root_level else level)
    try:
        with logging_to_stderr(level):
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(root_level)


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is when a record arrives (it may be replaced)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass

    def format(self, record: logging.LogRecord) -> str:
        """The record as a line, its control characters shown (a log may quote a thought)."""
        return visible(super().format(record))
