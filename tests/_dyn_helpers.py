"""Helpers for the dynamics tests: declared oracles and the pybullet_data corpus. Pinocchio's
models and the map between our q / v order and Pinocchio's: :mod:`simbench.oracles.pinocchio`."""
from __future__ import annotations

import glob
import hashlib
import importlib
import os
import re

import numpy as np
import pytest

from simbench.paths import assets_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = str(assets_dir() / "urdf")
MOVABLE = re.compile(rb"""type\s*=\s*["'](revolute|continuous|prismatic|spherical)["']""")


def require(name: str):
    """Import a declared test dependency (pin, sympy, ...): a skip outside CI, a failure in CI
    (where .ci/run installs it), so that an oracle suite never goes green by being skipped."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is a declared test dependency and is missing in CI: {exc}")
        pytest.skip(f"{name} is not installed ({exc}); pip install -e '.[test]'",
                    allow_module_level=True)


def asset(name: str) -> str:
    return os.path.join(ASSETS, name)


def movable_corpus() -> list[str]:
    """pybullet_data URDFs that have a movable joint, identical files once."""
    import pybullet_data

    data = pybullet_data.getDataPath()
    seen, out = set(), []
    for path in sorted(glob.glob(os.path.join(data, "**", "*.urdf"), recursive=True)):
        text = open(path, "rb").read()
        if not MOVABLE.search(text):
            continue
        digest = hashlib.sha1(text).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), 1e-300)
    return float(np.abs(a - b).max(initial=0.0) / scale)


class Mismatches(list):
    """The rows whose relative error against the oracle is not below ``tol``, as
    ``"what: 1.2e-10"`` lines (empty when every row agrees)."""

    def __init__(self, tol: float):
        super().__init__()
        self.tol = tol

    def check(self, what: str, got, want, tol: float | None = None) -> None:
        e = rel_err(got, want)
        if not e < (self.tol if tol is None else tol):
            self.append(f"{what}: {e:.2e}")
