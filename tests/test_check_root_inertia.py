"""``simbench check --floating`` on a robot whose ROOT link breaks the inertia triangle inequality
(ixx + iyy < izz): PyBullet zeroes the root's rotational inertia, which matters once the base
floats, so the verdict is EXPLAINED by ``triangle_inequality_zeroed`` (it was FAIL "unexplained").
Likewise a floating root without ``<inertial>`` (PyBullet: 1 kg, unit inertia) is EXPLAINED by
``missing_inertial_default`` (pybullet_data's husky).

Oracles: direct PyBullet calls (``getDynamicsInfo`` shows the root inertia zeroed, mass kept) and
the closed form of the mass-matrix gap: the largest zeroed principal moment, izz = 0.5 kg m^2.
"""
import json
import os
import subprocess
import sys

import pybullet as p
import pytest

LINK = """  <link name="{name}">
    <inertial><origin xyz="{com}"/><mass value="{mass}"/>
      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>
    <collision><geometry><box size="0.4 0.3 0.2"/></geometry></collision>
  </link>
"""
ARM_TAIL = """  <link name="arm">
    <inertial><origin xyz="0 0 0.2"/><mass value="0.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>
  </link>
  <joint name="shoulder" type="revolute"><parent link="box"/><child link="arm"/>
    <origin xyz="0.1 0 0.1" rpy="0 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
"""


def write(tmp_path, stem, ixx, arm=False):
    body = LINK.format(name="box", com="0.01 0 0", mass=2.0, ixx=ixx, iyy=0.3, izz=0.5)
    path = tmp_path / f"{stem}.urdf"
    path.write_text(f'<?xml version="1.0"?>\n<robot name="{stem}">\n{body}{ARM_TAIL if arm else ""}</robot>\n')
    return path


def run(args, cwd):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simbench", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def urdfs(tmp_path):
    bare = tmp_path / "barebox.urdf"   # the root without <inertial>, an arm on it
    bare.write_text('<?xml version="1.0"?>\n<robot name="barebox">\n  <link name="box"/>\n'
                    + ARM_TAIL + "</robot>\n")
    return {"bad": write(tmp_path, "badbox", 0.1), "good": write(tmp_path, "goodbox", 0.3),
            "badarm": write(tmp_path, "badarm", 0.1, arm=True), "bare": bare}


def test_pybullet_zeroes_the_root_inertia(urdfs):
    """The fact the cause rests on, by direct PyBullet calls on a floating base."""
    c = p.connect(p.DIRECT)
    try:
        bad = p.loadURDF(str(urdfs["bad"]), useFixedBase=False, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        good = p.loadURDF(str(urdfs["good"]), useFixedBase=False, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        bare = p.loadURDF(str(urdfs["bare"]), useFixedBase=False, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        info_bad, info_good = p.getDynamicsInfo(bad, -1, physicsClientId=c), p.getDynamicsInfo(good, -1, physicsClientId=c)
        info_bare = p.getDynamicsInfo(bare, -1, physicsClientId=c)
    finally:
        p.disconnect(physicsClientId=c)
    assert info_bare[0] == 1.0 and tuple(info_bare[2]) == (1.0, 1.0, 1.0)
    assert info_bad[0] == 2.0 and tuple(info_bad[2]) == (0.0, 0.0, 0.0)
    assert info_good[0] == 2.0 and sorted(info_good[2]) == pytest.approx([0.3, 0.3, 0.5])


def test_check_floating_explains_a_root_that_breaks_the_triangle_inequality(urdfs, tmp_path):
    out = tmp_path / "r.json"
    targets = [str(urdfs[k]) for k in ("bad", "good", "badarm", "bare")]
    proc = run([*targets, "--floating", "--samples", "10", "--json", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = {os.path.basename(r["target"]): r for r in json.loads(out.read_text())["robots"]}
    assert len(res) == 4
    bad, arm = res["badbox.urdf"], res["badarm.urdf"]
    for r, dof in ((bad, 6), (arm, 7)):
        assert r["verdict"] == "EXPLAINED" and r["dof"] == dof
        assert [(c["kind"], c["links"]) for c in r["causes"]] == [("triangle_inequality_zeroed", ["box"])]
        assert r["causes"][0]["after"]["tau_rel"] < 1e-9 and r["causes"][0]["after"]["M_rel"] < 1e-9
    assert bad["errors"]["M_abs"] == pytest.approx(0.5, rel=1e-12)   # izz, the largest moment zeroed
    line = next(ln for ln in proc.stdout.splitlines() if "badbox.urdf" in ln and "EXPLAINED" in ln)
    assert "triangle_inequality_zeroed [box]" in line
    bare = res["barebox.urdf"]
    assert bare["verdict"] == "EXPLAINED" and bare["dof"] == 7
    assert [(c["kind"], c["links"]) for c in bare["causes"]] == [("missing_inertial_default", ["box"])]
    assert bare["causes"][0]["after"]["tau_rel"] < 1e-9 and bare["causes"][0]["after"]["M_rel"] < 1e-9
    good = res["goodbox.urdf"]
    assert good["verdict"] == "PASS" and good["causes"] == [] and good["errors"]["tau_rel"] < 1e-8


def test_a_welded_root_is_no_cause(urdfs, tmp_path):
    """Without --floating the root's inertia does not move anything: PASS, no cause listed."""
    out = tmp_path / "r.json"
    proc = run([str(urdfs["badarm"]), "--samples", "10", "--json", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (r,) = json.loads(out.read_text())["robots"]
    assert r["verdict"] == "PASS" and r["causes"] == [] and r["dof"] == 1
