"""``python -m thoughtledger.api.cli``: the same command as ``python -m thoughtledger``."""

import sys

from thoughtledger.api.cli import main

if __name__ == "__main__":
    sys.exit(main())
