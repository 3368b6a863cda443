"""A free rigid body on SE(3) (Michael Bauer, "Rigid Body Dynamics on Lie Groups").

State: pose ``g`` in SE(3) (body -> world, 4x4) and body twist ``xi = (w, v)`` in se(3)
(angular, linear velocity in body coordinates), ``g' = g xi^``. With the spatial inertia
``I`` (6x6, [angular; linear], about the body frame origin) and the body wrench ``F = (m, f)``:

    I xi' = F + ad_xi^T I xi

(Euler's equations and Newton's second law in one). Gravity, for a body frame at the centre
of mass, is the body wrench ``(0, R^T m g_vec)`` (Michael Bauer). Two integrators:

* ``"euler"``: Lie-group forward Euler, ``g <- g exp(dt xi)``, ``xi <- xi + dt xi'``;
* ``"rk4"``: Runge-Kutta-Munthe-Kaas of order 4: ``g = g_k exp(u)``,
  ``u' = dexp_{-u}^{-1}(xi)`` integrated with the classical RK4 tableau.

All functions accept leading batch dimensions.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, SimbenchError
from ..model import GRAVITY
from ..spatial import Ad, coad, dexp_inv, se3_exp, se3_inv

__all__ = ["inertia_matrix", "acceleration", "gravity_wrench", "kinetic_energy", "potential_energy",
           "spatial_momentum", "step", "simulate", "METHODS"]

METHODS = ("euler", "rk4")
Wrench = Callable[[float, np.ndarray, np.ndarray], Any]


def inertia_matrix(mass: float, inertia: Sequence[float] | np.ndarray,
                   com: Sequence[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """6x6 spatial inertia about the body frame origin, [angular; linear].

    ``inertia``: principal moments (3,) or a 3x3 tensor about the COM (body axes);
    ``com``: the COM in body coordinates (zero in Michael Bauer's choice of frame).
    """
    from ..model import spatial_inertia

    I = np.asarray(inertia, dtype=float)
    if I.shape == (3,):
        I = np.diag(I)
    if I.shape != (3, 3):
        raise ShapeError(f"inertia has shape {I.shape}; expected (3,) principal moments or (3, 3)")
    if not mass > 0:
        raise SimbenchError(f"mass must be positive, got {mass!r}")
    return spatial_inertia(float(mass), np.asarray(com, dtype=float), I)


def acceleration(I: np.ndarray, xi: np.ndarray, F: np.ndarray | None = None) -> np.ndarray:
    """``xi' = I^-1 (F + ad_xi^T I xi)``, shape (..., 6)."""
    I = np.asarray(I, dtype=float)
    xi = np.asarray(xi, dtype=float)
    rhs = coad(xi, np.einsum("...ij,...j->...i", I, xi))
    if F is not None:
        rhs = rhs + np.asarray(F, dtype=float)
    return np.linalg.solve(I, rhs[..., None])[..., 0]


def gravity_wrench(g: np.ndarray, mass: float, gravity: Sequence[float] = GRAVITY,
                   com: Sequence[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """Body wrench of gravity: ``(c x R^T m g_vec, R^T m g_vec)``; ``(0, R^T m g_vec)`` for a
    frame at the centre of mass (Michael Bauer)."""
    g = np.asarray(g, dtype=float)
    f = mass * np.einsum("...ji,j->...i", g[..., :3, :3], np.asarray(gravity, dtype=float))
    return np.concatenate([np.cross(np.asarray(com, dtype=float), f), f], axis=-1)


def kinetic_energy(I: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """``1/2 xi^T I xi``."""
    return 0.5 * np.einsum("...i,...ij,...j->...", xi, I, xi)


def potential_energy(g: np.ndarray, mass: float, gravity: Sequence[float] = GRAVITY,
                     com: Sequence[float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """``-m g_vec . p_com`` with the COM in world coordinates."""
    g = np.asarray(g, dtype=float)
    p = np.einsum("...ij,j->...i", g[..., :3, :3], np.asarray(com, dtype=float)) + g[..., :3, 3]
    return -mass * p @ np.asarray(gravity, dtype=float)


def spatial_momentum(g: np.ndarray, I: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """Momentum ``(angular about the world origin, linear)`` in world coordinates:
    ``Ad(g^-1)^T I xi``; constant when no wrench acts."""
    h = np.einsum("...ij,...j->...i", I, xi)
    return np.einsum("...ji,...j->...i", Ad(se3_inv(g)), h)


def _check_state(g: Any, xi: Any) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(g, dtype=float)
    xi = np.asarray(xi, dtype=float)
    if g.shape[-2:] != (4, 4):
        raise ShapeError(f"g has shape {g.shape}; expected (..., 4, 4) (a pose in SE(3))")
    if xi.shape[-1:] != (6,):
        raise ShapeError(f"xi has shape {xi.shape}; expected (..., 6) = (w, v) in body coordinates")
    if not (np.all(np.isfinite(g)) and np.all(np.isfinite(xi))):
        raise ShapeError("g and xi must be finite")
    return g, xi


def step(g: np.ndarray, xi: np.ndarray, I: np.ndarray, dt: float, t: float = 0.0,
         wrench: Wrench | None = None, method: str = "rk4") -> tuple[np.ndarray, np.ndarray]:
    """One step of the Lie-group integrator ``method`` ("euler" or "rk4" = RKMK4)."""
    def f(tt: float, gg: np.ndarray, x: np.ndarray) -> np.ndarray:
        F = None if wrench is None else np.asarray(wrench(tt, gg, x), dtype=float)
        return acceleration(I, x, F)

    if method == "euler":
        a = f(t, g, xi)
        return g @ se3_exp(dt * xi), xi + dt * a
    if method == "rk4":
        U1, X1 = xi, f(t, g, xi)
        u2, x2 = 0.5 * dt * U1, xi + 0.5 * dt * X1
        U2, X2 = dexp_inv(-u2, x2), f(t + 0.5 * dt, g @ se3_exp(u2), x2)
        u3, x3 = 0.5 * dt * U2, xi + 0.5 * dt * X2
        U3, X3 = dexp_inv(-u3, x3), f(t + 0.5 * dt, g @ se3_exp(u3), x3)
        u4, x4 = dt * U3, xi + dt * X3
        U4, X4 = dexp_inv(-u4, x4), f(t + dt, g @ se3_exp(u4), x4)
        u = dt / 6 * (U1 + 2 * U2 + 2 * U3 + U4)
        return g @ se3_exp(u), xi + dt / 6 * (X1 + 2 * X2 + 2 * X3 + X4)
    raise SimbenchError(f"unknown method {method!r}; expected one of {list(METHODS)}")


def simulate(g0: Any, xi0: Any, I: Any, dt: float, steps: int, *, wrench: Wrench | None = None,
             method: str = "rk4") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integrate ``g' = g xi^``, ``I xi' = F + ad_xi^T I xi`` from ``(g0, xi0)``.

    ``wrench(t, g, xi)`` returns the body wrench ``(m, f)`` (e.g. :func:`gravity_wrench`), or
    None for a torque-free body. Returns ``t`` (steps+1,), ``g`` (steps+1, ..., 4, 4),
    ``xi`` (steps+1, ..., 6).
    """
    g, xi = _check_state(g0, xi0)
    I = np.asarray(I, dtype=float)
    if I.shape[-2:] != (6, 6):
        raise ShapeError(f"I has shape {I.shape}; expected (..., 6, 6) spatial inertia")
    if method not in METHODS:
        raise SimbenchError(f"unknown method {method!r}; expected one of {list(METHODS)}")
    if not (np.isfinite(dt) and dt > 0):
        raise SimbenchError(f"dt must be a positive number of seconds, got {dt!r}")
    steps = int(steps)
    ts = np.arange(steps + 1) * dt
    G = np.empty((steps + 1,) + g.shape)
    X = np.empty((steps + 1,) + xi.shape)
    G[0], X[0] = g, xi
    for k in range(steps):
        g, xi = step(g, xi, I, dt, float(ts[k]), wrench, method)
        G[k + 1], X[k + 1] = g, xi
    return ts, G, X
