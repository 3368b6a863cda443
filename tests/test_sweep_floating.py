"""simbench sweep dynamics --floating: a free-root robot (pybullet_data's a1) swept with a free-flyer
base, its rows against Pinocchio's own URDF parse with its own JointModelFreeFlyer (rnea, crba, aba
per row), the sampler regenerated with NumPy alone, the one warning line for a free root left
welded, and the manifest refusing to resume a welded folder as a floating one (and back)."""
import subprocess
import sys

import numpy as np
import pytest

from simbench.errors import SimbenchError
from simbench.model import RobotModel
from simbench.sweep import read_manifest, sweep
from simbench.sweep.sampling import BLOCK

A1 = "pybullet_data:a1/a1.urdf"
IIWA = "pybullet_data:kuka_iiwa/model.urdf"
BASE_Q = ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"]
BASE_V = ["base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def pybullet_limits(joints: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The joints' limits as PyBullet reads a1.urdf."""
    import pybullet as p

    from simbench.paths import pybullet_data_dir

    client = p.connect(p.DIRECT)
    try:
        robot = p.loadURDF(str(pybullet_data_dir() / "a1/a1.urdf"), physicsClientId=client)
        info = [p.getJointInfo(robot, j, physicsClientId=client) for j in range(p.getNumJoints(robot, physicsClientId=client))]
    finally:
        p.disconnect(physicsClientId=client)
    lim = {i[1].decode(): i[8:10] for i in info}
    return np.array([lim[j] for j in joints]).T


def test_floating_rows_equal_pinocchio_free_flyer_rnea_crba_aba(tmp_path):
    from simbench.oracles.pinocchio import PinocchioDynamics

    n, seed = 300, 11
    res = sweep("dynamics", A1, samples=n, seed=seed, out=tmp_path / "a1", chunk_size=128, workers=1,
                floating=True, progress=False)
    a = res.arrays()
    model = RobotModel.from_urdf(A1, floating_base=True)
    joints = list(model.joint_names)
    assert len(joints) == 12 and a["q"].shape == (n, 19) and a["tau"].shape == (n, 18) and a["M"].shape == (n, 18, 18)
    cols = res.dataset().schema.names
    assert cols[1:20] == [f"q({c})" for c in BASE_Q + joints]
    assert cols[20:38] == [f"qd({c})" for c in BASE_V + joints]
    assert f"tau({BASE_V[0]})" in cols and f"M(base_wz, {joints[-1]})" in cols and f"qdd_free({BASE_V[-1]})" in cols
    # the oracle: Pinocchio's own parse of the file with its own free flyer, through the project's adapter
    pin = PinocchioDynamics.from_urdf(model)
    assert pin.pm.joints[1].shortname() == "JointModelFreeFlyer" and pin.pm.nq == 19 and pin.pm.nv == 18
    compared = 0
    for i in range(n):
        q, v, acc = a["q"][i], a["qd"][i], a["qdd"][i]
        tau = pin.inverse_dynamics(q, v, acc)
        assert np.allclose(a["tau"][i], tau, rtol=1e-9, atol=1e-9), (i, np.abs(a["tau"][i] - tau).max())
        assert np.allclose(a["M"][i], pin.mass_matrix(q), rtol=1e-9, atol=1e-10), i
        assert np.allclose(a["qdd_free"][i], pin.forward_dynamics(q, v, np.zeros(18)), rtol=1e-7, atol=1e-7), i
        compared += 1
    assert compared == n == 300
    # the base wrench is not zero (the base is not welded: its force and torque are in the rows)
    assert np.abs(a["tau"][:, :6]).max() > 1.0
    # the sampler, regenerated with NumPy alone: base position in [-1, 1] m, orientation by Shoemake's rule
    # from three uniforms, joints within their limits, twist and its rate in [-2, 2] and [-5, 5]
    lo, hi = pybullet_limits(joints)
    u = np.concatenate([np.random.default_rng(s).random((BLOCK, 6 + 12 + 36))
                        for s in np.random.SeedSequence(seed).spawn(1)])[:n]
    s1, t2, t3 = np.sqrt(1 - u[:, 3]), 2 * np.pi * u[:, 4], 2 * np.pi * u[:, 5]
    quat = np.stack([s1 * np.sin(t2), s1 * np.cos(t2), np.sqrt(u[:, 3]) * np.sin(t3), np.sqrt(u[:, 3]) * np.cos(t3)], 1)
    assert np.array_equal(a["q"][:, :3], -1 + 2 * u[:, :3])
    assert np.allclose(a["q"][:, 3:7], quat, atol=1e-15)
    assert np.array_equal(a["q"][:, 7:], lo + (hi - lo) * u[:, 6:18])
    assert np.array_equal(a["qd"], -2 + 4 * u[:, 18:36]) and np.array_equal(a["qdd"], -5 + 10 * u[:, 36:])
    assert np.allclose(np.linalg.norm(a["q"][:, 3:7], axis=1), 1, atol=1e-15)
    assert np.allclose((a["q"][:, 3:7] ** 2).mean(0), 0.25, atol=0.05)  # uniform on SO(3): E[q_k^2] = 1/4


def test_free_root_without_floating_is_one_warning_line(tmp_path):
    welded = run_cli("dynamics", A1, "--samples", "5", "--out", "w", "-q", cwd=tmp_path)
    assert welded.returncode == 0, welded.stderr
    lines = welded.stderr.strip().splitlines()
    assert lines == ["simbench sweep: warning: pybullet_data:a1/a1.urdf: the base (root link 'trunk': 4 limbs, "
                     "4.714 kg) is welded to the world; --floating (floating=True) simulates it free, with the "
                     "base pose, twist and wrench as columns"], welded.stderr
    assert read_manifest(tmp_path / "w")["job"]["options"]["floating"] is False
    free = run_cli("dynamics", A1, "--samples", "5", "--out", "f", "-q", "--floating", cwd=tmp_path)
    arm = run_cli("dynamics", IIWA, "--samples", "5", "--out", "i", "-q", cwd=tmp_path)  # a fixed arm: no warning
    for proc in (free, arm):
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert read_manifest(tmp_path / "f")["job"]["options"]["floating"] is True
    wrong = run_cli("collision", "simbench:kuka_cubes.toml", "--samples", "5", "--out", "c", "--floating", cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stderr.strip() == \
        "simbench sweep: error: --floating is not an option of sweep collision", wrong.stderr
    with pytest.raises(SimbenchError, match=r"^floating = 'yes'; expected True \(a free-flyer base\) or False"):
        sweep("dynamics", A1, samples=5, out=tmp_path / "y", floating="yes", progress=False)


def test_a_welded_folder_is_not_resumed_as_a_floating_one_and_back(tmp_path):
    kw = dict(samples=40, seed=2, chunk_size=20, workers=1, progress=False)
    sweep("dynamics", A1, out=tmp_path / "w", **kw)
    sweep("dynamics", A1, out=tmp_path / "f", floating=True, **kw)
    refused = 0
    for out, floating, there, here in ((tmp_path / "w", True, False, True), (tmp_path / "f", False, True, False)):
        with pytest.raises(SimbenchError, match="holds another sweep") as exc:
            sweep("dynamics", A1, out=out, floating=floating, **kw)
        said = str(exc.value)
        assert f"--floating is {there} there, {here} in this run" in said and "\n" not in said, said
        assert said.endswith(f"holds another sweep: --floating is {there} there, {here} in this run; "
                             "use another --out, or the same parameters to resume"), said   # the bounds follow
        assert len(read_manifest(out)["runs"]) == 1   # nothing run, nothing recorded
        refused += 1
    assert refused == 2
    again = sweep("dynamics", A1, out=tmp_path / "f", floating=True, **kw)   # the same parameters resume
    assert again.complete and again.skipped == 2 and again.computed == 0


def test_check_sweep_with_floating_checks_the_free_flyer_model(tmp_path):
    """``sweep check --floating`` checks each URDF as ``simbench check --floating`` does: the
    a1's row has the free-flyer model's dof (Pinocchio's own parse with its JointModelFreeFlyer:
    nv = 18), without the option the welded one's (nv = 12); the option is one of the sweep's
    (a folder of one is not resumed as the other)."""
    import pinocchio
    from simbench.paths import resolve_urdf

    path = str(resolve_urdf(A1))
    nv = {True: pinocchio.buildModelFromUrdf(path, pinocchio.JointModelFreeFlyer()).nv,
          False: pinocchio.buildModelFromUrdf(path).nv}
    assert nv == {True: 18, False: 12}
    compared = 0
    for floating in (True, False):
        out = tmp_path / f"chk{int(floating)}"
        proc = run_cli("check", A1, "--samples", "4", "--out", str(out), *(["--floating"] if floating else []))
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        row = sweep("check", A1, samples=4, out=out, floating=floating, progress=False).arrays()
        assert int(row["dof"][0]) == nv[floating] and row["verdict"][0] in ("PASS", "EXPLAINED"), row
        compared += 1
    assert compared == 2
    with pytest.raises(SimbenchError, match="floating"):
        sweep("check", A1, samples=4, out=tmp_path / "chk0", floating=True, progress=False)
