#!/usr/bin/env bash
# The wheel works anywhere: build it from the files git tracks, install it into a fresh venv
# outside the checkout, and run the main jobs from a temporary folder (no checkout on the path).
# Usage: scripts/check_wheel.sh [PYTHON]    (default python3; needs the package index for the
# dependencies). Called by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/simbench-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
say() { echo "check_wheel: $*" >&2; }

# 1. the sources as git has them (an untracked asset would be missing here too)
mkdir -p "$work/src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$repo" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$work/src"
else
    cp -r "$repo/." "$work/src"
fi

# 2. the wheel, and what it must hold
"$python" -m pip wheel -q --no-deps -w "$work/dist" "$work/src"
wheel="$(ls "$work"/dist/simbench-*.whl)"
say "built $(basename "$wheel")"
"$python" - "$wheel" <<'EOF'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["simbench/py.typed", "simbench/__main__.py", "simbench/assets/urdf/planar_2r.urdf",
        "simbench/assets/scenes/kuka_cubes.toml",
        "simbench/assets/ros/simbench_demo_description/package.xml",
        "simbench/assets/ros/simbench_demo_description/meshes/link.stl"]
missing = [n for n in need if n not in names]
stray = sorted(n for n in names if n.startswith(("tests/", "scripts/", "docs/")))
if missing or stray:
    sys.exit(f"check_wheel: the wheel lacks {missing} or holds {stray[:5]}")
print(f"check_wheel: {len(names)} files in the wheel, package data included", file=sys.stderr)
EOF

# 3. a fresh venv outside the checkout, and the commands run from an empty folder
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
mkdir -p "$work/run"
cd "$work/run"
export OPENBLAS_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1
unset DISPLAY PYTHONPATH
bin="$work/venv/bin"
"$bin/simbench" demo --direct --out "$work/run/out" > demo.txt
grep -q "main server DIRECT (headless), collision server DIRECT" demo.txt
test -s "$work/run/out/demo.png"
"$bin/simbench" info simbench:planar_2r.urdf > info.txt
grep -q "dof: 2" info.txt
"$bin/simbench" info simbench:ros/simbench_demo_description/urdf/arm.urdf | grep -q "issues: none"
version="$("$bin/python" -m simbench --version)"
expected="simbench $("$bin/python" -c 'import importlib.metadata as m; print(m.version("simbench"))')"
test "$version" = "$expected"
"$bin/python" -c "import simbench, pathlib; assert 'site-packages' in simbench.__file__, simbench.__file__"
# the single-call C entry is in the wheel and runs (where this machine has a C compiler)
if command -v cc >/dev/null 2>&1; then
    "$bin/python" - <<'EOF2'
import numpy as np
import simbench.dynamics as dyn
from simbench.dynamics.kernels import entries
from simbench.model import RobotModel
assert entries.CALL is not None, "the wheel lacks the C entry simbench/dynamics/kernels/_call"
m = RobotModel.from_urdf("simbench:planar_2r.urdf")
tau = dyn.inverse_dynamics(m, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
assert tau.shape == (2,) and np.isfinite(tau).all(), tau
EOF2
fi
say "ok: demo --direct, info simbench:planar_2r.urdf, python -m simbench --version ($version), the C entry of the dynamics, from $work/run"
