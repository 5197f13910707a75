"""``python -m thoughtledger``: the ``thoughtledger`` command, where its script is not on PATH."""

import sys

from thoughtledger.api.cli import main

if __name__ == "__main__":
    sys.exit(main())
