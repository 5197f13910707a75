"""The ``thoughtledger`` command's entry (its script, and ``python -m thoughtledger``).

The command's modules take a moment to load (seconds on a cold start); Ctrl-C in that moment is
reported as at any other: one line, exit 130, never a traceback from inside an import.
"""

import sys

EXIT_INTERRUPTED = 130


def main() -> int:
    """Load and run the command line; return its exit code (130 when interrupted)."""
    try:
        from thoughtledger.adapters.cli import main as command

        return command()
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as exc:
        # Ctrl-C can arrive wrapped: Python 3.11 turns an exception raised while a class body's
        # descriptors are named (``__set_name__``, as a dataclass field is) into a RuntimeError
        # whose cause it is, so Ctrl-C at that moment of an import arrives so.
        if _interrupt_caused(exc):
            return _interrupted()
        raise


def _interrupt_caused(exc: BaseException) -> bool:
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _interrupted() -> int:
    sys.stderr.write("thoughtledger: error: interrupted\n")
    sys.stderr.flush()
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
