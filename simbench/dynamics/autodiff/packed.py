"""The dynamics tree as padded arrays, the argument of the jax inverse dynamics (:mod:`.rnea`).

Every body is one row of the same arrays, whatever its joint, so the dynamics are a few
vectorised array operations whose compiled code depends only on the array sizes, rounded up
(:func:`sizes`): robots of similar size share one compilation per process (XLA's compile
time, not the arithmetic, is what jax costs on a robot arm). Padding bodies are massless, hang
from the world and have no joint; padding entries of q and v are read by nothing.

Per body (row): joint origin ``R0``, ``p0``; revolute ``rev`` with ``RK = R0 [a]``,
``RKK = R0 [a]^2`` (``R = R0 + sin RK + (1 - cos) RKK``), prismatic ``pri`` with ``D = R0 a``;
``Gq`` (8, nq) and ``jq0`` (8): the joint's position (3), quaternion (4) and scalar (1) as
``Gq q + jq0`` (the identity quaternion for the joints without one); ``m``, ``h``, ``Io``. The
tree: ``up`` (steps, nb, nb) and ``up_world`` (steps, nb): the ancestor ``2^i`` levels up (or
the world), for the link poses by pointer jumping. Per entry of v: ``Sv`` (6): its motion axis
(``(w, v)``) in the frame of the body it moves, ``Vb`` (nv, nb): that body, and ``AB``
(nb, nv): ``AB[k, i] = 1`` when entry i moves body k. Index lookups are 0/1 matrices: one
dense product each, which ``vmap`` and ``jvp`` batch as matrix products.
"""
from __future__ import annotations

import numpy as np

from ...model import PRISMATIC, REVOLUTE, SPHERICAL, RobotModel
from ._jax import jnp
from .tree import FREE, bodies

__all__ = ["packed", "BUCKET", "sizes"]

#: nv is rounded up to a multiple of this
BUCKET = 4


def sizes(model: RobotModel) -> tuple[int, int, int]:
    """Padded (nb, nq, nv): nv rounded up to :data:`BUCKET`; as many bodies (every body has a
    velocity entry); q as long as v plus four entries per four quaternions (``nq - nv``)."""
    nv = max(BUCKET, -(-model.nv // BUCKET) * BUCKET)
    return nv, nv + -(-(model.nq - model.nv) // 4) * 4, nv

def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def packed(model: RobotModel) -> dict:
    """The padded arrays (jax, on the device) of ``model``'s dynamics tree: ``bodies`` (the rows
    above), ``vpad`` / ``qpad`` (1 on the padding entries of v / q)."""
    bs = bodies(model)
    nb, nq, nv = sizes(model)
    assert len(bs) <= nb, (len(bs), nb)   # every body has a velocity entry
    P = dict(R0=np.tile(np.eye(3), (nb, 1, 1)), p0=np.zeros((nb, 3)),
             RK=np.zeros((nb, 3, 3)), RKK=np.zeros((nb, 3, 3)), D=np.zeros((nb, 3)),
             rev=np.zeros(nb), pri=np.zeros(nb), qi=np.full((nb, 8), nq),
             vi=np.full((nb, 6), nv), S=np.zeros((nb, 6, 6)), m=np.zeros(nb),
             h=np.zeros((nb, 3)), Io=np.zeros((nb, 3, 3)))
    P["qi"][:, 6] = nq + 1                       # w = 1: the identity quaternion
    eye = np.eye(3)
    for k, b in enumerate(bs):
        P["R0"][k], P["p0"][k], P["m"][k], P["h"][k], P["Io"][k] = b.R0, b.p0, b.mass, b.h, b.Io
        a = b.axis
        if b.jtype in (REVOLUTE, PRISMATIC):
            P["qi"][k, 7], P["vi"][k, 0] = b.iq, b.iv
            if b.jtype == REVOLUTE:
                P["rev"][k], P["RK"][k], P["RKK"][k] = 1.0, b.R0 @ _skew(a), b.R0 @ _skew(a) @ _skew(a)
                P["S"][k, :3, 0] = a
            else:
                P["pri"][k], P["D"][k] = 1.0, b.R0 @ a
                P["S"][k, 3:, 0] = a
        elif b.jtype == SPHERICAL:
            P["qi"][k, 3:7] = b.iq + np.arange(4)
            P["vi"][k, :3] = b.iv + np.arange(3)
            P["S"][k, :3, :3] = eye
        elif b.jtype == FREE:                    # q: position, quaternion; v: [v; w]
            P["qi"][k, :7] = b.iq + np.arange(7)
            P["vi"][k] = b.iv + np.arange(6)
            P["S"][k, :3, 3:] = P["S"][k, 3:, :3] = eye
    parent = np.array([b.parent if b.parent >= 0 else nb for b in bs] + [nb] * (nb - len(bs) + 1))
    anc = np.eye(nb)
    for k, b in enumerate(bs):          # parents come first
        if b.parent >= 0:
            anc[k] += anc[b.parent]
    steps = max(1, int(np.ceil(np.log2(nb + 1))))
    jump = [parent]
    for _ in range(steps - 1):
        jump.append(jump[-1][jump[-1]])
    vbody, Sv = np.zeros(nv, dtype=int), np.zeros((nv, 6))
    for k in range(len(bs)):
        for c in range(6):
            if P["vi"][k, c] < nv:
                vbody[P["vi"][k, c]], Sv[P["vi"][k, c]] = k, P["S"][k, :, c]
    onehot = np.zeros((nb, nv))
    onehot[vbody[:model.nv], np.arange(model.nv)] = 1.0
    qe = np.eye(nq + 2)[P.pop("qi")]                   # (nb, 8, nq + 2)
    up = np.eye(nb + 1)[np.array(jump)[:, :nb]]        # (steps, nb, nb + 1)
    P.update(Gq=qe[:, :, :nq], jq0=qe[:, :, nq + 1], up=up[:, :, :nb], up_world=up[:, :, nb],
             Vb=onehot.T, Sv=Sv, AB=anc @ onehot)
    del P["S"], P["vi"]
    return {**{k: jnp.asarray(v) for k, v in P.items()},
            "vpad": jnp.asarray(np.arange(nv) >= model.nv, dtype=float),   # 1: padding entry
            "qpad": jnp.asarray(np.arange(nq) >= model.nq, dtype=float)}
