"""``python -m springsim.bench``: see :mod:`springsim.bench.cli`."""

import sys

from springsim.bench.cli import main

sys.exit(main())
