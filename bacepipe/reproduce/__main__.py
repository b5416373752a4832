"""``python -m bacepipe.reproduce``."""

import sys

from bacepipe.reproduce import main

sys.exit(main())
