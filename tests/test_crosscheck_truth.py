"""A user's dynamics where PyBullet is known to be wrong: it is judged against the true dynamics.

For every cause whose PyBullet numbers differ from the URDF's true dynamics, two user functions:
one that wraps PyBullet itself (``calculateInverseDynamics`` on the body loaded the same way, so
it agrees with PyBullet by construction) and one that is the true dynamics (Pinocchio's rnea on
the file, with gravity rotated into the base frame, ``R^T g``). The first must FAIL with one line
naming the cause and the difference to the truth; the second must get the verdict simbench's own
dynamics gets (EXPLAINED, the same cause).

Oracles: Pinocchio's rnea (gravity ``R^T g``), PyBullet called directly, and for the rolled
planar 2R arm the closed form of its gravity torques (the URDF's comment): rolled 90 degrees
about x, gravity runs along both joint axes, so the true gravity torques are [0, 0] and the
upright arm's are ``g(q)``.
"""
import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pybullet as p
import pytest

import simbench.check as cc
from simbench.check.causes import CAUSES, DOES
from simbench.model import RobotModel
from simbench.paths import assets_dir, resolve_urdf

pin = pytest.importorskip("pinocchio")

DEFECTS = assets_dir() / "urdf" / "defects"
KUKA = resolve_urdf("pybullet_data:kuka_iiwa/model.urdf")
PLANAR = resolve_urdf("simbench:urdf/planar_2r.urdf")
WALL = "simbench:wall_iiwa.toml:arm"
ROLL = (math.pi / 2, 0.0, 0.0)
G = np.array([0.0, 0.0, -9.81])
SAMPLES = 6


def rx(a):
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


class PyBulletUser:
    """A user whose dynamics is PyBullet's: the body loaded as the check loads it."""

    def __init__(self, path, roll=0.0, from_file=True):
        self.c = p.connect(p.DIRECT)
        p.setGravity(*G, physicsClientId=self.c)
        flags = p.URDF_USE_INERTIA_FROM_FILE if from_file else 0
        self.b = p.loadURDF(str(path), [0, 0, 0], p.getQuaternionFromEuler([roll, 0, 0]), useFixedBase=True,
                            flags=flags, physicsClientId=self.c)

    def tau(self, q, qd, qdd):
        return np.array(p.calculateInverseDynamics(self.b, list(q), list(qd), list(qdd), physicsClientId=self.c))

    def close(self):
        p.disconnect(physicsClientId=self.c)


class PinocchioUser:
    """A user whose dynamics is the truth: Pinocchio's rnea on the file, gravity R^T g."""

    def __init__(self, path, roll=0.0):
        self.m = pin.buildModelFromUrdf(str(path))
        self.m.gravity = pin.Motion(np.r_[rx(roll).T @ G, 0, 0, 0])
        self.d = self.m.createData()
        self.names = list(self.m.names)[1:]

    def tau(self, q, qd, qdd):
        return pin.rnea(self.m, self.d, *(np.asarray(x, float) for x in (q, qd, qdd))).copy()


# (case, target, URDF, roll of the fixed base, inertia from the file, the cause)
CASES = [
    ("wall iiwa", WALL, KUKA, ROLL[0], True, "base_orientation_ignored"),
    ("rolled planar 2R", str(PLANAR), PLANAR, ROLL[0], True, "base_orientation_ignored"),
    ("triangle inequality", str(DEFECTS / "triangle_inequality.urdf"), DEFECTS / "triangle_inequality.urdf",
     0.0, True, "triangle_inequality_zeroed"),
    ("missing inertial", str(DEFECTS / "missing_inertial.urdf"), DEFECTS / "missing_inertial.urdf", 0.0, True,
     "missing_inertial_default"),
    ("root inertial rpy", str(DEFECTS / "root_inertial_rpy.urdf"), DEFECTS / "root_inertial_rpy.urdf", 0.0, True,
     "root_inertial_gravity_tilt"),
    ("inertia from shapes", str(DEFECTS / "arm.urdf"), DEFECTS / "arm.urdf", 0.0, False,
     "inertia_from_collision_shapes"),
]


def test_every_cause_where_pybullet_is_wrong_says_what_it_does():
    assert set(DOES) == set(CAUSES) - {"massless_root_welded"}  # welded: the joint rows compared are true


