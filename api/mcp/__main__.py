"""``python -m api.mcp``: the serve entry point, until ``thoughtledger serve`` is wired to it."""

import argparse
import sys

from api.mcp.serve import add_serve_arguments, run_serve


def main(argv: list[str] | None = None) -> int:
    """Parse the serve options and serve; return the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m api.mcp", description="Serve the thoughtledger MCP server."
    )
    add_serve_arguments(parser)
    return run_serve(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
