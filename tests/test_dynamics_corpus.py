"""simbench.dynamics against Pinocchio on every robot of pybullet_data with a movable joint, with a
fixed base and with a floating base (Pinocchio's ``JointModelFreeFlyer``), all rows.

Oracle: ``pin.rnea``, ``pin.crba``, ``pin.aba``, frame placements and
``getFrameJacobian(LOCAL_WORLD_ALIGNED)`` on Pinocchio's own parse of the URDF; where Pinocchio's
URDF parser refuses the file (spherical joints are a PyBullet extension), on a Pinocchio model
built joint by joint with ``JointModelSpherical`` (:func:`simbench.oracles.pinocchio.built_model`). Joints
matched by name. Tolerance 1e-9 relative to the largest magnitude of the compared quantity.
Each test asserts how many robots it compared.
"""
from __future__ import annotations

import os
import zlib

import numpy as np

from _dyn_helpers import Mismatches, asset, movable_corpus, require
from simbench.oracles.pinocchio import PinocchioMap, built_model, symmetric, urdf_model
from simbench.errors import SimbenchError, URDFError
from simbench.model import RobotModel
import simbench.dynamics as dyn

TOL = 1e-9
FILES = movable_corpus() + [asset("planar_2r.urdf"), asset("mobile_manipulator.urdf"),
                            asset("anthropomorphic_3link.urdf")]
#: robots compared on this corpus (pybullet_data 3.2.x); fewer means an oracle went missing.
#: (44 pybullet_data files and 3 bundled ones; simbench refuses husky.urdf, a malformed origin.)
EXPECTED = {"fixed": 46, "floating": 46, "pinocchio_parsed": 41, "spherical": 2}


def _pair(path, floating):
    """(model, Pinocchio model, how it was built) or None when simbench refuses the file."""
    require("pinocchio")
    try:
        model = RobotModel.from_urdf(path, floating_base=floating)
    except URDFError:
        return None
    if model.dof == 0:
        return None
    try:
        return model, urdf_model(model), "parsed"
    except SimbenchError:  # Pinocchio's parser refuses spherical joints (a PyBullet extension)
        return model, built_model(model), "built"


def _jac(pin, pm, pd, fid):
    J = pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    return np.asarray(J).reshape(6, pm.nv)   # [linear; angular]


def _compare(path, model, pm) -> list[str]:
    """Every quantity of one robot against Pinocchio; returns the failures."""
    pin = require("pinocchio")
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()))
    n = 3
    Q = model.random_configuration(rng, n)
    V, A = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    bad = Mismatches(TOL)
    check = bad.check

    TAU_b = dyn.inverse_dynamics(model, Q, V, A)
    M_b = dyn.mass_matrix(model, Q)
    T_all = dyn.forward_kinematics(model, Q)
    for s in range(n):
        qp, vp, ap = mp.q(Q[s]), mp.v(V[s]), mp.v(A[s])
        tau_pin = mp.back(pin.rnea(pm, pd, qp, vp, ap))
        check("rnea batched", TAU_b[s], tau_pin)
        check("rnea single", dyn.inverse_dynamics(model, Q[s], V[s], A[s]), tau_pin)
        M_pin = mp.back_matrix(symmetric(pin.crba(pm, pd, qp)))
        check("crba batched", M_b[s], M_pin)
        check("crba single", dyn.mass_matrix(model, Q[s]), M_pin)
        w = np.linalg.eigvalsh(M_pin)
        if w[0] > 1e-7 * w[-1]:   # massless moving links make M singular
            tau = rng.normal(size=model.nv) * 10
            qdd_pin = mp.back(pin.aba(pm, pd, qp, vp, mp.v(tau)))
            check("aba", dyn.forward_dynamics(model, Q[s], V[s], tau), qdd_pin,
                  TOL * (w[-1] / w[0]) ** 0.5)
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        for k, name in enumerate(model.link_names):
            if not pm.existFrame(name, pin.FrameType.BODY):
                continue
            fid = pm.getFrameId(name, pin.FrameType.BODY)
            oMf = pd.oMf[fid]
            check(f"pose {name}", T_all[s, k, :3, :3], oMf.rotation)
            if not np.allclose(T_all[s, k, :3, 3], oMf.translation, rtol=0, atol=1e-10):
                bad.append(f"position {name}")
            Jp = _jac(pin, pm, pd, fid) @ mp.P
            check(f"jacobian {name}", dyn.link_jacobian(model, Q[s], name), np.vstack([Jp[3:], Jp[:3]]))
    # an external wrench on the last link: tau - J^T F
    name = model.link_names[-1]
    if pm.existFrame(name, pin.FrameType.BODY):
        F = rng.normal(size=6)
        pin.computeJointJacobians(pm, pd, mp.q(Q[0]))
        pin.updateFramePlacements(pm, pd)
        Jp = _jac(pin, pm, pd, pm.getFrameId(name, pin.FrameType.BODY)) @ mp.P
        want = dyn.inverse_dynamics(model, Q[0], V[0], A[0]) - np.vstack([Jp[3:], Jp[:3]]).T @ F
        check("f_ext", dyn.inverse_dynamics(model, Q[0], V[0], A[0], f_ext={name: F}), want)
    # another gravity vector
    g = np.array([1.5, -2.0, -7.0])
    pm.gravity.linear = g
    want = mp.back(pin.rnea(pm, pd, mp.q(Q[1]), mp.v(V[1]), mp.v(A[1])))
    check("gravity", dyn.inverse_dynamics(model, Q[1], V[1], A[1], gravity=g), want)
    return bad


def _run(floating):
    compared, parsed, spherical, failures = [], 0, 0, {}
    for path in FILES:
        pair = _pair(path, floating)
        if pair is None:
            continue
        model, pm, how = pair
        bad = _compare(path, model, pm)
        if bad:
            failures[os.path.relpath(path)] = bad[:5]
        compared.append(path)
        parsed += how == "parsed"
        spherical += model.nq != model.nv + (1 if floating else 0)
    return compared, parsed, spherical, failures


def test_fixed_base_corpus_against_pinocchio():
    compared, parsed, spherical, failures = _run(False)
    assert not failures, failures
    assert len(compared) >= EXPECTED["fixed"], (len(compared), EXPECTED)
    assert parsed >= EXPECTED["pinocchio_parsed"] and spherical >= EXPECTED["spherical"], (parsed, spherical)


def test_floating_base_corpus_against_pinocchio_free_flyer():
    compared, parsed, spherical, failures = _run(True)
    assert not failures, failures
    assert len(compared) >= EXPECTED["floating"], (len(compared), EXPECTED)
    assert parsed >= EXPECTED["pinocchio_parsed"] and spherical >= EXPECTED["spherical"], (parsed, spherical)
