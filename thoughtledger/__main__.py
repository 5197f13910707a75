"""The ``thoughtledger`` command's entry (its script, and ``python -m thoughtledger``).

The command's modules take a moment to load (seconds on a cold start); Ctrl-C in that moment is
reported as at any other: one line, exit 130, never a traceback from inside an import.
"""

import sys

EXIT_INTERRUPTED = 130


def main() -> int:
    """Load and run the command line; return its exit code (130 when interrupted)."""
    try:
        from thoughtledger.api.cli import main as command

        return command()
    except KeyboardInterrupt:
        sys.stderr.write("thoughtledger: error: interrupted\n")
        sys.stderr.flush()
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
