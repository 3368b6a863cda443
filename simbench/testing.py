"""Helpers for a user's own test suite (pytest or plain asserts)."""
from __future__ import annotations

import os
from typing import Any

__all__ = ["assert_matches_pybullet"]


def assert_matches_pybullet(urdf: str | os.PathLike, dynamics: Any = None, tol: float = 1e-8, *,
                            samples: int = 20, seed: int = 0, allow_explained: bool = True,
                            **kwargs: Any) -> Any:
    """Assert that inverse dynamics and mass matrix match PyBullet for ``urdf``.

    ``dynamics``: ``None`` for ``simbench.dynamics``, or your ``tau = f(q, qd, qdd)`` (arrays in
    ``RobotModel.joint_names`` order; the mass matrix is derived from it column by column), or
    ``"module:function"``. Passes on ``PASS``, and on ``EXPLAINED`` unless ``allow_explained`` is
    false (PyBullet alters the model on import for a demonstrated reason); raises
    ``AssertionError`` on ``FAIL`` (with the worst joint and state) and when nothing could be
    compared (``SKIPPED``). Extra keywords go to :func:`simbench.bullet.crosscheck.compare`
    (``base_orientation``, ``inertia_from_file``, ``gravity``, ``pinocchio``).
    Returns the :class:`~simbench.bullet.crosscheck.RobotResult`.

    Example::

        def test_my_dynamics():
            assert_matches_pybullet("robot.urdf", dynamics=my_tau, tol=1e-9)
    """
    from .bullet.crosscheck import EXPLAINED, FAIL, SKIPPED, compare

    kwargs.setdefault("pinocchio", False)
    result = compare(urdf, samples=samples, seed=seed, tol=tol, dynamics=dynamics, **kwargs)
    bad = {FAIL, SKIPPED} | (set() if allow_explained else {EXPLAINED})
    if result.verdict in bad:
        lines = [result.line()]
        if result.worst:
            w = result.worst
            lines.append(f"worst joint {w['joint']!r}: ours {w['tau_ours']!r}, PyBullet {w['tau_pybullet']!r} "
                         f"at q={w['q']!r}, qd={w['qd']!r}, qdd={w['qdd']!r}, gravity={w['gravity']!r}")
        for c in result.causes:
            lines.append(f"{c.kind} [{', '.join(c.links)}]: {c.message}; tau error "
                         f"{c.before.tau_abs:.3g} -> {c.after.tau_abs:.3g}")
        raise AssertionError("dynamics do not match PyBullet:\n  " + "\n  ".join(lines))
    return result
