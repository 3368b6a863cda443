"""Above PyBullet's 128 DOF: what PyBullet changes, shown with independent oracles, and
``simbench check`` explaining it (never FAIL while simbench agrees with Pinocchio).

What happens (bullet3's PhysicsClientC_API.cpp and SharedMemoryCommands.h): the client copies
q, qd and qdd into the fixed 128-entry arrays of its command (MAX_DEGREE_OF_FREEDOM) without a
bound check, so past 128 entries each array overflows into the next one. Oracles: Pinocchio's own
URDF parser (the true dynamics, and the same with the overflowed inputs) and PyBullet called
directly, on generated chains of 128, 129 and 200 revolute joints.
"""
import numpy as np
import pinocchio as pin
import pybullet as p
import pytest

import simbench.check as cc
from simbench.check.causes import overflowed_inputs, overflowed_mass_inputs

G = np.array([0.0, 0.0, -9.81])


def chain_urdf(n: int) -> str:
    """A chain of n revolute joints about x, y, z in turn, 0.1 m apart, off-axis COMs."""
    parts = [f'<robot name="chain{n}"><link name="l0"><inertial><mass value="1"/>'
             '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>']
    for i in range(1, n + 1):
        axis = ("1 0 0", "0 1 0", "0 0 1")[i % 3]
        parts.append(f'<link name="l{i}"><inertial><origin xyz="0.01 0 0.05"/><mass value="{0.5 + 0.01 * (i % 7)}"/>'
                     '<inertia ixx="0.002" iyy="0.003" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                     f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="{axis}"/>'
                     '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint>')
    return "\n".join(parts + ["</robot>"])


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chains")
    out = {}
    for n in (128, 129, 200):
        out[n] = folder / f"chain{n}.urdf"
        out[n].write_text(chain_urdf(n))
    return out


def pybullet(path, q, qd, qdd):
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(*G, physicsClientId=c)
        b = p.loadURDF(str(path), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        tau = np.array([p.calculateInverseDynamics(b, list(a), list(v), list(w), physicsClientId=c)
                        for a, v, w in zip(q, qd, qdd)])
        M = np.array([p.calculateMassMatrix(b, list(a), physicsClientId=c) for a in q])
        return tau, M
    finally:
        p.disconnect(physicsClientId=c)


def pinocchio(path, q, qd, qdd):
    pm = pin.buildModelFromUrdf(str(path))  # a chain: Pinocchio's joint order is the file's
    pm.gravity = pin.Motion(np.r_[G, 0, 0, 0])
    d = pm.createData()
    tau = np.array([pin.rnea(pm, d, a, v, w).copy() for a, v, w in zip(q, qd, qdd)])
    M = np.array([np.triu(pin.crba(pm, d, a)) + np.triu(pin.crba(pm, d, a), 1).T for a in q])
    return tau, M


def states(n, k=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (k, n)), rng.uniform(-2, 2, (k, n)), rng.uniform(-5, 5, (k, n))


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_pybullet_is_exact_at_128_and_overflows_above(chains):
    compared = 0
    for n, path in chains.items():
        q, qd, qdd = states(n)
        tau_b, M_b = pybullet(path, q, qd, qdd)
        tau_p, M_p = pinocchio(path, q, qd, qdd)
        if n <= 128:
            assert rel(tau_b, tau_p) < 1e-12 and rel(M_b, M_p) < 1e-12
        else:
            assert rel(tau_b, tau_p) > 1e-2 and rel(M_b, M_p) > 1e-5  # PyBullet is wrong up there
            # ... and it is exactly Pinocchio fed what PyBullet's server reads after the overflow
            tau_o, _ = pinocchio(path, *overflowed_inputs(q, qd, qdd))
            _, M_o = pinocchio(path, overflowed_mass_inputs(q), qd, qdd)
            assert rel(tau_b, tau_o) < 1e-12 and rel(M_b, M_o) < 1e-12, (n, rel(tau_b, tau_o), rel(M_b, M_o))
        compared += 1
    assert compared == 3


def test_overflowed_inputs_follow_the_command_layout():
    n, K = 200, 128
    q, qd, qdd = (np.arange(n) + base + 1 / 3 for base in (1000.0, 2000.0, 3000.0))  # low bits set
    q2, qd2, qdd2 = overflowed_inputs(q, qd, qdd)
    np.testing.assert_array_equal(q2[:K], q[:K])
    np.testing.assert_array_equal(q2[K:], qd[:n - K])          # q's tail overwritten by qd
    np.testing.assert_array_equal(qd2, qd)                      # qd written last, intact
    np.testing.assert_array_equal(qdd2[:n - K], qd[K:])         # qdd's head overwritten by qd's tail
    np.testing.assert_array_equal(qdd2[n - K:K], qdd[n - K:K])
    np.testing.assert_array_equal(qdd2[K + 1:], qdd[K + 1:])
    assert qdd2[K] != qdd[K] and abs(qdd2[K] - qdd[K]) < 1e-6 * abs(qdd[K])  # low 32 bits: the flags
    small = states(128)
    assert all(np.array_equal(a, b) for a, b in zip(overflowed_inputs(*small), small))
    qm = overflowed_mass_inputs(q)
    assert 0 < qm[K] < 1e-300 and np.array_equal(np.delete(qm, K), np.delete(q, K))


@pytest.mark.parametrize("n, verdict", [(128, "PASS"), (129, "EXPLAINED"), (200, "EXPLAINED")])
def test_check_explains_the_dof_limit(chains, n, verdict):
    r = cc.compare(chains[n], samples=6)
    assert r.verdict == verdict, r.line()
    assert r.pinocchio["available"] and cc.Errors.from_dict(r.pinocchio["vs_ours"]).within(1e-10)
    if verdict == "EXPLAINED":
        assert [c.kind for c in r.causes] == ["dof_limit_overflow"]
        c = r.causes[0]
        assert c.links == (["j129"] if n == 129 else ["j129..j200"])
        assert c.before.tau_rel > 1e-2 and c.after.within(1e-8)


def test_cli_on_chains_exits_0(chains, capsys):
    from simbench.cli import main

    assert main(["check", str(chains[129]), str(chains[200]), "--samples", "3", "--no-pinocchio"]) == 0
    out = capsys.readouterr().out
    assert out.count("EXPLAINED") >= 2 and "dof_limit_overflow [j129]" in out
    assert "2 robots: 0 PASS, 2 EXPLAINED, 0 FAIL, 0 ERROR, 0 SKIPPED" in out
