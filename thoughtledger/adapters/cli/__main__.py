"""``python -m thoughtledger.adapters.cli``: the same command as ``python -m thoughtledger``."""

import sys

from thoughtledger.adapters.cli import main

if __name__ == "__main__":
    sys.exit(main())
