"""``python -m simbench``: the ``simbench`` command."""
import sys

from .cli import main

sys.exit(main())
