"""Arguments of the dynamics functions: the fast-path test, validation with clear errors, and
the conversions of the general path.

One configuration or a small batch first goes to the C entry (``kernels/_call.c``, where it was
built): it reads float64 and float32 arrays, lists and tuples of numbers itself, and the compiled
entry checks lengths and finiteness and returns a status. Where the extension is not built, the
Python fast path (:func:`fast3` / :func:`fast1`) is one test before the call: every joint array
is a float64 ``numpy.ndarray`` with the same number of dimensions (1: one configuration; 2: a
small batch run serially); lists and tuples are packed as float64 by one ``struct.pack``
(``KernelModel.pack3``); there only the model's gravity (None, or an equal tuple) takes it.
One configuration with external wrenches (a dict of link names to 6 numbers each) is packed by
:func:`fast_wrenches` for the compiled row entries; damping and friction are added to the fast
path's result (:func:`joint_losses`). Anything else (broadcasting, large batches, batched
wrenches) takes the general path, which converts once and raises the clear error for bad input
(:func:`simbench.model.as_joint_array`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, SimbenchError, lookup, meant_flag, real_array, shown
from ..model import RobotModel, as_joint_array
from .kernels.entries import OK
from .packing import KernelModel

__all__ = ["F4", "F8", "LISTS", "ND", "SERIAL_ROWS", "fast3", "fast1", "as_float3", "gravity_vector",
           "fext_array", "fast_wrenches", "wrenched_call", "joint_arrays", "joint_losses",
           "loss_flags", "same_gravity", "general_args", "plain_batch", "NO_FEXT"]

F8 = np.dtype(np.float64)
F4 = np.dtype(np.float32)
ND = np.ndarray
#: batches up to this many rows run serially in the calling thread (no threads to start)
SERIAL_ROWS = 32
#: the external wrenches of a batch without them (never read)
NO_FEXT = np.zeros((1, 1, 6))


def fast3(a: Any, b: Any, c: Any) -> int:
    """1 or 2 when a, b, c are float64 arrays of that many dimensions (one configuration / a
    small batch) that the compiled entries take as they are; 0 otherwise."""
    if a.__class__ is ND and b.__class__ is ND and c.__class__ is ND and \
            a.dtype is F8 and b.dtype is F8 and c.dtype is F8:
        nd = a.ndim
        if nd == b.ndim == c.ndim and (nd == 1 or (nd == 2 and a.shape[0] <= SERIAL_ROWS)):
            return nd
    return 0


def fast1(a: Any) -> int:
    """:func:`fast3` for one array."""
    if a.__class__ is ND and a.dtype is F8:
        nd = a.ndim
        if nd == 1 or (nd == 2 and a.shape[0] <= SERIAL_ROWS):
            return nd
    return 0


def plain_batch(d: KernelModel, q: Any, qd: Any = None, x: Any = None) -> bool:
    """A large batch the span kernels read as it is: q (N, nq), and qd, x (N, nv) when given, all
    C-contiguous float64 arrays, N > SERIAL_ROWS. The caller then skips the conversions and
    checks the *results* for non-finite values (a nan or inf in an input gives a nan or inf in
    the torques or accelerations), and only then validates the inputs, for the clear error.
    Measured per 10,000 iiwa configurations: the general path's conversions and finiteness
    checks cost 150-220 us, 5-10 % of a batched inverse dynamics call."""
    if q.__class__ is not ND or q.dtype is not F8 or q.ndim != 2 or not q.flags.c_contiguous:
        return False
    N = q.shape[0]
    if N <= SERIAL_ROWS or q.shape[1] != d.nq:
        return False
    for a in (qd, x):
        if a is not None and (a.__class__ is not ND or a.dtype is not F8 or a.shape != (N, d.nv)
                              or not a.flags.c_contiguous):
            return False
    return True


_SEQUENCES = (list, tuple, ND)
#: the sequences that :func:`simbench.dynamics.inverse_dynamics` packs for its fast path
LISTS = (list, tuple)


def as_float3(a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
    """Three 1-D sequences (lists, tuples, arrays of another dtype) of numbers as float64 arrays,
    for the fast path; (None, None, None) when they are anything else (mappings, nested lists,
    text, complex numbers), which the general path then checks and explains."""
    if fast3(a, b, c) == 1:
        return a, b, c
    if a.__class__ in _SEQUENCES and b.__class__ in _SEQUENCES and c.__class__ in _SEQUENCES:
        try:
            x, y, z = real_array(a), real_array(b), real_array(c)
        except (TypeError, ValueError, OverflowError):   # text, ragged: the general path explains
            return None, None, None
        if x.ndim == 1 and y.ndim == 1 and z.ndim == 1:
            return x, y, z
    return None, None, None


def same_gravity(d: KernelModel, gravity: Any) -> bool:
    """``gravity`` is None or a tuple equal to the model's (the fast path's gravity)."""
    return gravity is None or (gravity.__class__ is tuple and gravity == d.gravity)


def gravity_vector(model: RobotModel, gravity: Sequence[float] | None) -> tuple[float, float, float]:
    """``gravity`` as three floats; ``None`` means the model's own (``model.gravity``)."""
    try:
        g = np.asarray(model.gravity if gravity is None else gravity, dtype=float)
    except (TypeError, ValueError, OverflowError):   # not numbers, or an int beyond float64
        g = None
    if g is None or g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ShapeError(f"gravity must be 3 finite numbers (m/s^2, root frame), got {shown(gravity)}")
    return float(g[0]), float(g[1]), float(g[2])


