"""``simbench check``: inverse dynamics and mass matrix (ours, or a user's) cross-validated
against PyBullet's ``calculateInverseDynamics`` / ``calculateMassMatrix``, with Pinocchio as a
third voice, and every disagreement explained by a demonstration.

The one module joining :mod:`simbench.dynamics` and PyBullet. One concept per file:

* :mod:`.report`: verdicts, error measures, causes, the report as text, JSON and Markdown;
* :mod:`.targets`: URDF and scene targets, resolved and parsed once; the corpus;
* :mod:`.bullet`: the PyBullet side (a body in its own DIRECT server, a pluggable convention),
  :mod:`.floating`: PyBullet's floating-base conventions (and defects) mapped to ours;
* :mod:`.causes`: each alteration PyBullet makes, as a change that can be demonstrated;
* :mod:`.dynamics`, :mod:`.usercode`, :mod:`.isolation`: the dynamics under test, a user's
  function judged, and run where it cannot hang or crash the check;
* Pinocchio, the third voice, through :mod:`simbench.oracles.pinocchio` (the project's one
  adapter between our joint order and Pinocchio's);
* :mod:`.checker`: the check itself (`compare`, `check`); :mod:`.plots`; :mod:`.cli`.

Names load lazily (as ``import simbench`` does), so the worker process that runs a user's
function imports only :mod:`.usercode` and numpy.
"""
from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    **dict.fromkeys(["PASS", "EXPLAINED", "FAIL", "ERROR", "SKIPPED", "VERDICTS", "Errors", "Cause",
                     "RobotResult", "Report", "measure"], "report"),
    **dict.fromkeys(["Target", "resolve_target", "corpus_targets", "target_label"], "targets"),
    **dict.fromkeys(["PYBULLET_MAX_DOF", "BulletLoad", "BulletRobot", "BulletRefused", "as_quaternion",
                     "captured_output", "FixedBaseConvention"], "bullet"),
    **dict.fromkeys(["CAUSES", "Alteration", "suspect", "overflowed_inputs", "overflowed_mass_inputs"], "causes"),
    **dict.fromkeys(["SimbenchDynamics", "FunctionDynamics", "ModuleDynamics", "load_dynamics",
                     "DEFAULT_TIMEOUT"], "dynamics"),
    **dict.fromkeys(["UserCodeFault"], "usercode"),
    **dict.fromkeys(["FloatingBaseConvention", "pybullet_quaternion"], "floating"),
    **dict.fromkeys(["check", "compare", "compare_target", "pinocchio_voice", "sample_states"], "checker"),
    **dict.fromkeys(["plot_robot", "smooth_trajectory"], "plots"),
    **dict.fromkeys(["add_arguments", "run_cli"], "cli"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY)
