"""Every benchmark suite (the same as ``simbench bench``): ``python scripts/bench.py --help``;
one suite: ``python scripts/bench.py --suite collision``."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simbench.bench.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
