"""The batched (block) kernels against Pinocchio on every robot of the corpus, fixed and floating
base: batches larger than a block, so that whole blocks and a short last block both run
(``simbench.dynamics.kernels`` spans), with the model's gravity, another gravity and an external
wrench. The corpus test (``test_dynamics_corpus``) covers single calls and small serial batches;
this one covers the block drivers.

Oracle: ``pin.rnea``, ``pin.crba``, ``pin.aba`` row by row on
:func:`simbench.oracles.pinocchio.pinocchio_model` (Pinocchio's own URDF parse, or a Pinocchio
model built joint by joint for spherical joints), joints matched by name; the external
wrench through Pinocchio's frame Jacobian. Tolerance 1e-9 relative to the largest magnitude.
Each test asserts how many robots it compared.
"""
from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

from _dyn_helpers import Mismatches, asset, movable_corpus, rel_err, require
from simbench.dynamics.kernels import BS, set_threads
from simbench.errors import URDFError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model, symmetric
import simbench.dynamics as dyn

TOL = 1e-9
FILES = movable_corpus() + [asset("planar_2r.urdf"), asset("mobile_manipulator.urdf"),
                            asset("anthropomorphic_3link.urdf")]
#: as in test_dynamics_corpus: 44 pybullet_data files and 3 bundled ones, husky.urdf refused
EXPECTED = 46
#: rows per batch: two whole blocks and a short one
N = 2 * BS + 5


def _compare(path: str, floating: bool) -> list[str] | None:
    pin = require("pinocchio")
    try:
        model = RobotModel.from_urdf(path, floating_base=floating)
    except URDFError:
        return None
    if model.dof == 0:
        return None
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()) + floating)
    Q = model.random_configuration(rng, N)
    V, A = rng.normal(size=(N, model.nv)), rng.normal(size=(N, model.nv))
    g = np.array([1.5, -2.0, -7.0])
    bad = Mismatches(TOL)
    check = bad.check

    tau = dyn.inverse_dynamics(model, Q, V, A)
    tau_g = dyn.inverse_dynamics(model, Q, V, A, gravity=g)
    M = dyn.mass_matrix(model, Q)
    rows = range(0, N, 3)
    for s in rows:
        qp, vp, ap = mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])
        check(f"rnea row {s}", tau[s], mp.back(pin.rnea(pm, pd, qp, vp, ap)))
        check(f"crba row {s}", M[s], mp.back_matrix(symmetric(pin.crba(pm, pd, qp))))
    pm.gravity.linear = g
    for s in rows:
        want = mp.back(pin.rnea(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])))
        check(f"rnea gravity row {s}", tau_g[s], want)
    pm.gravity.linear = np.asarray(model.gravity, dtype=float)
    # forward dynamics where M is well conditioned (massless moving links make it singular)
    good = [s for s in rows if (lambda w: w[0] > 1e-7 * w[-1])(np.linalg.eigvalsh(M[s]))]
    if good:
        TAU = rng.normal(size=(N, model.nv)) * 10
        qdd = dyn.forward_dynamics(model, Q, V, TAU)
        for s in good:
            w = np.linalg.eigvalsh(M[s])
            want = mp.back(pin.aba(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(TAU[s])))
            check(f"aba row {s}", qdd[s], want, TOL * (w[-1] / w[0]) ** 0.5)
    # an external wrench on the last link, one per row
    name = model.link_names[-1]
    if pm.existFrame(name, pin.FrameType.BODY):
        F = rng.normal(size=(N, 6))
        got = dyn.inverse_dynamics(model, Q, V, A, f_ext={name: F})
        fid = pm.getFrameId(name, pin.FrameType.BODY)
        for s in rows:
            pin.computeJointJacobians(pm, pd, mp.q(Q[s]))
            pin.updateFramePlacements(pm, pd)
            J = np.asarray(pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
                           ).reshape(6, pm.nv) @ mp.P
            check(f"f_ext row {s}", got[s], tau[s] - np.vstack([J[3:], J[:3]]).T @ F[s])
    return bad


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_block_kernels_on_the_corpus_against_pinocchio(floating):
    require("pinocchio")
    compared, failures = 0, {}
    for path in FILES:
        bad = _compare(path, floating)
        if bad is None:
            continue
        compared += 1
        if bad:
            failures[os.path.relpath(path)] = bad[:4]
    assert not failures, failures
    assert compared >= EXPECTED, compared


@pytest.mark.parametrize("spec,floating", [("pybullet_data:kuka_iiwa/model.urdf", False),
                                           ("pybullet_data:humanoid/humanoid.urdf", True)],
                         ids=["iiwa", "humanoid-floating"])
