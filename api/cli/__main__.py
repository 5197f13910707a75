"""``python -m api.cli``: the ``thoughtledger`` command, for environments without its script."""

import sys

from api.cli import main

if __name__ == "__main__":
    sys.exit(main())
