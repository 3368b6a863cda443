"""``simbench sweep``: large collision, dynamics and check jobs in resumable chunks, on this
machine (the default, no extra dependency) or on a Ray cluster (the ``sweep`` extra).

    import simbench
    res = simbench.sweep("collision", "simbench:kuka_cubes.toml", samples=100_000, seed=0, out="labels")
    res.arrays()["distance"]          # (100000, n_pairs), rows in sample order (needs pyarrow)

``simbench.sweep`` is this module, callable as :func:`~simbench.sweep.run.sweep`. The output
folder is one Parquet file per chunk plus ``_manifest.json``; ``pyarrow.dataset.dataset(out)``
reads it as one table. Modules: :mod:`.jobs` (what a job is), :mod:`.collision_job`,
:mod:`.dynamics_job`, :mod:`.check_job` (the kinds), :mod:`.sampling` (the seeded sampler),
:mod:`.parquet` (the writer), :mod:`.output` (folder, manifest, resume), :mod:`.local` and
:mod:`.ray_engine` (the engines), :mod:`.run` (running one), :mod:`.cli`, :mod:`.bench`.
"""
from __future__ import annotations

import sys
import types
from typing import Any

from .output import SweepError, read, read_manifest
from .run import SweepResult, execute, prepare, sweep


class _CallableModule(types.ModuleType):
    """``simbench.sweep(...)`` calls :func:`sweep`; attribute access works as for any module."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["sweep", "prepare", "execute", "read", "read_manifest", "SweepResult", "SweepError"]
