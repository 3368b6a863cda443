"""The aggregate benchmark (same as ``simbench bench``): every dynamics formulation on one
table, plus the collision query figures. ``python scripts/bench.py --help``."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simbench.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
