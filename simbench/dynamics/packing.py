"""A :class:`~simbench.model.RobotModel` packed for the kernels (the "model" of Pinocchio's
model/data split; the per-call scratch lives in :attr:`KernelModel.packed`).

Two trees, both in the layout of :mod:`.kernels.layout`:

* the *link tree*: one body per link (forward kinematics, Jacobians, external wrenches, which act
  on links); with a floating base, body 0 is the world and link k is body k + 1, attached to its
  parent by a free-flyer joint for the root;
* the *dynamics tree*: links attached by fixed joints merged into their parent body (fewer bodies,
  the same dynamics).

:func:`kernel_model` is the one accessor: it packs a model once and keeps the result with the
model (a model is immutable; its modified copies start afresh).
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import SimbenchError
from ..joint_space import not_a_model
from ..model import FIXED, FREE, PRISMATIC, REVOLUTE, SPHERICAL, RobotModel
from ..spatial import skew, transform_inertia
from .kernels import layout as L
from .kernels.tree import pack

__all__ = ["KernelModel", "kernel_model", "KEY"]

#: the one entry this module keeps in a model's cache
KEY = "simbench.dynamics"

_CODES = {FIXED: L.FIXED, REVOLUTE: L.REVOLUTE, PRISMATIC: L.PRISMATIC, SPHERICAL: L.SPHERICAL,
          FREE: L.FREE}


@dataclass(frozen=True, eq=False)
class Tree:
    """One tree in the kernel layout (``idata``, ``fdata``) and as the flat array the kernels take
    (``packed``, :mod:`.kernels.tree`, with the single-call scratch); ``body_of_link[k]``: the body
    carrying link k, and ``link_pose[k]``: link k's pose in that body's frame."""

    idata: np.ndarray
    fdata: np.ndarray
    packed: np.ndarray
    body_of_link: np.ndarray
    link_pose: np.ndarray


@dataclass(frozen=True, eq=False)
class KernelModel:
    """What the dynamics functions need of a model, computed once (see the module docstring)."""

    name: str
    nq: int
    nv: int
    floating: bool
    links: Tree                  # one body per link (+ the world first when floating)
    bodies: Tree                 # fixed joints merged
    packed: np.ndarray           # bodies.packed (one attribute lookup on the fast path)
    gravity: tuple[float, float, float]
    damping: np.ndarray          # (nv,) viscous damping per velocity entry (0 for the base)
    friction: np.ndarray         # (nv,) Coulomb friction
    link_index: dict[str, int]
    nl: int
    root_R: np.ndarray | None = None   # the rotation of model.root_pose: world wrenches -> root frame

    @property
    def link_offset(self) -> int:
        """Body index of link 0 in the link tree."""
        return 1 if self.floating else 0

    def __getstate__(self) -> dict:
        """Pickled without the cached :attr:`pack3` (a ``struct.Struct`` method, which does not
        pickle; it is made again at its first use)."""
        state = dict(self.__dict__)
        state.pop("pack3", None)
        return state

    @cached_property
    def pack3(self) -> Callable[..., bytes]:
        """``pack3(*q, *qd, *x)``: nq + 2 nv numbers as float64 bytes (the fast path of joint
        values given as lists or tuples)."""
        return struct.Struct(f"{self.nq + 2 * self.nv}d").pack

    @cached_property
    def velocity_axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each entry of v: the link it moves (its child link), the unit axis in that link's
        frame, and whether it translates (prismatic, base linear velocity) or rotates."""
        link, axis, prism = np.zeros(self.nv, dtype=int), np.zeros((self.nv, 3)), np.zeros(self.nv, bool)
        idata, fdata = self.links.idata, self.links.fdata
        off = self.link_offset
        for b in range(1, idata.shape[0]):
            jt, iv = idata[b, L.I_TYPE], idata[b, L.I_V]
            if jt == L.FIXED:
                continue
            k = b - off
            if jt in (L.REVOLUTE, L.PRISMATIC):
                link[iv], axis[iv], prism[iv] = k, fdata[b, L.C_AX:L.C_AX + 3], jt == L.PRISMATIC
                continue
            cols = [(c, False) for c in range(3)] if jt == L.SPHERICAL else \
                [(c, True) for c in range(3)] + [(c, False) for c in range(3)]
            for i, (c, p) in enumerate(cols):
                link[iv + i], axis[iv + i, c], prism[iv + i] = k, 1.0, p
        return link, axis, prism

    @cached_property
    def jacobian_axes(self) -> tuple[np.ndarray, ...]:
        """:attr:`velocity_axes` and :attr:`ancestors` as the Jacobian kernel takes them
        (:func:`.kernels.kinematics.jacobian_rows`): the body in the link tree of each entry of
        v (int64), the axes (nv, 3), the translation flags, ``anc``, and the body of each link
        (int64), each C-contiguous."""
        link, axis, prism = self.velocity_axes
        off = self.link_offset
        return (np.ascontiguousarray(link + off, dtype=np.int64), np.ascontiguousarray(axis),
                np.ascontiguousarray(prism), np.ascontiguousarray(self.ancestors),
                np.arange(off, self.nl + off, dtype=np.int64))

    @cached_property
    def ancestors(self) -> np.ndarray:
        """``anc[k, i]``: entry i of v moves link k."""
        link = self.velocity_axes[0]
        parent = self.links.idata[:, L.I_PARENT]
        off = self.link_offset
        anc = np.zeros((self.nl, self.nv), dtype=bool)
        for k in range(self.nl):
            b = k + off
            while b >= off:
                anc[k, link == b - off] = True
                b = parent[b]
        return anc


