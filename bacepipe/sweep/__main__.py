"""``python -m bacepipe.sweep``: see :mod:`bacepipe.sweep.app`."""

import sys

from bacepipe.sweep.app import main

if __name__ == "__main__":
    sys.exit(main())
