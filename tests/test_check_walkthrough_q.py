"""A legged-robotics user's walkthrough (Q) of ``simbench check`` / ``sweep`` / ``info`` on the
a1: a root that looks free checked welded gets one hint, a function written for the floating q
is told --floating, scene bodies say that --floating does not apply to them, a FAIL names a base
entry as an entry (and its state is not 55 numbers long), the classic floating-base convention
mistakes are named, a refused sweep is one line, and info gives each joint's q and v index.
Numbers against Pinocchio (called directly) and the URDF read with ElementTree."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import simbench.check as cc
from simbench.paths import resolve_urdf

A1 = "pybullet_data:a1/a1.urdf"
KUKA = "pybullet_data:kuka_iiwa/model.urdf"
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def simbench(*args, cwd):
    return subprocess.run([sys.executable, "-m", "simbench.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=ENV)


def a1_root_facts():
    """(limbs, kg of the root and the links welded to it) of the a1, from the URDF itself."""
    root = ET.parse(resolve_urdf(A1)).getroot()
    mass = {link.get("name"): float(link.find("inertial/mass").get("value")) for link in root.findall("link")
            if link.find("inertial/mass") is not None}
    welded, limbs = {"trunk"}, 0
    for joint in root.findall("joint"):   # the a1's joints are listed parents first
        parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
        if parent in welded:
            if joint.get("type") == "fixed":
                welded.add(child)
            else:
                limbs += 1
    return limbs, sum(mass.get(k, 0.0) for k in welded)


# ---------------------------------------------------------------------- 1. the root looks free
def test_a_free_looking_root_checked_welded_gets_one_hint(tmp_path):
    limbs, kg = a1_root_facts()
    assert (limbs, round(kg, 3)) == (4, 4.714)
    proc = simbench("check", A1, KUKA, "--samples", "3", "--no-pinocchio", "--json", "r.json", "--markdown", "r.md",
                    cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout + proc.stderr
    said = f"hint: its root looks free ({limbs} limbs, {kg:.4g} kg on root link 'trunk')"
    hints = [ln for ln in proc.stdout.splitlines() if "hint:" in ln]
    assert len(hints) == 1 and hints[0].startswith(f"  {A1}: {said}") and \
        hints[0].endswith("--floating checks it as a floating base (q = base pose + joints, v = base twist + "
                          "joint rates)"), proc.stdout
    robots = {r["target"]: r for r in json.loads((tmp_path / "r.json").read_text())["robots"]}
    assert [n for n in robots[A1]["notes"] if n.startswith(said)] and robots[A1]["verdict"] == "PASS"
    assert not [n for n in robots[KUKA]["notes"] if "hint" in n]   # an arm on the world: no hint
    assert f"- `{A1}`: {said}" in (tmp_path / "r.md").read_text()
    floating = simbench("check", A1, "--floating", "--samples", "3", "--no-pinocchio", cwd=tmp_path)
    assert floating.returncode == 0 and "hint" not in floating.stdout, floating.stdout


@pytest.fixture(scope="module")
def a1_pin():
    """Pinocchio's free-flyer a1 and the map of our v entries to its (joints matched by name)."""
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(resolve_urdf(A1)), pin.JointModelFreeFlyer())
    from simbench.model import RobotModel

    model = RobotModel.from_urdf(A1, floating_base=True)
    v_pin = np.r_[np.arange(6), [pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names]]
    q_pin = np.r_[np.arange(7), [pm.joints[pm.getJointId(n)].idx_q for n in model.joint_names]]
    return pin, pm, q_pin, v_pin


def pin_rnea(a1_pin, q, v, a):
    """Pinocchio's inverse dynamics in our order (the truth)."""
    pin, pm, q_pin, v_pin = a1_pin
    qp, vp, ap = np.empty(pm.nq), np.empty(pm.nv), np.empty(pm.nv)
    qp[q_pin], vp[v_pin], ap[v_pin] = q, v, a
    return np.array(pin.rnea(pm, pm.createData(), qp, vp, ap))[v_pin]


def test_a_function_for_the_floating_q_checked_welded_is_told_floating(a1_pin):
    pin, pm, *_ = a1_pin

    def floating_written(q, qd, qdd):
        return pin.rnea(pm, pm.createData(), q, qd, qdd)     # Pinocchio: 'expected 19, got 12'

    def numpy_written(q, qd, qdd):
        return np.zeros(18) + qd                             # operands could not be broadcast (18,) (12,)

    compared = 0
    for func, n_named, what in ((floating_written, pm.nq, "q"), (numpy_written, pm.nv, "v")):
        r = cc.compare(A1, samples=2, dynamics=func, pinocchio=False)
        assert r.verdict == "ERROR", r.line()
        assert (f"(it was given q, qd and qdd of {pm.nv - 6} entries, the base welded to the world; {n_named} in "
                f"the error looks like a floating base's {what} ({pm.nq} positions, {pm.nv} velocities): "
                f"--floating checks it as a floating base)") in r.reason, r.reason
        compared += 1
    assert compared == 2


