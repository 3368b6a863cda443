"""numpy in, numpy out: the jax functions of :mod:`.rnea` and :mod:`.lagrange` for a
:class:`~simbench.model.RobotModel`, jitted once per model (kept with the model), batched over
leading dimensions with ``jax.vmap``.

Arguments as :func:`simbench.dynamics.inverse_dynamics`: ``q`` (..., nq), velocities,
accelerations and forces (..., nv), leading dimensions broadcast; ``gravity`` in the root frame,
``None`` meaning ``model.gravity``. Derivatives are (..., nv, nv), taken in the tangent space
(Pinocchio's convention: q moves by ``integrate(q, dq)``), velocity entries in v's order.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ...errors import ShapeError, SimbenchError
from ...model import RobotModel
from ..inputs import (batch_shape, gravity_vector, in_root_frame, inertia_faults, joint_arrays, loss_flags,
                      wrench_items)
from ..packing import kernel_model
from . import lagrange as L
from . import rnea as R
from ._jax import jax, jnp
from .packed import packed
from .tree import link_frames, retract

__all__ = ["JaxDynamics", "jax_dynamics", "inverse_dynamics", "forward_dynamics",
           "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "mass_matrix",
           "christoffel_matrix", "coriolis_matrix", "gravity_torques",
           "lagrangian_inverse_dynamics"]

#: the entry this module keeps in a model's cache
KEY = "simbench.dynamics.autodiff"


class JaxDynamics(NamedTuple):
    """The jitted jax functions of one model for one configuration (jax arrays in and out; apply
    ``jax.vmap``, ``jax.grad``, ``jax.jacfwd`` to them). ``g`` is gravity (3,) in the root frame."""

    nq: int
    nv: int
    #: RNEA ``(q, v, a, g) -> tau``
    inverse_dynamics: Callable
    #: ``(q, v, tau, g) -> a``
    forward_dynamics: Callable
    #: ``(q, v, a, g) -> (dtau_dq, dtau_dv, dtau_da)``
    inverse_dynamics_derivatives: Callable
    #: ``(q, v, tau, g) -> (da_dq, da_dv, da_dtau)``
    forward_dynamics_derivatives: Callable
    #: Lagrangian ``q -> M = sum J^T G J``
    mass_matrix: Callable
    #: ``q -> Gamma``
    christoffel_matrix: Callable
    #: ``(q, v) -> C``
    coriolis_matrix: Callable
    #: ``(q, g) -> dP/dq``
    gravity_torques: Callable
    #: ``(q, v, a, g) -> M a + C v + g``
    lagrangian_inverse_dynamics: Callable
    #: ``(q, dv) -> q`` moved along the tangent vector dv (first order)
    retract: Callable


# ---------------------------------------------------------------------- compiled functions
#: ``f(P, q, v, x, g)`` on the padded arrays of :mod:`.packed`: compiled once per array size,
#: shared by every model of that size
_RNEA = {"inverse_dynamics": R.rnea, "forward_dynamics": R.forward_dynamics,
         "inverse_dynamics_derivatives": R.inverse_dynamics_derivatives,
         "forward_dynamics_derivatives": R.forward_dynamics_derivatives}
_BATCHED = {k: jax.jit(jax.vmap(f, in_axes=(None, 0, 0, 0, None))) for k, f in _RNEA.items()}
#: the derivatives with external wrenches: ``f(P, q, v, x, g, E, w)`` (:mod:`.rnea`)
_WRENCHED = {k: jax.jit(jax.vmap(getattr(R, k + "_wrenched"), in_axes=(None, 0, 0, 0, None, None, 0)))
             for k in ("inverse_dynamics", "forward_dynamics", "inverse_dynamics_derivatives",
                       "forward_dynamics_derivatives")}
#: a batch of N rows runs in blocks of one of these sizes (the smallest that holds it, else the
#: largest, the last block padded), so that a function compiles for at most three batch sizes
BLOCKS = (1, 16, 128)


def _cut(out: Any, nv: int) -> Any:
    """Padded outputs back to nv entries: vectors, or nv x nv blocks (the derivatives)."""
    if isinstance(out, tuple):
        return tuple(o[..., :nv, :nv] for o in out)
    return out[..., :nv]


def _on_unpadded(f: Callable) -> Callable:
    """``f`` for unpadded jax arrays q (nq,), v, x (nv,): pads, calls, cuts (jitted)."""
    def call(P, q, v, x, g):
        def pad(y, n):
            return jnp.zeros(n, dtype=y.dtype).at[:y.shape[0]].set(y)

        nvp = P["vpad"].shape[0]
        return _cut(f(P, pad(q, P["qpad"].shape[0]), pad(v, nvp), pad(x, nvp), g), v.shape[0])
    return jax.jit(call)


_UNPADDED = {k: _on_unpadded(f) for k, f in _RNEA.items()}


def _in_blocks(fn: Callable, rows: Sequence[np.ndarray], const: tuple) -> Any:
    """``fn(*const, *rows)`` over (N, ...) arrays in blocks of :data:`BLOCKS` (numpy out)."""
    N = rows[0].shape[0]
    size = next((b for b in BLOCKS if b >= N), BLOCKS[-1])
    total = -(-N // size) * size
    if total > N:   # pad with copies of the first row (a valid configuration)
        rows = [np.concatenate([r, np.broadcast_to(r[:1], (total - N,) + r.shape[1:])]) for r in rows]
    parts = [fn(*const, *(r[i:i + size] for r in rows)) for i in range(0, total, size)]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate([np.asarray(p[j]) for p in parts])[:N] for j in range(len(parts[0])))
    return np.concatenate([np.asarray(p) for p in parts])[:N]


# ---------------------------------------------------------------------- per model
class _Entry(NamedTuple):
    P: dict
    lt: L.LinkTree
    nq_pad: int
    nv_pad: int
    single: JaxDynamics
    batched: dict[str, Callable]


#: the arguments of each function of :class:`JaxDynamics`: (name, space) with space "q" (nq),
#: "v" (nv) or "g" (3)
_ARGS = {"inverse_dynamics": (("q", "q"), ("v", "v"), ("a", "v"), ("g", "g")),
         "forward_dynamics": (("q", "q"), ("v", "v"), ("tau", "v"), ("g", "g")),
         "inverse_dynamics_derivatives": (("q", "q"), ("v", "v"), ("a", "v"), ("g", "g")),
         "forward_dynamics_derivatives": (("q", "q"), ("v", "v"), ("tau", "v"), ("g", "g")),
         "mass_matrix": (("q", "q"),), "christoffel_matrix": (("q", "q"),),
         "coriolis_matrix": (("q", "q"), ("v", "v")), "gravity_torques": (("q", "q"), ("g", "g")),
         "lagrangian_inverse_dynamics": (("q", "q"), ("v", "v"), ("a", "v"), ("g", "g")),
         "retract": (("q", "q"), ("dv", "v"))}


def _checked(model: RobotModel, name: str, f: Callable) -> Callable:
    """``f`` refusing arguments of the wrong shape in one line. The shapes are static, so under
    ``jax.jit`` / ``vmap`` / ``grad`` the test runs once, when the caller is traced; a plain call
    pays a few tuple comparisons (well under a microsecond) before the jitted call."""
    spec = [(n, (model.nq,) if s == "q" else (model.nv,) if s == "v" else (3,),
             model.q_labels if s == "q" else model.v_labels if s == "v" else None)
            for n, s in _ARGS[name]]

    def call(*args):
        if len(args) != len(spec):
            raise SimbenchError(f"jax_dynamics({model.name!r}).{name} takes "
                                f"({', '.join(n for n, _, _ in spec)}), got {len(args)} arguments")
        for x, (n, shape, labels) in zip(args, spec):
            if np.shape(x) != shape:
                what = "gravity in the root frame (m/s^2)" if labels is None else \
                    f"joints in order {list(labels)}"
                raise ShapeError(f"{n} has shape {np.shape(x)}; expected {shape} with {what} "
                                 f"(one configuration: jax.vmap it for a batch)")
        return f(*args)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f.__doc__
    return call


def _build(model: RobotModel) -> _Entry:
    P = packed(model)
    lt = L.link_tree(model)
    lag = dict(mass_matrix=lambda q: L.mass_matrix(lt, q),
               christoffel_matrix=lambda q: L.christoffel_matrix(lt, q),
               coriolis_matrix=lambda q, v: L.coriolis_matrix(lt, q, v),
               gravity_torques=lambda g, q: L.gravity_torques(lt, q, g),
               lagrangian_inverse_dynamics=lambda g, q, v, a: L.inverse_dynamics(lt, q, v, a, g))
    with_g = {"gravity_torques", "lagrangian_inverse_dynamics"}
    batched = {k: jax.jit(jax.vmap(f, in_axes=(None,) * (k in with_g) + (0,) * (
        f.__code__.co_argcount - (k in with_g)))) for k, f in lag.items()}
    single = _checked_all(model, JaxDynamics(
        model.nq, model.nv, retract=jax.jit(lambda q, dv: retract(lt.bodies, q, dv)),
        **{k: partial(f, P) for k, f in _UNPADDED.items()},
        mass_matrix=jax.jit(lag["mass_matrix"]), christoffel_matrix=jax.jit(lag["christoffel_matrix"]),
        coriolis_matrix=jax.jit(lag["coriolis_matrix"]),
        gravity_torques=jax.jit(lambda q, g: L.gravity_torques(lt, q, g)),
        lagrangian_inverse_dynamics=jax.jit(lambda q, v, a, g: L.inverse_dynamics(lt, q, v, a, g))))
    return _Entry(P, lt, P["qpad"].shape[0], P["vpad"].shape[0], single, batched)


def _checked_all(model: RobotModel, jd: JaxDynamics) -> JaxDynamics:
    return jd._replace(**{k: _checked(model, k, getattr(jd, k)) for k in _ARGS})


def _entry(model: RobotModel) -> _Entry:
    e = model._cache.get(KEY)
    if e is None:
        e = model._cache[KEY] = _build(model)
    return e


def jax_dynamics(model: RobotModel) -> JaxDynamics:
    """The model's jitted jax functions (built once per model; each compiles at its first call;
    the RNEA-based ones are shared by every model of the same padded size)."""
    return _entry(model).single


def _shaped(out: Any, batch: tuple) -> Any:
    """(N, ...) numpy outputs as ``batch + (...)``."""
    if isinstance(out, tuple):
        return tuple(_shaped(o, batch) for o in out)
    return out.reshape(batch + out.shape[1:])


def _rows(model: RobotModel, named: Sequence[tuple[Any, str, str]]) -> tuple[tuple, list]:
    """:func:`simbench.dynamics.inputs.joint_arrays`, with a shortcut for one configuration of
    finite float64 vectors of the right lengths (what a loop passes)."""
    x = [v for v, _, _ in named]
    if all(type(a) is np.ndarray and a.dtype == np.float64 and a.ndim == 1 for a in x) and \
            [a.shape[0] for a in x] == [model.nq if sp == "q" else model.nv for _, _, sp in named] \
            and all(np.isfinite(a).all() for a in x):
        return (), [a[None] for a in x]
    return joint_arrays(model, *named)


def _traced(named: Sequence[tuple[Any, str, str]], gravity: Any) -> bool:
    """Whether any argument is a jax tracer (the caller is inside ``jax.grad``, ``jit``, ...)."""
    return any(isinstance(x, jax.core.Tracer) for x in (gravity, *(v for v, _, _ in named)))


def _traced_arrays(model: RobotModel, named: Sequence[tuple[Any, str, str]]) -> tuple[list, tuple]:
    """The joint arrays as jax arrays, checked (last dimension nq or nv) and their batch shape."""
    xs = []
    for v, n, sp in named:
        size, labels = (model.nq, model.q_labels) if sp == "q" else (model.nv, model.v_labels)
        x = jnp.asarray(v, dtype=float)
        if x.ndim == 0 or x.shape[-1] != size:
            raise ShapeError(f"{n} has shape {x.shape}; expected (..., {size}) with joints in order "
                             f"{list(labels)}")
        xs.append(x)
    batch = batch_shape(xs, [n for _, n, _ in named], f"q must be (..., {model.nq}) and velocities (..., {model.nv})")
    return xs, batch


def _call_traced(model: RobotModel, name: str, named: Sequence[tuple[Any, str, str]],
                 gravity: Any, f_ext: Any = None) -> Any:
    """The module-level function on jax tracers: :func:`jax_dynamics`'s function, vmapped over
    the broadcast leading dimensions (jax arrays out)."""
    if f_ext:
        raise SimbenchError(f"{name}: f_ext with jax-traced inputs (inside jax.grad / jit) is not "
                            f"supported; call it with numbers, or differentiate "
                            f"simbench.dynamics.autodiff.jax_dynamics(model).{name} without f_ext")
    fn = getattr(_entry(model).single, name)
    xs, batch = _traced_arrays(model, named)
    if gravity is None or not isinstance(gravity, jax.core.Tracer):
        g = jnp.asarray(gravity_vector(model, gravity))
    else:
        g = jnp.asarray(gravity, dtype=float)
        if g.shape != (3,):
            raise ShapeError(f"gravity has shape {g.shape}; expected (3,) (m/s^2, root frame)")
    flat = [jnp.broadcast_to(x, batch + x.shape[-1:]).reshape((-1, x.shape[-1])) for x in xs]
    with_g = _ARGS[name][-1][1] == "g"
    out = jax.vmap(lambda *r: fn(*r, g) if with_g else fn(*r))(*flat)
    return jax.tree_util.tree_map(lambda o: o.reshape(batch + o.shape[1:]), out)


def _losses(model: RobotModel, qd: Any, damping: bool, friction: bool) -> tuple[Any, Any]:
    """(``D q' + f_c sign(q')``, D) per velocity entry (:func:`simbench.dynamics.inputs.joint_losses`);
    numpy for numpy ``qd``, jax for a tracer."""
    d = kernel_model(model)
    xp = jnp if isinstance(qd, jax.core.Tracer) else np
    D = d.damping if damping else np.zeros(model.nv)
    return D * qd + (d.friction * xp.sign(qd) if friction else 0.0), D


def _call_rnea(model: RobotModel, name: str, named: Sequence[tuple[Any, str, str]],
               gravity: Any, f_ext: Any = None, losses: tuple[Any, Any] = (False, False)) -> Any:
    """Validate and broadcast, pad to the model's padded size, run the compiled function in
    blocks, cut, and give numpy arrays with the batch shape in front (on jax tracers:
    :func:`_call_traced`). ``losses``: the ``damping`` and ``friction`` flags, the joint losses
    ``D q' + f_c sign(q')`` added to the torques (their q' derivative is ``D``; friction's is 0
    away from q' = 0, where sign is not differentiable)."""
    damping, friction = loss_flags(*losses) if losses[0] is not False or losses[1] is not False \
        else (False, False)
    if damping or friction:
        if not _traced(named, gravity):   # validated numbers, so that the losses can be taken
            batch, flat = joint_arrays(model, *named)
            named = [(a.reshape(batch + a.shape[-1:]), n, sp) for a, (_, n, sp) in zip(flat, named)]
        else:
            named = [(x, n, sp) for x, (_, n, sp) in zip(_traced_arrays(model, named)[0], named)]
        qd, x = named[1][0], named[2][0]
        loss, D = _losses(model, qd, damping, friction)
        forward = name.startswith("forward")
        named = [named[0], named[1], (x - loss if forward else x, named[2][1], named[2][2])]
        out = _call_rnea(model, name, named, gravity, f_ext)
        if name == "inverse_dynamics":
            return out + loss
        if name == "forward_dynamics":
            return out
        dq, dv, dx = out
        return (dq, dv + np.diag(D), dx) if not forward else (dq, dv - dx * D, dx)
    if _traced(named, gravity):
        return _call_traced(model, name, named, gravity, f_ext)
    e = _entry(model)
    batch, (Q, V, X) = _rows(model, named)
    g = np.array(gravity_vector(model, gravity))
    N = Q.shape[0]
    Qp, Vp, Xp = np.zeros((N, e.nq_pad)), np.zeros((N, e.nv_pad)), np.zeros((N, e.nv_pad))
    Qp[:, :model.nq], Vp[:, :model.nv], Xp[:, :model.nv] = Q, V, X
    wrenched = _wrench_rows(model, e, f_ext, batch, N) if f_ext else None
    if N == 0:
        out = _zeros(name, model.nv)
    elif wrenched is not None:
        E, W = wrenched
        out = _cut(_in_blocks(lambda *r: _WRENCHED[name](e.P, *r[:3], g, E, r[3]), (Qp, Vp, Xp, W), ()), model.nv)
    else:
        out = _cut(_in_blocks(lambda *r: _BATCHED[name](e.P, *r, g), (Qp, Vp, Xp), ()), model.nv)
    return _shaped(out, batch)


def _wrench_rows(model: RobotModel, e: _Entry, f_ext: Any, batch: tuple, N: int) -> tuple[dict, np.ndarray] | None:
    """``f_ext`` (link name -> (..., 6) [torque, force], world frame, about the link origin, as
    :func:`simbench.dynamics.inverse_dynamics` takes it) as the arrays of :mod:`.rnea`'s wrenched
    functions: ``E`` (each wrench's body and the link origin in it) and (N, nw, 6) wrenches in
    the root frame; None when every wrench acts on links welded to a fixed root (on the world)."""
    items, _ = wrench_items(model, f_ext, batch)
    body_of, offset = link_frames(model)
    items = [(k, arr) for k, arr in items if body_of[k] >= 0]
    if not items:
        return None
    Wb = np.zeros((len(items), e.P["AB"].shape[0]))
    Wb[np.arange(len(items)), [body_of[k] for k, _ in items]] = 1.0
    Wo = np.array([offset[k][:3, 3] for k, _ in items])
    W = np.stack([np.broadcast_to(arr, batch + (6,)).reshape(N, 6) for _, arr in items], axis=1)
    in_root_frame(None if model.root_pose is None else np.asarray(model.root_pose)[:3, :3], W)
    return {"Wb": jnp.asarray(Wb), "Wo": jnp.asarray(Wo)}, np.ascontiguousarray(W)


def _zeros(name: str, nv: int) -> Any:
    """Empty (0, ...) outputs of ``name``."""
    if name.endswith("derivatives"):
        return tuple(np.zeros((0, nv, nv)) for _ in range(3))
    return np.zeros((0, nv))


def _call_lagrange(model: RobotModel, name: str, named: Sequence[tuple[Any, str, str]],
                   gravity: Any = False, shape: tuple = ()) -> np.ndarray:
    e = _entry(model)
    if name in ("christoffel_matrix", "coriolis_matrix", "lagrangian_inverse_dynamics"):
        L.needs_minimal(e.lt, name.replace("_", " "))
    if _traced(named, None if gravity is False else gravity):
        return _call_traced(model, name, named, None if gravity is False else gravity)
    batch, flat = joint_arrays(model, *named)
    const = () if gravity is False else (np.array(gravity_vector(model, gravity)),)
    if flat[0].shape[0] == 0:
        return np.zeros(batch + shape)
    return _shaped(_in_blocks(e.batched[name], flat, const), batch)


def _finite(model: RobotModel, x: np.ndarray, what: str) -> np.ndarray:
    if isinstance(x, jax.core.Tracer):   # traced: no values to check
        return x
    if not np.all(np.isfinite(x)):
        raise SimbenchError(f"{model.name}: {what} is not finite: the mass matrix is singular "
                            f"(not positive definite) or the inputs overflow{inertia_faults(model)}")
    return x


def inverse_dynamics(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Any = None,
                     damping: bool = False, friction: bool = False) -> np.ndarray:
    """``tau = M q'' + C q' + g - sum J_i^T f_i`` by the RNEA written in jax, shape (..., nv);
    ``f_ext``, ``damping``, ``friction`` as :func:`simbench.dynamics.inverse_dynamics` takes them.
    Inside ``jax.grad`` / ``jit`` (jax tracers as arguments) this and the other functions here
    run :func:`jax_dynamics`'s jax function, vmapped over leading dimensions, and return jax
    arrays."""
    return _call_rnea(model, "inverse_dynamics",
                      ((q, "q", "q"), (qd, "qd", "v"), (qdd, "qdd", "v")), gravity, f_ext,
                     (damping, friction))


def forward_dynamics(model: RobotModel, q: Any, qd: Any, tau: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Any = None,
                     damping: bool = False, friction: bool = False) -> np.ndarray:
    """``q'' = M^-1 (tau - C q' - g + sum J_i^T f_i)`` in jax (M and the bias forces from the RNEA,
    Cholesky), shape (..., nv); ``f_ext``, ``damping``, ``friction`` as
    :func:`simbench.dynamics.forward_dynamics`."""
    out = _call_rnea(model, "forward_dynamics",
                     ((q, "q", "q"), (qd, "qd", "v"), (tau, "tau", "v")), gravity, f_ext,
                     (damping, friction))
    return _finite(model, out, "forward dynamics")


def inverse_dynamics_derivatives(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                                 gravity: Sequence[float] | None = None, f_ext: Any = None,
                                 damping: bool = False, friction: bool = False
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dtau_dq, dtau_dqd, dtau_dqdd)`` of ``tau = ID(q, q', q'')``, each (..., nv, nv);
    ``dtau_dqdd = M``. Pinocchio's ``computeRNEADerivatives``, by ``jax.jacfwd`` of the RNEA
    (dq in the tangent space). ``f_ext`` as :func:`simbench.dynamics.inverse_dynamics` takes it
    (link name -> (..., 6) [torque, force], world frame, about the link origin): the wrench
    stays fixed in the world while its point moves with the link, so ``-J(q)^T w`` adds to
    ``dtau_dq`` (Pinocchio's ``fext`` is held in the joints' local frames instead).
    ``damping=True`` / ``friction=True`` add the joint losses ``D q' + f_c sign(q')`` as
    :func:`simbench.dynamics.inverse_dynamics` does: ``dtau_dqd`` gains ``D``; friction's
    derivative is 0 (away from q' = 0, where sign jumps)."""
    return _call_rnea(model, "inverse_dynamics_derivatives",
                      ((q, "q", "q"), (qd, "qd", "v"), (qdd, "qdd", "v")), gravity, f_ext,
                     (damping, friction))


def forward_dynamics_derivatives(model: RobotModel, q: Any, qd: Any, tau: Any, *,
                                 gravity: Sequence[float] | None = None, f_ext: Any = None,
                                 damping: bool = False, friction: bool = False
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dqdd_dq, dqdd_dqd, dqdd_dtau)`` of ``q'' = FD(q, q', tau)``, each (..., nv, nv);
    ``dqdd_dtau = M^-1``, ``dqdd_d(q, q') = -M^-1 dtau_d(q, q')`` at ``q'' = FD(q, q', tau)``.
    Pinocchio's ``computeABADerivatives``, from jax (dq in the tangent space); ``f_ext`` as in
    :func:`inverse_dynamics_derivatives`. ``damping`` / ``friction``: ``q'' = M^-1 (tau - b -
    D q' - f_c sign(q'))``, so ``dqdd_dqd`` gains ``-M^-1 D``."""
    out = _call_rnea(model, "forward_dynamics_derivatives",
                     ((q, "q", "q"), (qd, "qd", "v"), (tau, "tau", "v")), gravity, f_ext,
                     (damping, friction))
    return tuple(_finite(model, o, "the forward dynamics derivative") for o in out)


def mass_matrix(model: RobotModel, q: Any) -> np.ndarray:
    """``M = sum_i J_i^T G_i J_i`` with ``J_i`` by ``jax.jacfwd`` of the link poses, (..., nv, nv)."""
    return _call_lagrange(model, "mass_matrix", ((q, "q", "q"),), shape=(model.nv,) * 2)


def christoffel_matrix(model: RobotModel, q: Any) -> np.ndarray:
    """``Gamma[..., i, j, k] = dM_ij/dq_k - 1/2 dM_jk/dq_i`` by ``jax.jacfwd(M)``, (..., n, n, n)
    (the post's array; see :mod:`simbench.dynamics.autodiff.lagrange`). Minimal coordinates."""
    return _call_lagrange(model, "christoffel_matrix", ((q, "q", "q"),), shape=(model.nv,) * 3)


def coriolis_matrix(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``C[..., i, j] = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) q'_k``, (..., n, n): the
    C of :func:`simbench.dynamics.coriolis_matrix` and Pinocchio's ``computeCoriolisMatrix``
    (``M' - 2 C`` skew-symmetric), by ``jax.jacfwd(M)``. Its ``C q'`` equals the post's
    ``sum_j Gamma[i, j, k] q'_j`` with :func:`christoffel_matrix`. Minimal coordinates."""
    return _call_lagrange(model, "coriolis_matrix", ((q, "q", "q"), (qd, "qd", "v")),
                          shape=(model.nv,) * 2)


def gravity_torques(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None
                    ) -> np.ndarray:
    """``g(q) = dP/dq`` by ``jax.jacfwd`` of the potential energy, (..., nv)."""
    return _call_lagrange(model, "gravity_torques", ((q, "q", "q"),), gravity, (model.nv,))


def lagrangian_inverse_dynamics(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                                gravity: Sequence[float] | None = None) -> np.ndarray:
    """``tau = M q'' + C q' + g`` by the post's Lagrangian formulation in jax, (..., n).
    Minimal coordinates."""
    return _call_lagrange(model, "lagrangian_inverse_dynamics",
                          ((q, "q", "q"), (qd, "qd", "v"), (qdd, "qdd", "v")), gravity,
                          (model.nv,))