def test_agreeing_with_pybullet_where_it_is_wrong_fails_and_the_truth_is_explained():
    compared = 0
    for case, target, path, roll, from_file, kind in CASES:
        kw = dict(samples=SAMPLES, pinocchio=False, inertia_from_file=from_file,
                  base_orientation=ROLL if roll and target != WALL else None)
        pyb, truth = PyBulletUser(path, roll, from_file), PinocchioUser(path, roll)
        try:
            own = cc.compare(target, **kw)
            naive = cc.compare(target, dynamics=pyb.tau, **kw)
            right = cc.compare(target, dynamics=truth.tau, **kw)
            model = RobotModel.from_urdf(str(path))
            assert truth.names == list(model.joint_names), case
            q, qd, qdd = cc.sample_states(model, SAMPLES, 0)  # the states the check draws (seed 0)
            t_pyb = np.array([pyb.tau(*s) for s in zip(q, qd, qdd)])
            t_pin = np.array([truth.tau(*s) for s in zip(q, qd, qdd)])
        finally:
            pyb.close()
        # simbench's own and the true user dynamics: EXPLAINED by the same cause, same figures
        assert own.verdict == right.verdict == cc.EXPLAINED, (case, own.line(), right.line())
        assert [c.kind for c in own.causes] == [c.kind for c in right.causes] == [kind], (case, right.line())
        assert right.causes[0].before.tau_abs == pytest.approx(own.causes[0].before.tau_abs, rel=1e-9)
        assert right.errors.tau_abs == pytest.approx(np.abs(t_pin - t_pyb).max(), rel=1e-6), case
        # the PyBullet wrapper: it agrees with PyBullet, and FAILs against the truth by the oracle's amount
        assert naive.verdict == cc.FAIL and naive.errors.tau_abs < 1e-9, (case, naive.line())
        d = np.abs(t_pyb - t_pin)
        j = int(np.unravel_index(np.argmax(d), d.shape)[1])
        expect = (f"agrees with PyBullet, which here {DOES[kind]} ({kind}); against the true dynamics "
                  f"tau differs by {d.max():.3g} N m at joint {truth.names[j]!r}")
        assert naive.reason.endswith(expect), (case, naive.reason, expect)
        assert d.max() > 1e-3, case  # a real disagreement (tol 1e-8), not a rounding
        w = naive.worst  # the printed state: PyBullet's, the user's and the true torque
        k = truth.names.index(w["joint"])
        assert w["tau_true"] == pytest.approx(truth.tau(w["q"], w["qd"], w["qdd"])[k], abs=1e-9), case
        assert w["tau_tested"] == pytest.approx(w["tau_pybullet"], abs=1e-9), case
        compared += 1
    assert compared == len(CASES) == 6


def test_rolled_planar_arm_against_the_closed_form():
    """Rolled 90 degrees, the true gravity torques are [0, 0]; a user who keeps the upright
    arm's gravity is off by exactly g(q) of the slide's closed form."""
    m1, m2, L1, L2, g = 1.2, 0.8, 0.6, 0.4, 9.81
    arm = RobotModel.from_urdf(str(PLANAR))
    from simbench.dynamics import inverse_dynamics

    def upright(q, qd, qdd):
        return inverse_dynamics(arm, q, qd, qdd)

    r = cc.compare(str(PLANAR), samples=SAMPLES, dynamics=upright, pinocchio=False, base_orientation=ROLL)
    assert r.verdict == cc.FAIL and "ignores the base's orientation (base_orientation_ignored)" in r.reason
    q, _, _ = cc.sample_states(arm, SAMPLES, 0)
    th1, th2 = q[:, 0], q[:, 1]
    gq = np.stack([(m1 + m2) * L1 * g * np.cos(th1) + m2 * g * L2 * np.cos(th1 + th2),
                   m2 * g * L2 * np.cos(th1 + th2)], 1)
    j = int(np.unravel_index(np.argmax(np.abs(gq)), gq.shape)[1])
    assert r.reason.endswith(f"tau differs by {np.abs(gq).max():.3g} N m at joint {['theta1', 'theta2'][j]!r}")
    w = r.worst
    i = w["sample"]
    assert w["tau_tested"] - w["tau_true"] == pytest.approx(gq[i, ["theta1", "theta2"].index(w["joint"])], abs=1e-9)
    zero = PinocchioUser(PLANAR, ROLL[0]).tau(w["q"], [0, 0], [0, 0])  # the true gravity torques
    np.testing.assert_allclose(zero, [0.0, 0.0], atol=1e-12)
    assert len(gq) == SAMPLES


NAIVE = '''
import simbench.dynamics as d
from simbench.model import RobotModel

kuka = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")

def tau(q, qd, qdd):
    return d.inverse_dynamics(kuka, q, qd, qdd)

def elbow_off(q, qd, qdd):
    t = d.inverse_dynamics(kuka.replace(gravity=(0.0, -9.81, 0.0)), q, qd, qdd)
    t[3] += 0.5
    return t
'''