# ---------------------------------------------------------------------- 2. scene bodies and --floating
def test_floating_on_a_welded_scene_body_is_one_warning(tmp_path):
    (tmp_path / "s.toml").write_text(f'[[body]]\nname = "arm"\nurdf = "{KUKA}"\nfixed_base = true\n'
                                     f'[[body]]\nname = "dog"\nurdf = "{A1}"\nposition = [0, 0, 1]\n')
    proc = simbench("check", "s.toml:arm", "s.toml:dog", "--floating", "--samples", "2", "--no-pinocchio",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.splitlines() == [
        "simbench check: warning: --floating (floating=True) does not apply to scene body 'arm' (s.toml:arm): "
        "a scene body follows its fixed_base, and 's.toml' sets fixed_base = true; it is checked welded "
        "(fixed_base = false checks it floating)"], proc.stderr       # the dog is floating anyway: no line
    plain = simbench("check", "s.toml:arm", "--samples", "2", "--no-pinocchio", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr


# ---------------------------------------------------------------------- 3. a FAIL on a base entry
def test_a_fail_on_the_base_names_an_entry_and_a_short_state(tmp_path, a1_pin):
    (tmp_path / "dog_dyn.py").write_text(
        "import numpy as np\nimport pinocchio as pin\nfrom simbench.paths import resolve_urdf\n"
        "from simbench.model import RobotModel\n"
        "pm = pin.buildModelFromUrdf(str(resolve_urdf('pybullet_data:a1/a1.urdf')), pin.JointModelFreeFlyer())\n"
        "names = RobotModel.from_urdf('pybullet_data:a1/a1.urdf', floating_base=True).joint_names\n"
        "v_pin = np.r_[np.arange(6), [pm.joints[pm.getJointId(n)].idx_v for n in names]]\n"
        "q_pin = np.r_[np.arange(7), [pm.joints[pm.getJointId(n)].idx_q for n in names]]\n"
        "def tau(q, qd, qdd):\n"
        "    qp, vp, ap = np.empty(pm.nq), np.empty(pm.nv), np.empty(pm.nv)\n"
        "    qp[q_pin], vp[v_pin], ap[v_pin] = q, qd, qdd\n"
        "    out = np.array(pin.rnea(pm, pm.createData(), qp, vp, ap))[v_pin]\n"
        "    out[0] += 50.0   # a wrong base force along x\n"
        "    return out\n")
    proc = simbench("check", A1, "--floating", "--dynamics", "dog_dyn:tau", "--samples", "3", "--no-pinocchio",
                    "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"FAIL      {A1}") and "worst entry 'base_vx' at sample" in lines[0], lines[0]
    assert "worst joint" not in proc.stdout
    detail = [ln for ln in lines if ln.startswith(f"  FAIL {A1}: ")]
    assert len(detail) == 1 and detail[0].startswith(f"  FAIL {A1}: worst entry 'base_vx': yours (dog_dyn:tau) ")
    assert "q, qd, qdd of 19, 18, 18 numbers in full in the JSON report's worst" in detail[0]
    assert len(detail[0]) < 300, len(detail[0])                      # it was about 1,500 characters
    w = json.loads((tmp_path / "r.json").read_text())["robots"][0]["worst"]
    assert (len(w["q"]), len(w["qd"]), len(w["qdd"])) == (19, 18, 18) and w["joint"] == "base_vx"
    truth = pin_rnea(a1_pin, np.array(w["q"]), np.array(w["qd"]), np.array(w["qdd"]))   # full precision kept
    assert w["tau_pybullet"] == pytest.approx(truth[0], abs=1e-8)
    assert w["tau_tested"] - truth[0] == pytest.approx(50.0, abs=1e-9)


# ---------------------------------------------------------------------- 4. convention mistakes named
def _rotation(q):
    x, y, z, w = q[3:7]
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_floating_base_convention_mistakes_are_named(a1_pin):
    def base_rotated(x, R):
        x = np.array(x, float)
        x[:3], x[3:6] = R @ x[:3], R @ x[3:6]
        return x

    def world_twist(q, qd, qdd):        # takes v[0:6], a[0:6] as world-frame and turns them to the base's
        R = _rotation(q)
        return pin_rnea(a1_pin, q, base_rotated(qd, R.T), base_rotated(qdd, R.T))

    def wxyz(q, qd, qdd):               # reads q[3:7] as w x y z
        return pin_rnea(a1_pin, np.r_[q[:3], q[4:7], q[3], q[7:]], qd, qdd)

    def world_wrench(q, qd, qdd):       # returns the base wrench in world axes
        return base_rotated(pin_rnea(a1_pin, q, qd, qdd), _rotation(q))

    def right(q, qd, qdd):
        return pin_rnea(a1_pin, q, qd, qdd)

    cases = [(world_twist, "your base velocity and acceleration look like they are read in the world frame"),
             (wxyz, "your quaternion looks read as w x y z: simbench's q[3:7] is qx qy qz qw"),
             (world_wrench, "your base wrench looks returned in world axes")]
    compared = 0
    for func, said in cases:
        r = cc.compare(A1, samples=4, dynamics=func, floating=True, pinocchio=False)
        assert r.verdict == "FAIL" and r.looks_like and r.looks_like.startswith(said), (func.__name__, r.reason)
        assert r.reason.endswith("; looks like: " + r.looks_like) and not r.reason.startswith("unexplained")
        assert float(r.looks_like.rsplit("matches to ", 1)[1].rstrip(")")) < 1e-8
        assert r.errors.tau_abs > 1e-3, r.errors                      # a real difference was explained
        compared += 1
    assert compared == 3
    ok = cc.compare(A1, samples=4, dynamics=right, floating=True, pinocchio=False)
    assert ok.verdict == "PASS" and ok.errors.tau_abs < 1e-8, ok.line()


# ---------------------------------------------------------------------- 5. a refused sweep is one line
def test_a_sweep_refused_for_its_folder_prints_one_line(tmp_path):
    first = simbench("sweep", "dynamics", A1, "--samples", "4", "--seed", "0", "--out", "swd", "--floating", "-q",
                     cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = simbench("sweep", "dynamics", A1, "--samples", "4", "--seed", "0", "--out", "swd", cwd=tmp_path)
    assert again.returncode == 2, again.stdout + again.stderr
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simbench sweep: error: sweep output folder 'swd' holds another "
                                                   "sweep"), again.stderr
    assert "welded" not in again.stderr


# ---------------------------------------------------------------------- 6. info's q and v indices
def test_info_floating_gives_the_q_and_v_index_of_each_joint(tmp_path):
    """The indices PyBullet's floating-base calculateInverseDynamics reads each joint at: its
    movable joints (getJointInfo order) after the base's 7 positions and 6 velocities."""
    import pybullet as p

    c = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(resolve_urdf(A1)), useFixedBase=False, physicsClientId=c)
        infos = [p.getJointInfo(body, k, physicsClientId=c) for k in range(p.getNumJoints(body, physicsClientId=c))]
    finally:
        p.disconnect(physicsClientId=c)
    movable = [i[1].decode() for i in infos if i[2] != p.JOINT_FIXED]
    out = simbench("info", "--floating", A1, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    at = lines.index("  movable joints (q order; q index, v index):")
    assert lines[at + 1].split()[:5] == ["q", "0-6", "v", "0-5", "base"]
    compared = 0
    for k, name in enumerate(movable):
        assert lines[at + 2 + k].split()[:5] == ["q", str(7 + k), "v", str(6 + k), name], lines[at + 2 + k]
        compared += 1
    assert compared == 12 and lines[at + 2].split()[:5] == ["q", "7", "v", "6", "FR_hip_joint"]
    assert lines[at + 14] == "  issues: none"
    fixed = simbench("info", KUKA, cwd=tmp_path).stdout.splitlines()   # a fixed base keeps its listing
    at = fixed.index("  movable joints (q order):")
    assert fixed[at + 1].split()[:2] == ["0", "lbr_iiwa_joint_1"]


def test_a_target_given_twice_is_checked_once_with_one_line(tmp_path):
    """``check a.urdf a.urdf`` (and the same file by two names) checked the robot twice without a
    word (walkthrough T). Oracle: the report's robot count and the lines on stderr."""
    import subprocess
    import sys
    from pathlib import Path

    import simbench

    full = Path(simbench.__file__).parent / "assets" / "urdf" / "planar_2r.urdf"
    proc = subprocess.run([sys.executable, "-m", "simbench", "check", "simbench:planar_2r.urdf", "simbench:planar_2r.urdf",
                           str(full), "--samples", "2", "--no-pinocchio"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "1 robot: 1 PASS" in proc.stdout, proc.stdout
    assert proc.stderr.splitlines() == [
        "simbench check: warning: simbench:planar_2r.urdf given twice; checked once",
        f"simbench check: warning: {full} is simbench:planar_2r.urdf again (the same file and load); checked once"]