def fast_wrenches(d: KernelModel, q: Any, qd: Any, x: Any,
                  f_ext: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """One configuration with external wrenches, packed for the compiled row entries: (q, qd, x
    as (1, n) float64 arrays, the wrenches (1, nb, 6) over the link tree) when q, qd, x are 1-D
    sequences of numbers (:func:`as_float3`) and ``f_ext`` is a dict of link names to 6 numbers
    each; None for anything else, which the general path checks and explains (lengths and
    finiteness, of the result too, are checked by the entry). Measured on the iiwa, one wrench:
    a call of ``inverse_dynamics`` 5.9 us (2.8 us of it here; the plain call 2.0 us in the same
    run), 10.9 us before the result's finiteness moved into the entry and float64 arrays were
    taken as they are; the general path 104 us."""
    if f_ext.__class__ is not dict or not f_ext:
        return None
    q1, qd1, x1 = as_float3(q, qd, x)
    if q1 is None:
        return None
    F = np.zeros((1, d.links.idata.shape[0], 6))
    off = d.link_offset
    for name, w in f_ext.items():
        k = d.link_index.get(name) if name.__class__ is str else None
        if k is None:
            return None
        try:
            w = np.asarray(w, dtype=F8)
        except (TypeError, ValueError, OverflowError):
            return None
        if w.shape != (6,):
            return None
        F[0, k + off] += w
    return q1[None], qd1[None], x1[None], in_root_frame(d.root_R, F)


def in_root_frame(R: np.ndarray | None, F: np.ndarray) -> np.ndarray:
    """World wrenches F (..., 6), in place, in the root frame of a model placed at ``root_pose``
    with rotation R: ``(R^T n, R^T f)``, about the same points; unchanged when R is None (the
    root at the origin)."""
    if R is not None:
        F[..., :3], F[..., 3:] = F[..., :3] @ R, F[..., 3:] @ R
    return F


def wrenched_call(model: RobotModel, d: KernelModel, rows: Any, q: Any, qd: Any, x: Any,
                  gravity: Sequence[float] | None, f_ext: Any) -> np.ndarray | None:
    """One configuration with external wrenches (:func:`fast_wrenches`) by one call of the
    compiled row entry ``rows`` (``id_rows_raw`` or ``fd_rows_raw``); None if not taken or not
    finite (the general path then checks the inputs and explains)."""
    args = fast_wrenches(d, q, qd, x, f_ext)
    if args is None:
        return None
    out = np.empty((1, d.nv))
    g = d.gravity if gravity is None else gravity_vector(model, gravity)
    if rows(d.links.packed, *args[:3], *g, args[3], True, out) == OK:   # OK: finite too
        return out[0]
    return None


def batch_shape(arrays: Sequence[Any], names: Sequence[str], expected: str) -> tuple[int, ...]:
    """The broadcast leading dimensions of joint arrays (numpy's or jax's, last axis the joints),
    or one line naming each array's shape and ``expected``."""
    try:
        return np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    except ValueError:
        raise ShapeError("joint arrays do not broadcast: " + ", ".join(
            f"{n} {a.shape}" for a, n in zip(arrays, names)) + f"; {expected}") from None


def joint_arrays(model: RobotModel, *named: tuple[Any, str, str]) -> tuple[tuple, list[np.ndarray]]:
    """Validate ``(value, name, space)`` triples (space "q": (..., nq), "v": (..., nv)) and
    broadcast their batch dimensions; returns the batch shape and C-contiguous (N, size) arrays."""
    arrs = [as_joint_array(model, v, n, s) for v, n, s in named]
    batch = batch_shape(arrs, [n for _, n, _ in named],
                        f"q must be (..., {model.nq}) and velocities (..., {model.nv})")
    rows = int(np.prod(batch, dtype=np.int64))
    flat = [np.ascontiguousarray(np.broadcast_to(a, batch + a.shape[-1:]).reshape(rows, a.shape[-1]),
                                 dtype=float) for a in arrs]
    return batch, flat


def fext_array(model: RobotModel, d: KernelModel, f_ext: Mapping[str, Any] | None,
               batch: tuple) -> tuple[np.ndarray, bool]:
    """``f_ext`` (link name -> (..., 6) wrench [torque, force], world frame, about the link
    origin) as (Nf, nb, 6) over the bodies of the link tree, Nf = 1 or prod(batch); a (1, 1, 6)
    placeholder and False without external wrenches."""
    if f_ext is None or len(f_ext) == 0:
        return NO_FEXT, False
    items, fb = wrench_items(model, f_ext, batch)
    nb = d.links.idata.shape[0]
    shape = (1,) if fb == () else batch
    out = np.zeros(shape + (nb, 6))
    for k, arr in items:
        out[..., k + d.link_offset, :] += arr
    return np.ascontiguousarray(in_root_frame(d.root_R, out).reshape((-1, nb, 6))), True


def wrench_items(model: RobotModel, f_ext: Any, batch: tuple) -> tuple[list[tuple[int, np.ndarray]], tuple]:
    """``f_ext`` checked: (index in ``model.link_names``, (..., 6) wrench) per entry, and the
    wrenches' batch shape (which broadcasts with the joint arrays' ``batch``)."""
    if not isinstance(f_ext, Mapping):
        raise ShapeError(f"f_ext must be a dict link name -> 6-vector [torque, force] (world frame, "
                         f"about the link origin), got {type(f_ext).__name__}")
    index = {n: k for k, n in enumerate(model.link_names)}
    items = []
    fb: tuple = ()
    for name, w in f_ext.items():
        k = lookup(index, name, "link", model.name)
        try:
            arr = np.asarray(w, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ShapeError(f"f_ext[{name!r}] = {shown(w)}; expected finite numbers, a (..., 6) wrench "
                             f"[torque (3), force (3)] in the world frame about the link origin") from None
        if arr.ndim == 0 or arr.shape[-1] != 6:
            raise ShapeError(f"f_ext[{name!r}] has shape {arr.shape}; expected (..., 6) = "
                             f"[torque (3), force (3)] in the world frame about the link origin")
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ShapeError(f"f_ext[{name!r}] holds a non-finite value {arr[tuple(bad)]} at index "
                             f"{tuple(int(i) for i in bad)}; expected finite numbers")
        try:
            np.broadcast_shapes(arr.shape[:-1], batch)
            fb = np.broadcast_shapes(fb, arr.shape[:-1])
        except ValueError:
            raise ShapeError(f"f_ext[{name!r}] has batch shape {arr.shape[:-1]}, which does not "
                             f"broadcast with the joint arrays' batch shape {batch}") from None
        items.append((k, arr))
    return items, fb


def general_args(model: RobotModel, d: KernelModel, q: Any, qd: Any, x: Any, x_name: str,
                 gravity: Sequence[float] | None, f_ext: Mapping[str, Any] | None) -> tuple:
    """The general path's arguments: (batch shape, Q, QD, X as (N, size) float64 arrays,
    gravity (3 floats), external wrenches (Nf, nb, 6), whether there are any, and the tree to
    use: the link tree with external wrenches (they act on links), else the dynamics tree)."""
    batch, (Q, QD, X) = joint_arrays(model, (q, "q", "q"), (qd, "qd", "v"), (x, x_name, "v"))
    gx, gy, gz = gravity_vector(model, gravity)
    F, has = fext_array(model, d, f_ext, batch)
    return batch, Q, QD, X, (gx, gy, gz), F, has, (d.links if has else d.bodies)


def joint_losses(d: KernelModel, qd: np.ndarray, damping: bool, friction: bool) -> np.ndarray:
    """``D q'`` (viscous damping) plus ``f_c sign(q')`` (Coulomb friction) per velocity entry:
    the ``d_ii q'_i`` term of Ankur Handa, "Understanding Physics Engines"."""
    if damping and friction:
        return d.damping * qd + d.friction * np.sign(qd)
    if damping:
        return d.damping * qd
    if friction:
        return d.friction * np.sign(qd)
    return np.zeros(np.broadcast_shapes(np.shape(qd), (d.nv,)))




def inertia_faults(model: RobotModel) -> str:
    """Why M can be singular, for an error message: ``"; massless links: ['a']; negative mass:
    'b' (-0.3 kg); a negative principal moment of inertia: 'c' (principal moments [...])"``, or ``""``."""
    names, masses = model.link_names[1:], model.link_mass[1:]
    parts = []
    light = [n for n, m in zip(names, masses) if m == 0]
    if light:
        parts.append(f"massless links: {light}")
    negative = [f"{n!r} ({m:g} kg)" for n, m in zip(names, masses) if m < 0]
    if negative:
        parts.append(f"negative mass: {', '.join(negative)}")
    indefinite = [f"{i.data.get('link')!r} (principal moments "
                  f"{[float(f'{x:.3g}') for x in i.data.get('principal', [])]})"
                  for i in model.issues if i.kind == "inertia_not_positive_definite" and i.unphysical]
    if indefinite:
        parts.append(f"a negative principal moment of inertia: {', '.join(indefinite)}")
    return "".join(f"; {p}" for p in parts)


def loss_flags(damping: Any, friction: Any) -> tuple[bool, bool]:
    """``damping`` and ``friction`` as bools: True or False (numpy's too); anything else is one
    line (a string such as ``"yes"`` would be truthy, an array ambiguous). The callers test
    ``damping is not False or friction is not False`` first: the plain call pays two identity
    tests (about 10 ns), not this call."""
    return _flag(damping, "damping"), _flag(friction, "friction")


def _flag(value: Any, what: str) -> bool:
    if value is True or value is False or isinstance(value, np.bool_):
        return bool(value)
    field = f"joint_{what}"
    meant = meant_flag(value)
    if meant is not None:
        hint = f" (did you mean {meant}?)"
    else:   # a number, an array, a list, a mapping: per-joint values
        hint = f"; per-joint values go in the model: model.replace({field}=...), then {what}=True"
    raise SimbenchError(f"{what} = {shown(value)}; expected True or False, whether to add the model's "
                        f"{field}{hint}")
