"""``python -m tests.drill`` (what `make drill` runs)."""

import sys

from tests.drill.run import main

sys.exit(main())
