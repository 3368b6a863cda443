"""Helpers for a user's own test suite (pytest or plain asserts)."""
from __future__ import annotations

import os
from typing import Any

from .errors import flag
from .dynamics.protocols import DynamicsModule, InverseDynamicsFunction

__all__ = ["assert_matches_pybullet"]


def assert_matches_pybullet(urdf: str | os.PathLike,
                            dynamics: InverseDynamicsFunction | DynamicsModule | str | None = None,
                            tol: float = 1e-8, *, samples: int = 20, seed: int = 0,
                            allow_explained: bool = True, **kwargs: Any) -> Any:
    """Assert that inverse dynamics and mass matrix match PyBullet for ``urdf`` (a URDF or a
    scene target ``SCENE.toml:BODY``).

    ``dynamics``: ``None`` for ``simbench.dynamics``; your ``tau = f(q, qd, qdd)``
    (:class:`~simbench.dynamics.protocols.InverseDynamicsFunction`, arrays in
    ``RobotModel.joint_names`` order; the mass matrix is derived from it column by column) or a
    model-level module (:class:`~simbench.dynamics.protocols.DynamicsModule`), run in a child
    forked from this process for each robot (it sees your test's state; what it changes there is
    not seen back), bounded by ``timeout=`` (default 60 s), so that a function that crashes,
    calls ``os._exit`` or never returns fails this assertion instead of ending the test run
    (where ``os.fork`` does not exist, Windows, it runs in a thread and such a crash ends the
    run); or ``"module:function"`` (run in a worker process). Passes on ``PASS``, and on ``EXPLAINED`` unless ``allow_explained`` is
    false (PyBullet alters the model on import for a demonstrated reason); raises
    ``AssertionError`` on ``FAIL`` (with the worst joint and state), on ``ERROR`` (your function
    raised, returned something that is not torques, crashed or did not return; with the state) and when nothing could
    be compared (``SKIPPED``). Extra keywords go to :func:`simbench.check.checker`
    (``base_orientation``, ``inertia_from_file``, ``gravity``, ``pinocchio``, ``timeout``).
    Returns the :class:`~simbench.check.RobotResult`.

    Example::

        def test_my_dynamics():
            assert_matches_pybullet("robot.urdf", dynamics=my_tau, tol=1e-9)
    """
    __tracebackhide__ = True  # pytest shows the assertion's message, not this helper's source
    from .check import ERROR, EXPLAINED, FAIL, SKIPPED, compare

    allow_explained = flag(allow_explained, "allow_explained")   # 'false' would be True
    kwargs.setdefault("pinocchio", False)
    result = compare(urdf, samples=samples, seed=seed, tol=tol, dynamics=dynamics, **kwargs)
    bad = {FAIL, ERROR, SKIPPED} | (set() if allow_explained else {EXPLAINED})
    if result.verdict in bad:
        lines = [result.line()]
        if result.worst_line():
            lines.append(result.worst_line())
        for c in result.causes:
            lines.append(f"{c.kind} [{', '.join(c.links)}]: {c.message}; tau error "
                         f"{c.before.tau_abs:.3g} -> {c.after.tau_abs:.3g}")
        raise AssertionError("dynamics do not match PyBullet:\n  " + "\n  ".join(lines))
    return result