def test_threaded_spans_against_pinocchio(spec, floating):
    """A batch split over two threads (spans of whole blocks, ragged end) equals Pinocchio row
    by row."""
    pin = require("pinocchio")
    model = RobotModel.from_urdf(spec, floating_base=floating)
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(5)
    n = 1500 + 7
    Q = model.random_configuration(rng, n)
    V, A = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    set_threads(2)
    try:
        tau = dyn.inverse_dynamics(model, Q, V, A)
        M = dyn.mass_matrix(model, Q)
        qdd = dyn.forward_dynamics(model, Q, V, tau)
    finally:
        set_threads(None)
    rows = list(range(0, n, 97)) + [n - 1]
    for s in rows:
        qp, vp, ap = mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])
        assert rel_err(tau[s], mp.back(pin.rnea(pm, pd, qp, vp, ap))) < TOL
        assert rel_err(M[s], mp.back_matrix(symmetric(pin.crba(pm, pd, qp)))) < TOL
        assert rel_err(qdd[s], A[s]) < 1e-8
    assert len(rows) == 17


def test_batches_from_two_user_threads_at_once():
    """Two threads of a user's program run large batches at the same time, each on the dynamics'
    threads (the calling thread takes spans too, beside the pool's): every row equals the
    one-thread batch, and sampled rows equal Pinocchio."""
    import threading

    pin = require("pinocchio")
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(11)
    n = 3000 + 3
    batches = [(model.random_configuration(rng, n), rng.normal(size=(n, 7)), rng.normal(size=(n, 7)))
               for _ in range(2)]
    set_threads(1)
    try:
        serial = [dyn.inverse_dynamics(model, *b) for b in batches]
    finally:
        set_threads(None)
    results: list[list[np.ndarray]] = [[], []]
    set_threads(2)
    try:
        def run(i: int) -> None:
            for _ in range(5):
                results[i].append(dyn.inverse_dynamics(model, *batches[i]))
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        set_threads(None)
    compared = 0
    for i in range(2):
        assert len(results[i]) == 5
        for tau in results[i]:
            assert np.array_equal(tau, serial[i])
        Q, V, A = batches[i]
        for s in list(range(0, n, 500)) + [n - 1]:
            assert rel_err(serial[i][s], mp.back(pin.rnea(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])))) < TOL
            compared += 1
    assert compared == 16


@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_mass_matrices_against_pinocchio(threads):
    """A batch of mass matrices large enough to be written with streaming stores
    (:mod:`simbench.dynamics.kernels.stream`, an output of at least ``STREAM_BYTES``) and one a
    row below that size: every row of both equals Pinocchio's ``crba``, on one thread and on
    two (the store fence before the threads join)."""
    from simbench.dynamics.kernels.stream import STREAM_BYTES

    pin = require("pinocchio")
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rows = -(-STREAM_BYTES // (model.nv * model.nv * 8))   # the fewest streamed rows
    rng = np.random.default_rng(17)
    Q = model.random_configuration(rng, rows + 5)
    set_threads(threads)
    try:
        batches = [dyn.mass_matrix(model, Q[:rows - 1]), dyn.mass_matrix(model, Q)]
    finally:
        set_threads(None)
    assert batches[0].nbytes < STREAM_BYTES <= batches[1].nbytes
    compared = 0
    for M in batches:
        for s in range(len(M)):
            want = mp.back_matrix(symmetric(pin.crba(pm, pd, mp.q(Q[s]))))
            assert rel_err(M[s], want) < TOL, s
            compared += 1
    assert compared == 2 * rows + 4


def test_wrenches_in_some_rows_and_links_only_against_pinocchio():
    """Wrenches that are zero on most links and in whole blocks of a batch (the block kernel skips
    a link whose wrench is zero in every row of a block, and reads one shared wrench once):
    every row against Pinocchio's tau - sum J^T F, 3 * BS + 7 rows, batched and shared."""
    pin = require("pinocchio")
    model = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(5)
    n = 3 * BS + 7
    Q = model.random_configuration(rng, n)
    V, A = rng.normal(size=(2, n, model.nv))
    hand, link3 = np.zeros((n, 6)), np.zeros((n, 6))
    hand[[3, BS + 1, n - 1]] = rng.normal(size=(3, 6))     # blocks 0, 1 and the short last one
    link3[2 * BS + 4] = rng.normal(size=6)                  # block 2 only
    shared = rng.normal(size=6)
    cases = {"batched": {"panda_hand": hand, "panda_link3": link3},
             "shared": {"panda_link5": shared, "panda_link2": np.zeros(6)}}
    compared = 0
    for label, F in cases.items():
        got = dyn.inverse_dynamics(model, Q, V, A, f_ext=F)
        for s in range(n):
            pin.computeJointJacobians(pm, pd, mp.q(Q[s]))
            pin.updateFramePlacements(pm, pd)
            want = mp.back(pin.rnea(pm, pd, mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])))
            for name, w in F.items():
                J = np.asarray(pin.getFrameJacobian(pm, pd, pm.getFrameId(name, pin.FrameType.BODY),
                                                    pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)) @ mp.P
                want = want - np.vstack([J[3:], J[:3]]).T @ (w[s] if w.ndim == 2 else w)
            assert rel_err(got[s], want) < TOL, (label, s)
            compared += 1
    assert compared == 2 * n