def kernel_model(model: RobotModel) -> KernelModel:
    """The packed form of ``model`` (built at the first call, then kept with the model)."""
    try:
        d = model._cache.get(KEY)
    except AttributeError:
        raise not_a_model(model) from None
    if d is None:
        d = _build(model)
        model._cache[KEY] = d
    return d


def require_model(model: object) -> None:
    """Raise :func:`~simbench.joint_space.not_a_model`'s line unless ``model`` is a RobotModel."""
    if not isinstance(model, RobotModel):
        raise not_a_model(model)


def _link_tree(model: RobotModel) -> tuple[np.ndarray, list[int], np.ndarray, np.ndarray,
                                           np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(parent, kernel joint code, q index, v index, joint origin, axis, spatial inertia) per
    body of the link tree."""
    G = np.array(model.link_spatial_inertia)
    codes = [_CODES[int(c)] for c in model.joint_type_code]
    origins = np.array(model.joint_origin).reshape(-1, 4, 4)
    axes = np.array(model.joint_axis).reshape(-1, 3)
    iq, iv = np.asarray(model.joint_q_start), np.asarray(model.joint_v_start)
    parent = np.asarray(model.link_parent)
    if model.floating_base:
        return (np.r_[-1, 0, parent[1:] + 1], [L.FIXED, L.FREE] + codes, np.r_[-1, 0, iq],
                np.r_[-1, 0, iv], np.concatenate([np.eye(4)[None], np.eye(4)[None], origins]),
                np.concatenate([np.zeros((2, 3)), axes]), np.concatenate([np.zeros((1, 6, 6)), G]))
    return (parent.copy(), [L.FIXED] + codes, np.r_[-1, iq], np.r_[-1, iv],
            np.concatenate([np.eye(4)[None], origins]), np.concatenate([np.zeros((1, 3)), axes]), G)


def _pack_tree(parent: np.ndarray, codes: Sequence[int], iq: np.ndarray, iv: np.ndarray,
               origins: np.ndarray, axes: np.ndarray, G: np.ndarray, nq: int, nv: int,
               gravity: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    nb = len(parent)
    idata = np.zeros((nb, 4), dtype=np.int64)
    idata[:, L.I_PARENT], idata[:, L.I_TYPE], idata[:, L.I_Q], idata[:, L.I_V] = parent, codes, iq, iv
    idata[0, L.I_TYPE], idata[0, L.I_Q], idata[0, L.I_V] = L.FIXED, nq, nv
    fdata = np.zeros((nb, L.NF))
    fdata[0, L.C_G:L.C_G + 3] = gravity
    for k in range(nb):
        R, a = origins[k, :3, :3], axes[k]
        ax = skew(a)
        fdata[k, L.C_R0:L.C_R0 + 9] = R.ravel()
        fdata[k, L.C_P0:L.C_P0 + 3] = origins[k, :3, 3]
        fdata[k, L.C_AX:L.C_AX + 3] = a
        fdata[k, L.C_A:L.C_A + 9] = (R @ ax).ravel()
        fdata[k, L.C_B:L.C_B + 9] = (R @ ax @ ax).ravel()
        fdata[k, L.C_D:L.C_D + 3] = R @ a
    fdata[:, L.C_M] = G[:, 3, 3]
    Gh = G[:, :3, 3:]                    # m [c] = [h]
    fdata[:, L.C_H:L.C_H + 3] = 0.5 * np.stack([Gh[:, 2, 1] - Gh[:, 1, 2], Gh[:, 0, 2] - Gh[:, 2, 0],
                                                Gh[:, 1, 0] - Gh[:, 0, 1]], axis=-1)
    Io = 0.5 * (G[:, :3, :3] + G[:, :3, :3].transpose(0, 2, 1))
    fdata[:, L.C_IO:L.C_IO + 6] = Io[:, [0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
    return np.ascontiguousarray(idata), np.ascontiguousarray(fdata)


def _build(model: RobotModel) -> KernelModel:
    nq, nv, nl = model.nq, model.nv, model.nlinks
    parent, codes, iq, iv, origins, axes, G = _link_tree(model)
    off = 1 if model.floating_base else 0
    nb_full = len(parent)
    full = _pack_tree(parent, codes, iq, iv, origins, axes, G, nq, nv, model.gravity)
    # merge bodies attached by fixed joints into their parents
    body = np.zeros(nb_full, dtype=int)
    offset = np.tile(np.eye(4), (nb_full, 1, 1))   # pose of each link-tree body in its merged body
    m_parent, m_code, m_iq, m_iv, m_origin, m_axis, m_G = [-1], [L.FIXED], [-1], [-1], [np.eye(4)], \
        [np.zeros(3)], [G[0].copy()]
    for k in range(1, nb_full):
        p = int(parent[k])
        if codes[k] == L.FIXED:
            body[k] = body[p]
            offset[k] = offset[p] @ origins[k]
            m_G[body[k]] = m_G[body[k]] + transform_inertia(offset[k], G[k])
        else:
            body[k] = len(m_parent)
            m_parent.append(body[p])
            m_code.append(codes[k])
            m_iq.append(iq[k])
            m_iv.append(iv[k])
            m_origin.append(offset[p] @ origins[k])
            m_axis.append(axes[k])
            m_G.append(G[k].copy())
    merged = _pack_tree(np.array(m_parent), m_code, np.array(m_iq), np.array(m_iv),
                        np.array(m_origin), np.array(m_axis), np.array(m_G), nq, nv, model.gravity)
    damping, friction = np.zeros(nv), np.zeros(nv)
    for j in np.flatnonzero(np.asarray(model.joint_type_code) != FIXED):
        s, n = int(model.joint_v_start[j]), 3 if model.joint_type_code[j] == SPHERICAL else 1
        damping[s:s + n], friction[s:s + n] = model.joint_damping[j], model.joint_friction[j]
    for a in (damping, friction):
        a.setflags(write=False)
    if not np.all(np.isfinite(merged[1])):
        raise SimbenchError(f"{model.name}: the model holds non-finite numbers")
    links = Tree(*full, packed=pack(*full, nq, nv), body_of_link=np.arange(nl) + off,
                 link_pose=np.tile(np.eye(4), (nl, 1, 1)))
    bodies = Tree(*merged, packed=pack(*merged, nq, nv), body_of_link=body[off:], link_pose=offset[off:])
    return KernelModel(name=model.name, nq=nq, nv=nv, floating=model.floating_base, links=links,
                       bodies=bodies, packed=bodies.packed,
                       gravity=tuple(float(x) for x in model.gravity), damping=damping,
                       friction=friction, link_index={n: i for i, n in enumerate(model.link_names)},
                       nl=nl, root_R=None if model.root_pose is None else np.array(model.root_pose[:3, :3]))
