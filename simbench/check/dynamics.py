"""The dynamics under test, behind one interface: ``evaluate(model, q, qd, qdd) -> (tau, M)``.

* :class:`SimbenchDynamics`: :mod:`simbench.dynamics` itself (trusted; also the reference
  with which causes are demonstrated on altered models).
* :class:`FunctionDynamics`: a user's ``tau = f(q, qd, qdd)``
  (:class:`~simbench.dynamics.protocols.InverseDynamicsFunction`), by name
  (``"module:function"``, run in a worker process) or as a callable (run in a child forked
  for each robot; a thread where there is no ``os.fork``).
* :class:`ModuleDynamics`: a model-level module given through the API
  (:class:`~simbench.dynamics.protocols.DynamicsModule`, e.g. an adapter around another
  library), run as a callable is.

User code never raises out of ``evaluate``: it raises :class:`UserCodeFault` with a verdict.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dynamics as simbench_dynamics
from ..dynamics.protocols import DynamicsModule, InverseDynamicsFunction
from ..errors import SimbenchError, shown
from ..model import RobotModel
from .isolation import ProcessRunner, ThreadRunner, runner
from .report import ERROR, FAIL
from .usercode import (FunctionNotFound, UserCodeFault, _describe, not_real, signature_problem, split_spec,
                       where_raised)

DEFAULT_TIMEOUT = 60.0


class SimbenchDynamics:
    """:mod:`simbench.dynamics`: RNEA and CRBA on the model (gravity: ``model.gravity``)."""

    label = "simbench.dynamics"
    trusted = True

    def tau(self, model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
            gravity: Sequence[float] | None = None) -> np.ndarray:
        g = None if gravity is None else tuple(float(x) for x in gravity)
        return np.asarray(simbench_dynamics.inverse_dynamics(model, q, qd, qdd, gravity=g), float)

    def M(self, model: RobotModel, q: np.ndarray) -> np.ndarray:
        return np.asarray(simbench_dynamics.mass_matrix(model, q), float)

    def evaluate(self, model: RobotModel, q: np.ndarray, qd: np.ndarray,
                 qdd: np.ndarray, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        return self.tau(model, q, qd, qdd), self.M(model, q) if with_M else None

    def load(self) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing to release."""


