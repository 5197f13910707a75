"""Rewrite tests/unit/public_names.txt from the public modules' __all__, after a deliberate change.

Usage: .venv/bin/python tools/pin_public_names.py, then review the file's git diff.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from tests.unit.test_public_surface import PINNED_FILE, public_modules

HEADER = """\
# The __all__ of the modules users import (PUBLIC_MODULES in test_public_surface.py),
# `module name` a line. Change it together with an __all__ (that test checks they agree).
"""


def main() -> None:
    lines = [
        f"{name} {public}"
        for name, module in sorted(public_modules().items())
        for public in sorted(module.__all__)
    ]
    Path(PINNED_FILE).write_text(HEADER + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
