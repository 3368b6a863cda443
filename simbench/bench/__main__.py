"""``python -m simbench.bench [options]``: the same as ``simbench bench``."""
import sys

from .cli import main

sys.exit(main())