def test_the_naive_wall_iiwa_through_the_cli(tmp_path):
    """The walkthrough's reproduction: simbench's RNEA on the plain URDF (upright gravity) as the
    user's function on the wall-mounted iiwa: FAIL, exit status 1, the difference from Pinocchio."""
    (tmp_path / "naive_iiwa.py").write_text(textwrap.dedent(NAIVE))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in sys.path if x)}
    out = {}
    for func in ("tau", "elbow_off"):
        proc = subprocess.run([sys.executable, "-m", "simbench.cli", "check", WALL, "--dynamics", f"naive_iiwa:{func}",
                               "--samples", "5", "--json", f"{func}.json"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        out[func] = (proc.stdout.splitlines(), json.loads((tmp_path / f"{func}.json").read_text()))
    upright, rolled = PinocchioUser(KUKA), PinocchioUser(KUKA, ROLL[0])
    q, qd, qdd = cc.sample_states(RobotModel.from_urdf(str(KUKA)), 5, 0)
    d = np.abs(np.array([upright.tau(*s) - rolled.tau(*s) for s in zip(q, qd, qdd)]))
    j = int(np.unravel_index(np.argmax(d), d.shape)[1])
    lines, data = out["tau"]
    assert lines[0].startswith(f"FAIL      {WALL}") and lines[0].endswith(
        f"naive_iiwa:tau agrees with PyBullet, which here ignores the base's orientation (base_orientation_ignored); "
        f"against the true dynamics tau differs by {d.max():.3g} N m at joint {rolled.names[j]!r}"), lines[0]
    assert "yours (naive_iiwa:tau)" in lines[1] and "true (simbench.dynamics)" in lines[1] and " ours " not in lines[1]
    assert data["summary"]["exit_code"] == 1 and data["robots"][0]["worst"]["dynamics"] == "naive_iiwa:tau"
    # wrong in another way too: unexplained, measured against the truth (joint 4 off by 0.5)
    lines, data = out["elbow_off"]
    assert "unexplained: naive_iiwa:elbow_off differs from PyBullet" in lines[0], lines[0]
    assert lines[0].endswith("and from the true dynamics: tau differs by 0.5 N m at joint 'lbr_iiwa_joint_4'")
    assert len(out) == 2 and d.shape == (5, 7)


def test_a_users_fail_where_pybullet_is_wrong_shows_its_error_against_the_truth():
    """xarm6: PyBullet zeroes two links' rotational inertia (EXPLAINED for simbench). A user's
    Pinocchio rnea plus a viscous 1e-3 qd on the wrist FAILs; the table shows that 1e-3 qd error
    (the largest the function itself added), not PyBullet's own 0.17 N m defect."""
    import pybullet_data

    path = os.path.join(pybullet_data.getDataPath(), "xarm/xarm6_robot.urdf")
    pm = pin.buildModelFromUrdf(path)
    data = pm.createData()
    names = [f"joint{i}" for i in range(1, 7)]
    iv = [pm.joints[pm.getJointId(n)].idx_v for n in names]

    def tau(q, qd, qdd):
        a, b, c = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
        a[iv], b[iv], c[iv] = q, qd, qdd
        t = np.asarray(pin.rnea(pm, data, a, b, c))[iv].copy()
        t[5] += 1e-3 * qd[5]
        return t

    r = cc.compare("pybullet_data:xarm/xarm6_robot.urdf", samples=SAMPLES, dynamics=tau)
    assert r.verdict == cc.FAIL and "triangle_inequality_zeroed" in r.reason, r.line()
    # what the function added, from the check's own states drawn again (it runs in a forked child,
    # so a list it appended to would stay empty here); the mass-matrix calls have qd = 0
    model = cc.resolve_target("pybullet_data:xarm/xarm6_robot.urdf").file_model
    _, qd_s, _ = cc.sample_states(model, SAMPLES, 0)
    added = np.abs(1e-3 * qd_s[:, list(model.joint_names).index("joint6")])
    assert r.errors_true.tau_abs == pytest.approx(max(added), rel=1e-6, abs=1e-10)
    assert r.errors.tau_abs > 0.1                       # against PyBullet: its own defect
    assert f"tau {max(added):.2e}" in r.line() and " vs true " in r.line()
    assert r.as_dict()["errors_true"]["tau_abs"] == pytest.approx(max(added), rel=1e-6)
