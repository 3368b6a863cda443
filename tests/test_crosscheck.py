"""``simbench check`` on our defect URDFs, wrong user dynamics, the CLI and the reports.

Oracles: PyBullet called directly, Pinocchio's own URDF parser (with the change PyBullet makes
applied by hand), closed-form box inertia.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pybullet as p
import pytest

import simbench.check as cc
from simbench.paths import assets_dir, resolve_urdf
from simbench.errors import SimbenchError
from simbench.testing import assert_matches_pybullet

DEFECTS = assets_dir() / "urdf" / "defects"
ARM = DEFECTS / "arm.urdf"
KUKA = "pybullet_data:kuka_iiwa/model.urdf"
BIKE = "pybullet_data:bicycle/bike.urdf"
G = np.array([0.0, 0.0, -9.81])
RPY = (0.3, 0.5, -0.2)


def bullet_tau(path, q, qd, qdd, orn=(0, 0, 0, 1), flags=p.URDF_USE_INERTIA_FROM_FILE):
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(*G, physicsClientId=c)
        b = p.loadURDF(str(path), [0, 0, 0], list(orn), useFixedBase=True, flags=flags, physicsClientId=c)
        return np.array(p.calculateInverseDynamics(b, list(q), list(qd), list(qdd), physicsClientId=c))
    finally:
        p.disconnect(physicsClientId=c)


def pin_tau(pm, q, qd, qdd, gravity=G):
    pin = pytest.importorskip("pinocchio")

    pm.gravity = pin.Motion(np.r_[gravity, 0, 0, 0])
    return pin.rnea(pm, pm.createData(), np.asarray(q, float), np.asarray(qd, float), np.asarray(qdd, float))


STATE = ([0.4, -0.7, 1.1], [0.5, -1.0, 1.5], [1.0, 2.0, -3.0])  # arm: joint1..3, file order = pin order


# ---------------------------------------------------------------------- defect URDFs
@pytest.mark.parametrize("name, kind, links", [
    ("triangle_inequality.urdf", "triangle_inequality_zeroed", ["link2"]),
    ("missing_inertial.urdf", "missing_inertial_default", ["link2"]),
    ("root_inertial_rpy.urdf", "root_inertial_gravity_tilt", ["base"]),
])
def test_defect_is_explained_with_its_cause(name, kind, links):
    r = cc.compare(DEFECTS / name, samples=15, pinocchio=False)
    assert r.verdict == cc.EXPLAINED, r.line()
    assert [(c.kind, c.links) for c in r.causes] == [(kind, links)]
    c = r.causes[0]
    assert not c.before.within(1e-3) and c.after.within(1e-10)
    assert r.errors.tau_abs == pytest.approx(c.before.tau_abs)


def test_clean_twin_passes_with_pinocchio_as_third_voice():
    pytest.importorskip("pinocchio")
    r = cc.compare(ARM, samples=15)
    assert r.verdict == cc.PASS, r.line()
    assert r.errors.tau_abs < 1e-12 and r.errors.M_abs < 1e-12
    assert r.pinocchio["available"] and cc.Errors(**r.pinocchio["vs_pybullet"]).within(1e-12)


def test_spherical_defect_is_compared():
    # joint2 sits on joint1's axis: PyBullet's pivot defect (the joint at link1's origin) moves it
    # along that axis, which changes nothing on a fixed base; a floating base shows it
    r = cc.compare(DEFECTS / "spherical_joint.urdf", samples=8)
    assert r.verdict == cc.PASS, r.line()
    r = cc.compare(DEFECTS / "spherical_joint.urdf", samples=8, floating=True)
    assert r.verdict == cc.EXPLAINED and [(c.kind, c.links) for c in r.causes] == [
        ("spherical_pivot_at_parent", ["joint2"])], r.line()


# The causes themselves, confirmed with Pinocchio's own parser and PyBullet called directly.
def test_pybullet_zeroes_rotational_inertia_of_a_triangle_violator():
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(DEFECTS / "triangle_inequality.urdf"))
    tb = bullet_tau(DEFECTS / "triangle_inequality.urdf", *STATE)
    assert np.abs(pin_tau(pm, *STATE) - tb).max() > 1e-3
    j = pm.getJointId("joint2")
    pm.inertias[j] = pin.Inertia(pm.inertias[j].mass, pm.inertias[j].lever, np.zeros((3, 3)))
    assert np.abs(pin_tau(pm, *STATE) - tb).max() < 1e-12


def test_pybullet_gives_a_link_without_inertial_one_kilogram():
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(DEFECTS / "missing_inertial.urdf"))
    tb = bullet_tau(DEFECTS / "missing_inertial.urdf", *STATE)
    pm.inertias[pm.getJointId("joint2")] = pin.Inertia(1.0, np.zeros(3), np.eye(3))
    assert np.abs(pin_tau(pm, *STATE) - tb).max() < 1e-12


def test_pybullet_tilts_gravity_by_the_root_inertial_rotation_and_ignores_base_orientation():
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(DEFECTS / "root_inertial_rpy.urdf"))
    R_in = pin.rpy.rpyToMatrix(0.3, -0.2, 0.5)
    R_base = np.array(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(RPY))).reshape(3, 3)
    orn = p.getQuaternionFromEuler(RPY)
    tb = bullet_tau(DEFECTS / "root_inertial_rpy.urdf", *STATE, orn=orn)
    assert np.abs(pin_tau(pm, *STATE, gravity=R_in @ G) - tb).max() < 1e-12
    # the true gravity in the root frame (R_base^T g) is not what PyBullet uses
    assert np.abs(pin_tau(pm, *STATE, gravity=R_base.T @ G) - tb).max() > 0.1


def test_base_orientation_is_explained_for_the_clean_arm():
    r = cc.compare(ARM, samples=15, base_orientation=RPY, pinocchio=False)
    assert r.verdict == cc.EXPLAINED and [c.kind for c in r.causes] == ["base_orientation_ignored"]
    assert r.causes[0].before.tau_abs > 0.1 and r.causes[0].after.within(1e-10)
    # both gravity changes at once: root inertial rpy and base orientation
    r = cc.compare(DEFECTS / "root_inertial_rpy.urdf", samples=10, base_orientation=p.getQuaternionFromEuler(RPY),
                   pinocchio=False)
    assert r.verdict == cc.EXPLAINED
    assert sorted(c.kind for c in r.causes) == ["base_orientation_ignored", "root_inertial_gravity_tilt"]


def test_inertia_from_collision_shapes_is_explained():
    r = cc.compare(ARM, samples=15, inertia_from_file=False, pinocchio=False)
    assert r.verdict == cc.EXPLAINED, r.line()
    assert [(c.kind, c.links) for c in r.causes] == [("inertia_from_collision_shapes", ["link1", "link2", "link3"])]
    # PyBullet's inertia of link1 is that of its 0.08 x 0.08 x 0.3 m collision box (mass from the file)
    c = p.connect(p.DIRECT)
    try:
        b = p.loadURDF(str(ARM), useFixedBase=True, physicsClientId=c)
        diag = p.getDynamicsInfo(b, 0, physicsClientId=c)[2]
    finally:
        p.disconnect(physicsClientId=c)
    # ... enlarged by PyBullet's collision margin, 1 mm on each side (measured)
    m, (x, y, z) = 1.5, (0.082, 0.082, 0.302)
    np.testing.assert_allclose(diag, [m / 12 * (y * y + z * z), m / 12 * (x * x + z * z), m / 12 * (x * x + y * y)],
                               rtol=1e-6)


def test_fresh_client_sees_an_edited_file(tmp_path):
    path = tmp_path / "arm.urdf"
    shutil.copy(ARM, path)
    assert cc.compare(path, samples=5, pinocchio=False).verdict == cc.PASS
    c = p.connect(p.DIRECT)
    try:
        p.loadURDF(str(path), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        path.write_text(ARM.read_text().replace('<mass value="1.5"/>', '<mass value="3.5"/>'))
        p.resetSimulation(physicsClientId=c)
        b = p.loadURDF(str(path), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        assert p.getDynamicsInfo(b, 0, physicsClientId=c)[0] == 1.5  # PyBullet's per-client cache
    finally:
        p.disconnect(physicsClientId=c)
    r = cc.compare(path, samples=5, pinocchio=False)  # a fresh client per robot: the new mass
    assert r.verdict == cc.PASS, r.line()


# ---------------------------------------------------------------------- user dynamics
USER_MODULE = '''
import simbench.dynamics as d
from simbench.model import RobotModel

kuka = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
bike = RobotModel.from_urdf("pybullet_data:bicycle/bike.urdf")
heavy = kuka.with_link_inertial("lbr_iiwa_link_3", mass=2 * float(kuka.link_mass[kuka.link_index("lbr_iiwa_link_3")]))

def right(q, qd, qdd):
    return d.inverse_dynamics(kuka, q, qd, qdd)

def flipped(q, qd, qdd):
    return d.inverse_dynamics(kuka, q, qd, qdd, gravity=(0, 0, 9.81))

def doubled(q, qd, qdd):
    return d.inverse_dynamics(heavy, q, qd, qdd)

def bike_right(q, qd, qdd):
    return d.inverse_dynamics(bike, q, qd, qdd)
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_dyn_for_check.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def parse(*argv):
    parser = argparse.ArgumentParser(prog="simbench check")
    cc.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("func", ["flipped", "doubled"])
def test_wrong_user_dynamics_fails_with_exit_code_1(user_module, func, capsys):
    args = parse(KUKA, "--samples", "8", "--dynamics", f"my_dyn_for_check:{func}", "--json", "out.json")
    assert cc.run_cli(args) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "worst joint" in out
    rob = json.loads((user_module / "out.json").read_text())["robots"][0]
    assert rob["verdict"] == "FAIL" and rob["errors"]["tau_abs"] > 0.1
    try:
        import pinocchio  # noqa: F401
        assert "Pinocchio agrees with PyBullet" in rob["reason"]
    except ImportError:
        pass
    w = rob["worst"]  # the printed state reproduces PyBullet's number
    tb = bullet_tau(resolve_urdf(KUKA), w["q"], w["qd"], w["qdd"])
    j = ["lbr_iiwa_joint_%d" % i for i in range(1, 8)].index(w["joint"])
    assert tb[j] == pytest.approx(w["tau_pybullet"], abs=1e-12)
    assert abs(w["tau_tested"] - w["tau_pybullet"]) > 0.1 and w["dynamics"] == f"my_dyn_for_check:{func}"


def test_right_user_dynamics_passes_and_explains(user_module):
    assert cc.run_cli(parse(KUKA, "--samples", "8", "--dynamics", "my_dyn_for_check:right", "-q")) == 0
    r = cc.compare(BIKE, samples=8, dynamics="my_dyn_for_check:bike_right", pinocchio=False)
    assert r.verdict == cc.EXPLAINED and [c.kind for c in r.causes] == ["root_inertial_gravity_tilt"]


def test_assert_matches_pybullet(user_module):
    import my_dyn_for_check as mine

    assert assert_matches_pybullet(KUKA).verdict == cc.PASS
    assert assert_matches_pybullet(KUKA, dynamics=mine.right, tol=1e-10).verdict == cc.PASS
    with pytest.raises(AssertionError, match="worst joint"):
        assert_matches_pybullet(KUKA, dynamics=mine.doubled)
    assert assert_matches_pybullet(BIKE).verdict == cc.EXPLAINED
    with pytest.raises(AssertionError, match="root_inertial_gravity_tilt"):
        assert_matches_pybullet(BIKE, allow_explained=False)


# ---------------------------------------------------------------------- CLI and reports
def test_reports_json_markdown_plot_and_strict(tmp_path, capsys):
    js, md, plots = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "plots"
    args = parse(str(ARM), BIKE, "--samples", "6", "--json", str(js), "--markdown", str(md), "--plot", str(plots))
    assert cc.run_cli(args) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "EXPLAINED" in out and "2 robots: 1 PASS, 1 EXPLAINED, 0 FAIL" in out
    data = json.loads(js.read_text())
    assert set(data) == {"version", "settings", "summary", "robots"}
    assert data["summary"] == {**data["summary"], "PASS": 1, "EXPLAINED": 1, "FAIL": 0, "exit_code": 0}
    keys = {"target", "name", "path", "verdict", "reason", "dof", "samples", "errors", "causes", "notes",
            "worst", "pinocchio", "seconds", "looks_like", "errors_true"}
    assert all(set(r) == keys for r in data["robots"])
    bike = [r for r in data["robots"] if r["target"] == BIKE][0]
    assert set(bike["errors"]) >= {"tau_abs", "tau_rel", "M_abs", "M_rel"}
    assert bike["causes"][0]["kind"] == "root_inertial_gravity_tilt"
    assert set(bike["causes"][0]) == {"kind", "links", "message", "before", "after"}
    table = [ln for ln in md.read_text().splitlines() if ln.startswith("|")]
    assert len(table) == 4 and table[0].startswith("| robot | verdict |")
    assert all(ln.count("|") == table[0].count("|") for ln in table)
    pngs = sorted(plots.glob("*.png"))
    assert len(pngs) == 2 and all(f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for f in pngs)
    assert cc.run_cli(parse(BIKE, "--samples", "4", "--strict", "-q", "--no-pinocchio")) == 1


@pytest.mark.parametrize("argv", [
    [],                                              # nothing to check
    ["does_not_exist.urdf"],
    ["pybullet_data:no_such_robot.urdf"],
    [KUKA, "--dynamics", "nocolon"],
    [KUKA, "--dynamics", "no_such_module_xyz:f"],
    [KUKA, "--samples", "0"],
    [KUKA, "--base-orientation", "1", "2"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert cc.run_cli(parse(*argv)) == 2
    assert "error:" in capsys.readouterr().err


def run_check(args, cwd):
    """``simbench check`` as a user runs it: a separate process, from another folder."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simbench", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_robot_without_movable_joints_is_skipped_and_the_others_are_checked(tmp_path):
    """docs/check.md: SKIPPED means "nothing to compare: no movable joints"; exit 0 when nothing
    failed and something was compared, 1 when nothing was compared (not a usage error, 2)."""
    cube = "pybullet_data:cube.urdf"
    js, md = tmp_path / "r.json", tmp_path / "r.md"
    proc = run_check([cube, KUKA, "--samples", "4", "--json", str(js), "--markdown", str(md)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert [ln.split()[:2] for ln in lines[:2]] == [["SKIPPED", cube], ["PASS", KUKA]], proc.stdout
    assert lines[0].endswith("no movable joints")
    assert "2 robots: 1 PASS, 0 EXPLAINED, 0 FAIL, 0 ERROR, 1 SKIPPED" in proc.stdout
    data = json.loads(js.read_text())
    robots = {r["target"]: r for r in data["robots"]}
    assert list(robots) == [cube, KUKA]
    assert robots[cube]["verdict"] == "SKIPPED" and robots[cube]["reason"] == "no movable joints"
    assert robots[cube]["dof"] == 0
    assert robots[KUKA]["verdict"] == "PASS" and robots[KUKA]["dof"] == 7
    assert data["summary"] == {**data["summary"], "PASS": 1, "SKIPPED": 1, "compared": 1, "exit_code": 0}
    rows = [ln for ln in md.read_text().splitlines() if ln.startswith(f"| `{cube}`")]
    assert len(rows) == 1 and "**SKIPPED**" in rows[0] and rows[0].endswith("| no movable joints |")
    # only robots without movable joints: nothing was compared, exit 1 (the reports are written)
    proc = run_check(["pybullet_data:plane.urdf", "--json", str(js)], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "SKIPPED" in proc.stdout and "nothing was compared" in proc.stdout
    assert json.loads(js.read_text())["robots"][0]["reason"] == "no movable joints"


def test_corpus_floating_with_base_orientation_is_a_usage_error(tmp_path):
    """Refused before any work whatever the targets (here only the corpus), as for a URDF target."""
    js = tmp_path / "r.json"
    proc = run_check(["--corpus", "pybullet_data", "--floating", "--base-orientation", "0", "0", "1",
                      "--samples", "1", "--json", str(js)], tmp_path)
    assert proc.returncode == 2, proc.stdout[-500:]
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("simbench check: error: "), err
    assert "--base-orientation applies to fixed bases" in err and "--floating" in err
    assert proc.stdout == "" and not js.exists()
    with pytest.raises(SimbenchError, match="--base-orientation applies to fixed bases"):
        cc.check([], corpus="pybullet_data", floating=True, base_orientation=(0, 0, 1))


def test_argparse_errors_exit_2():
    with pytest.raises(SystemExit) as exc:
        parse(KUKA, "--samples", "many")
    assert exc.value.code == 2


def test_compare_bad_target_is_a_simbench_error():
    with pytest.raises(SimbenchError, match="not found"):
        cc.compare("nowhere/robot.urdf")


def test_wired_into_the_simbench_cli(capsys):
    from simbench.cli import main

    assert main(["check", str(ARM), "--samples", "3", "--no-pinocchio", "-q"]) == 0
    assert main(["check"]) == 2
    assert "give at least one TARGET" in capsys.readouterr().err


# ---------------------------------------------------------------------- models PyBullet refuses
@pytest.fixture
def refused(tmp_path):
    """An arm with a negative link mass, and one whose collision mesh is missing."""
    text = ARM.read_text()
    neg = tmp_path / "negative_mass.urdf"
    neg.write_text(text.replace('<mass value="1.2"/>', '<mass value="-1.2"/>'))
    mesh = tmp_path / "missing_mesh.urdf"
    mesh.write_text(text.replace('<geometry><box size="0.06 0.06 0.4"/></geometry>',
                                 '<geometry><mesh filename="meshes/forearm.stl"/></geometry>'))
    assert neg.read_text() != text and mesh.read_text() != text
    return neg, mesh


def test_pybullet_refuses_these_models_directly(refused):
    neg, mesh = refused
    c = p.connect(p.DIRECT)
    try:
        b = p.loadURDF(str(neg), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        with pytest.raises(SystemError):  # chained from pybullet.error
            p.calculateInverseDynamics(b, [0.0] * 3, [0.0] * 3, [0.0] * 3, physicsClientId=c)
        with pytest.raises(p.error, match="Cannot load URDF"):
            p.loadURDF(str(mesh), useFixedBase=True, physicsClientId=c)
    finally:
        p.disconnect(physicsClientId=c)


def test_refused_models_are_skipped_with_pybullets_reason_and_exit_1_when_nothing_compared(refused, tmp_path, capsys):
    from simbench.cli import main

    neg, mesh = refused
    r = cc.compare(neg, samples=2, pinocchio=False)
    assert r.verdict == cc.SKIPPED and "calculateInverseDynamics refuses" in r.reason
    assert "invalid mass -1.2" in r.reason and "'link2'" in r.reason and "\n" not in r.reason
    r = cc.compare(mesh, samples=2, pinocchio=False)  # found by simbench.urdf_source before PyBullet
    assert r.verdict == cc.SKIPPED and "PyBullet cannot load this file" in r.reason and "\n" not in r.reason
    assert "link 'link2': <collision> mesh 'meshes/forearm.stl' not found" in r.reason, r.reason
    js = tmp_path / "r.json"
    assert main(["check", str(neg), str(mesh), "--samples", "2", "--json", str(js)]) == 1
    out = capsys.readouterr().out
    assert "2 robots: 0 PASS, 0 EXPLAINED, 0 FAIL, 0 ERROR, 2 SKIPPED" in out and "nothing was compared" in out
    assert json.loads(js.read_text())["summary"]["compared"] == 0
    assert main(["check", str(neg), str(ARM), "--samples", "2", "-q"]) == 0  # one robot was compared


def test_output_paths_are_checked_before_the_work(tmp_path, capsys):
    from simbench.cli import main

    (tmp_path / "a_file").write_text("x")
    for argv, word in [(["--json", str(tmp_path)], "is a folder"),
                       (["--markdown", str(tmp_path / "a_file" / "r.md")], "a_file"),
                       (["--plot", str(tmp_path / "a_file")], "is a file")]:
        assert main(["check", KUKA, *argv]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""  # nothing was checked
        err = captured.err.strip()
        assert len(err.splitlines()) == 1 and word in err and err.startswith("simbench check: error:"), err


# ---------------------------------------------------------------------- the Pinocchio adapter
@pytest.mark.parametrize("name, floating", [("pybullet_data:r2d2.urdf", False),
                                            ("pybullet_data:quadruped/minitaur.urdf", False),
                                            ("pybullet_data:quadruped/minitaur.urdf", True), (KUKA, False)])
def test_pinocchio_map_matches_joints_by_name(name, floating):
    """Continuous joints (cos, sin in Pinocchio's q), trees whose order differs from ours and a
    free-flyer root: Pinocchio's own parser, mapped by name, against simbench.dynamics, batched."""
    import simbench.dynamics as d
    from simbench.model import RobotModel
    from simbench.oracles.pinocchio import PinocchioDynamics, PinocchioMap

    model = RobotModel.from_urdf(name, floating_base=floating)
    pd = PinocchioDynamics.from_urdf(model)
    rng = np.random.default_rng(0)
    q = model.random_configuration(rng, 4)
    qd, qdd = rng.normal(size=(2, 4, model.nv))
    np.testing.assert_allclose(pd.inverse_dynamics(q, qd, qdd), d.inverse_dynamics(model, q, qd, qdd), atol=1e-9)
    np.testing.assert_allclose(pd.mass_matrix(q), d.mass_matrix(model, q), atol=1e-10)
    tau = d.inverse_dynamics(model, q, qd, qdd)
    np.testing.assert_allclose(pd.forward_dynamics(q, qd, tau), qdd, atol=1e-7)
    built = PinocchioDynamics.from_model(model)  # from our arrays: the same numbers
    np.testing.assert_allclose(built.inverse_dynamics(q, qd, qdd), pd.inverse_dynamics(q, qd, qdd), atol=1e-9)
    m = PinocchioMap(model, pd.pm)
    v = np.arange(model.nv, dtype=float)
    np.testing.assert_array_equal(m.back(m.v(v)), v)
    assert m.q(q).shape == (4, pd.pm.nq) and m.P.shape == (pd.pm.nv, model.nv)


def test_progress_bar_over_the_robots(monkeypatch, capsys):
    monkeypatch.setenv("SIMBENCH_PROGRESS", "1")  # drawn although stderr is not a terminal
    report = cc.check([ARM, KUKA], samples=2, pinocchio=False)
    err = capsys.readouterr().err
    assert [r.verdict for r in report.results] == ["PASS", "PASS"]
    assert "simbench check:" in err and "/2 [" in err and "robot/s" in err  # a bar over 2 robots


def test_old_module_name_is_a_deprecated_alias():
    import importlib
    import sys

    sys.modules.pop("simbench.bullet.crosscheck", None)
    with pytest.warns(DeprecationWarning, match="use simbench.check"):
        old = importlib.import_module("simbench.bullet.crosscheck")
    assert old.compare is cc.compare and old.EXPLAINED == "EXPLAINED" and old.CAUSES is cc.CAUSES


def test_base_orientation_before_the_target_takes_the_target_as_a_target(tmp_path):
    """`check --base-orientation 0 0 1 robot.urdf` failed with "invalid float value:
    'robot.urdf'" (the option took every word after it); the numbers are its own and the rest
    are targets, as in `check robot.urdf --base-orientation 0 0 1`, whose verdict line it
    repeats. A word that is not a number after fewer than 3 numbers is one line naming them."""
    lines = []
    for args in (["--base-orientation", "0", "0", "1", KUKA], [KUKA, "--base-orientation", "0", "0", "1"]):
        proc = run_check([*args, "--samples", "3", "--no-pinocchio"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        lines.append([ln.split("(")[0] for ln in proc.stdout.splitlines() if ln.startswith(("PASS", "EXPLAINED"))])
    assert lines[0] == lines[1] and len(lines[0]) == 1 and KUKA in lines[0][0]
    proc = run_check(["--base-orientation", "0", "x", KUKA], tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "simbench check: error: --base-orientation 0 x: expected roll pitch yaw (3 numbers, radians) or a "
        "quaternion x y z w (4 numbers)"), proc.stderr


def test_a_negative_moment_is_noted_beside_the_explanation(tmp_path):
    """ixx = -0.1: PyBullet zeroes the link's rotational inertia and the check says EXPLAINED
    (triangle_inequality_zeroed), which it is; the notes now also say the file's inertia is no
    body's (it said nothing of the negative moment)."""
    (tmp_path / "neg.urdf").write_text(
        '<robot name="neg"><link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
        'ixy="0" ixz="0" iyz="0"/></inertial></link><link name="arm"><inertial><origin xyz="0.2 0 0"/>'
        '<mass value="1"/><inertia ixx="-0.1" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>')
    report = cc.check([str(tmp_path / "neg.urdf")], samples=3, seed=0, pinocchio=False)
    (r,) = report.results
    assert r.verdict == cc.EXPLAINED and [c.kind for c in r.causes] == ["triangle_inequality_zeroed"]
    said = [n for n in r.notes if "no body has it" in n]
    assert len(said) == 1 and "link 'arm': principal moments [-0.1, 0.01, 0.01]" in said[0]
