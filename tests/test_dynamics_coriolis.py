"""simbench.dynamics.coriolis: ``C(q, v)`` of any tree (fixed and floating bases, prismatic and
spherical joints). Oracles: Pinocchio's ``computeCoriolisMatrix`` (joints matched by name by
:class:`PinocchioMap`; its own URDF parser, its model built from ours for the humanoid's
spherical joints), the Christoffel C of :func:`simbench.dynamics.lagrange.coriolis_matrix` on
fixed bases, and closed forms that use neither: ``C v + g = bias_forces`` (the RNEA) and
``dM/dt = C + C^T`` (``dM/dt - 2C`` skew-symmetric) with ``dM/dt`` from central differences of
our mass matrix along ``integrate(q, +-h v)``."""
import numpy as np
import pytest

from _dyn_helpers import require
from simbench.dynamics.coriolis import coriolis_matrix
from simbench.errors import ShapeError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioMap, built_model, urdf_model
import simbench.dynamics as dyn

FIXED = [("pybullet_data:kuka_iiwa/model.urdf", False), ("pybullet_data:franka_panda/panda.urdf", False),
         ("simbench:mobile_manipulator.urdf", False)]
FLOATING = [("pybullet_data:a1/a1.urdf", True), ("pybullet_data:laikago/laikago_toes.urdf", True)]
HUMANOID = ("pybullet_data:humanoid/humanoid.urdf", True)   # spherical joints
FIXED_IDS = ["iiwa", "panda", "mobile-manipulator"]
FLOATING_IDS = ["a1-floating", "laikago-floating"]
ALL = FIXED + FLOATING + [HUMANOID]
ALL_IDS = FIXED_IDS + FLOATING_IDS + ["humanoid-spherical"]
TOL = 1e-10