class FunctionDynamics:
    """A user's ``tau = f(q, qd, qdd)`` for one robot, in ``model.v_labels`` order (the joints'
    names when the base is fixed); ``M`` is
    derived column by column. Runs in a worker process (by name) or a forked child (a callable)."""

    trusted = False

    def __init__(self, runner: ProcessRunner | ThreadRunner, label: str):
        self.runner, self.label = runner, label

    def load(self) -> None:
        self.runner.load()

    def evaluate(self, model: RobotModel, q: np.ndarray, qd: np.ndarray,
                 qdd: np.ndarray, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(tau, M); without ``with_M`` (the plots) M is None and the function is called once per
        sample instead of n + 2 times."""
        return self.runner.evaluate(q, qd, qdd, model.v_labels, self.label, with_M)

    def close(self) -> None:
        self.runner.close()


#: what a model-level module is given and must return, for its messages
MODULE_CONTRACT = ("a model-level module's functions get every sample at once: q, qd, qdd of shape (N, n), "
                   "returning tau (N, n) and M (N, n, n), like simbench.dynamics")


def _batch(out: Any, shape: tuple[int, ...], label: str, what: str) -> np.ndarray:
    try:
        arr = np.asarray(out)
        problem = not_real(arr)
    except Exception:  # ragged sequences and objects numpy cannot hold
        arr, problem = None, "not real numbers"
    if problem:
        raise UserCodeFault(ERROR, f"{label}.{what} returned {type(out).__name__}, {problem}; expected floats "
                                   f"of shape {shape}")
    assert arr is not None
    if arr.shape != shape:
        raise UserCodeFault(ERROR, f"{label}.{what} returned shape {arr.shape} for q of shape {shape[:2]}; "
                                   f"expected {shape}: {MODULE_CONTRACT}")
    arr = np.asarray(arr, float)
    if not np.all(np.isfinite(arr)):
        raise UserCodeFault(FAIL, f"{label}.{what} returned non-finite values from finite inputs")
    return arr


class ModuleDynamics:
    """A model-level module: ``inverse_dynamics(model, q, qd, qdd, *, gravity)`` and
    ``mass_matrix(model, q)``, called once per robot with every sample (q, qd, qdd of shape
    (N, n), like :mod:`simbench.dynamics`, which is such a module); run in a forked child with a
    timeout, outputs checked. Batched rather than per configuration: the protocol is
    simbench.dynamics' own, whose batches are what makes it fast; a wrapper around a
    one-configuration library (``pin.rnea``) loops over the rows, or is given as a function
    ``tau = f(q, qd, qdd)``. When a batch call raises, one configuration is tried, so the message
    can say that the module works per configuration."""

    trusted = False

    def __init__(self, module: DynamicsModule, label: str, timeout: float | None = DEFAULT_TIMEOUT):
        self.module, self.label = module, label
        self.runner = runner(lambda *a: None, timeout)

    def load(self) -> None:
        """Nothing to load."""

    def close(self) -> None:
        """Nothing to release."""

    def _call(self, what: str, model: RobotModel, args: tuple, one: tuple, kwargs: dict) -> Any:
        """``module.what(model, *args, **kwargs)``; a fault naming the user's line, the shapes given
        and the contract when it raises (and whether ``one``, a single configuration, works)."""
        fn = getattr(self.module, what)
        try:
            return fn(model, *args, **kwargs)
        except BaseException as exc:  # anything the user's code raises (Ctrl-C goes to the main thread)
            try:
                single = np.shape(fn(model, *one, **kwargs))
            except BaseException:
                single = None
            shapes = ", ".join(f"{n} of shape {a.shape}" for n, a in zip(("q", "qd", "qdd"), args))
            works = (f"; called with one configuration (q of shape {one[0].shape}) it works, so it expects one "
                     f"configuration per call: loop over the rows inside it, or give a function "
                     f"tau = f(q, qd, qdd) instead" if single is not None else "")
            raise UserCodeFault(ERROR, f"{self.label}.{what} raised {_describe(exc)}{where_raised(exc)} "
                                       f"when given {shapes}: {MODULE_CONTRACT}{works}") from None

    def evaluate(self, model: RobotModel, q: np.ndarray, qd: np.ndarray,
                 qdd: np.ndarray, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        n = qd.shape[-1]

        def work(progress: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
            g = {"gravity": model.gravity}
            tau = self._call("inverse_dynamics", model, (q, qd, qdd), (q[0], qd[0], qdd[0]), g)
            tau = _batch(tau, qd.shape, self.label, "inverse_dynamics")
            if not with_M:
                return tau, None
            M = self._call("mass_matrix", model, (q,), (q[0],), {})
            return tau, _batch(M, qd.shape + (n,), self.label, "mass_matrix")

        return self.runner.run(work, self.label, f"on {len(q)} samples")


Dynamics = SimbenchDynamics | FunctionDynamics | ModuleDynamics


def _check_module_exists(spec: str) -> None:
    """A usage error when the module of ``"module:function"`` is nowhere to be found (nothing of
    it is executed here: only its top-level name is looked up)."""
    try:
        mod_name, _ = split_spec(spec)
    except ValueError as exc:
        raise SimbenchError(str(exc)) from None
    top = mod_name.split(".")[0]
    sys.path.insert(0, os.getcwd())
    try:
        found = top in sys.modules or importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    finally:
        sys.path.pop(0)
    if not found and ("/" in mod_name or os.sep in mod_name or mod_name.endswith(".py")):
        dotted = mod_name[:-3] if mod_name.endswith(".py") else mod_name
        dotted = ".".join(part for part in dotted.replace(os.sep, "/").split("/") if part and part != ".")
        raise SimbenchError(f"--dynamics {shown(spec)}: {shown(mod_name)} is a file path; expected module:function "
                            f"with the module's import name: {dotted}:{split_spec(spec)[1]} (from {os.getcwd()})")
    if not found:
        raise SimbenchError(f"--dynamics {shown(spec)}: no module named {shown(top)} in the current folder "
                            f"({os.getcwd()}) or on sys.path; expected module:function, e.g. mypkg.dyn:tau")


def load_dynamics(spec: Any = None, *, timeout: float | None = DEFAULT_TIMEOUT) -> Dynamics:
    """The dynamics under test from ``spec``:

    ``None`` -> :class:`SimbenchDynamics`; ``"module:function"`` -> the function in a worker
    process; an object with ``inverse_dynamics`` and ``mass_matrix`` -> :class:`ModuleDynamics`;
    a callable ``tau = f(q, qd, qdd)`` -> run in a forked child (:func:`isolation.runner`). ``timeout`` (seconds per robot, None
    for none) bounds the user's code. A malformed spec or a module that does not exist is a
    :class:`SimbenchError`; a module that fails to import is one too, when ``check`` loads it
    (one that hangs or crashes at import is a verdict, ERROR)."""
    if spec is None:
        return SimbenchDynamics()
    if isinstance(spec, (SimbenchDynamics, FunctionDynamics, ModuleDynamics)):
        return spec
    if timeout is not None and not (timeout > 0):
        raise SimbenchError(f"timeout {shown(timeout)}: expected a positive number of seconds")
    if isinstance(spec, str):
        _check_module_exists(spec)
        return FunctionDynamics(ProcessRunner(spec, timeout), spec)
    if isinstance(spec, DynamicsModule):
        return ModuleDynamics(spec, getattr(spec, "__name__", type(spec).__name__), timeout)
    if isinstance(spec, InverseDynamicsFunction):
        problem = signature_problem(spec)
        if problem:
            raise SimbenchError(f"dynamics: {problem}")
        return FunctionDynamics(runner(spec, timeout), getattr(spec, "__qualname__", repr(spec)))
    raise SimbenchError(f"dynamics must be None, 'module:function', a function tau = f(q, qd, qdd) or a "
                        f"module with inverse_dynamics and mass_matrix; got {shown(spec)}")


__all__ = ["DEFAULT_TIMEOUT", "SimbenchDynamics", "FunctionDynamics", "ModuleDynamics", "Dynamics", "MODULE_CONTRACT",
           "load_dynamics", "UserCodeFault", "FunctionNotFound"]