def err(a, b) -> float:
    """Largest difference over the largest magnitude (absolute below 1e-3)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(1e-3, np.abs(a).max(), np.abs(b).max()))


def _state(model, seed, n):
    rng = np.random.default_rng(seed)
    return model.random_configuration(rng, n), rng.normal(size=(n, model.nv))


def _pinocchio(path, floating):
    model = RobotModel.from_urdf(path, floating_base=floating)
    pm = built_model(model) if (path, floating) == HUMANOID else urdf_model(model)
    return model, pm, pm.createData(), PinocchioMap(model, pm)


@pytest.mark.parametrize("path,floating", ALL, ids=ALL_IDS)
def test_coriolis_matrix_against_pinocchio(path, floating):
    """5 random states, one by one and as a (5,) and a (1, 5) batch, against
    ``pin.computeCoriolisMatrix`` mapped to our order (a floating base's [linear; angular]
    rows and columns are Pinocchio's free flyer's, copied as they are); Pinocchio's own
    ``C v`` equals its ``nonLinearEffects - g`` (the oracle is consistent)."""
    pin = require("pinocchio")
    model, pm, pd, mp = _pinocchio(path, floating)
    Q, V = _state(model, 41, 5)
    C_all = coriolis_matrix(model, Q, V)
    C_2d = coriolis_matrix(model, Q[None], V[None])
    assert C_all.shape == (5, model.nv, model.nv) and C_2d.shape == (1, 5, model.nv, model.nv)
    compared = 0
    for s in range(5):
        q, v = Q[s], V[s]
        want = mp.back_matrix(pin.computeCoriolisMatrix(pm, pd, mp.q(q), mp.v(v)))
        nle = mp.back(pin.nonLinearEffects(pm, pd, mp.q(q), mp.v(v)) - pin.computeGeneralizedGravity(pm, pd, mp.q(q)))
        assert err(want @ v, nle) < TOL
        assert np.abs(want).max() > 1e-3   # not a trivial comparison
        for got in (coriolis_matrix(model, q, v), C_all[s], C_2d[0, s]):
            assert err(got, want) < TOL
            compared += 1
    assert compared == 15


@pytest.mark.parametrize("path,floating", FIXED, ids=FIXED_IDS)
def test_coriolis_matrix_equals_christoffel_on_fixed_bases(path, floating):
    """On a fixed base (minimal coordinates) the matrix is the Christoffel C of the independent
    Lagrangian path (:func:`lagrange.coriolis_matrix`, from dM/dq), for a batch of 6 states,
    and ``simbench.dynamics.coriolis_matrix`` gives the same."""
    model = RobotModel.from_urdf(path, floating_base=floating)
    Q, V = _state(model, 7, 6)
    want = dyn.lagrange.coriolis_matrix(model, Q, V)
    got = coriolis_matrix(model, Q, V)
    assert got.shape == want.shape == (6, model.nv, model.nv)
    assert err(got, want) < TOL
    assert err(dyn.coriolis_matrix(model, Q, V), want) < TOL
    compared = sum(err(got[s], want[s]) < TOL for s in range(6))
    assert compared == 6


@pytest.mark.parametrize("path,floating", ALL, ids=ALL_IDS)
def test_coriolis_closed_forms(path, floating):
    """``C v + g = bias_forces`` (the RNEA) for 6 states; ``dM/dt = C + C^T`` and
    ``dM/dt - 2C`` skew-symmetric for 3 states, ``dM/dt`` from central differences of our mass
    matrix along the manifold (``integrate(q, +-h v)``, Richardson-extrapolated: O(h^4), measured
    within 7e-12 of C + C^T); no
    Pinocchio. A gravity of zero leaves C v = bias_forces."""
    model = RobotModel.from_urdf(path, floating_base=floating)
    Q, V = _state(model, 13, 6)
    C = coriolis_matrix(model, Q, V)
    Cv = np.einsum("nij,nj->ni", C, V)
    assert err(Cv + dyn.gravity_torques(model, Q), dyn.bias_forces(model, Q, V)) < TOL
    assert err(Cv, dyn.bias_forces(model, Q, V, gravity=(0.0, 0.0, 0.0))) < TOL
    compared = 0
    for s in range(3):
        q, v = Q[s], V[s]

        def dM(h):
            return (dyn.mass_matrix(model, dyn.integrate(model, q, v, h))
                    - dyn.mass_matrix(model, dyn.integrate(model, q, v, -h))) / (2 * h)

        Mdot = (4 * dM(5e-4) - dM(1e-3)) / 3
        A = Mdot - 2 * C[s]
        assert np.abs(A + A.T).max() / np.abs(Mdot).max() < TOL
        assert err(C[s] + C[s].T, Mdot) < TOL
        compared += 1
    assert compared == 3


@pytest.mark.parametrize("path,floating", [FLOATING[0], HUMANOID], ids=["a1-floating", "humanoid-spherical"])
def test_coriolis_matrix_batches_and_inputs(path, floating):
    """Leading dimensions broadcast: q (2, 3, nq) with v (2, 3, nv); one q against three
    velocities; lists; a non-contiguous row; each equal to the single calls. A zero quaternion
    and a wrong shape are one ShapeError."""
    model = RobotModel.from_urdf(path, floating_base=floating)
    Q, V = _state(model, 3, 6)
    C = coriolis_matrix(model, Q.reshape(2, 3, -1), V.reshape(2, 3, -1))
    assert C.shape == (2, 3, model.nv, model.nv)
    singles = np.stack([coriolis_matrix(model, Q[s], V[s]) for s in range(6)])
    assert np.array_equal(C.reshape(6, model.nv, model.nv), singles)
    one_q = coriolis_matrix(model, Q[0], V[:3])
    assert one_q.shape == (3, model.nv, model.nv)
    assert np.array_equal(one_q[0], singles[0])
    assert err(one_q[2], coriolis_matrix(model, Q[0], V[2])) == 0.0
    assert np.array_equal(coriolis_matrix(model, Q[1].tolist(), V[1].tolist()), singles[1])
    strided = np.asfortranarray(Q)[4]
    assert not strided.flags.c_contiguous
    assert np.array_equal(coriolis_matrix(model, strided, V[4]), singles[4])
    bad = Q[0].copy()
    bad[3:7] = 0.0
    with pytest.raises(ShapeError, match="quaternion"):
        coriolis_matrix(model, bad, V[0])
    with pytest.raises(ShapeError):
        coriolis_matrix(model, Q[0], V[0, :-1])
    nan = V[0].copy()
    nan[2] = np.nan
    with pytest.raises(ShapeError, match="non-finite"):
        coriolis_matrix(model, Q[0], nan)


def test_coriolis_matrix_does_not_depend_on_the_root_pose():
    """C is a matrix of scalars (S_a . F_b): a fixed root placed at a rotated, shifted
    ``root_pose`` gives the same C (the iiwa, 4 states)."""
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    c, s = np.cos(0.7), np.sin(0.7)
    P = np.array([[c, -s, 0, 0.3], [s, c, 0, -1.2], [0, 0, 1, 0.5], [0, 0, 0, 1.0]])
    Q, V = _state(model, 5, 4)
    assert err(coriolis_matrix(model.replace(root_pose=P), Q, V), coriolis_matrix(model, Q, V)) < TOL
