"""``simbench check --floating`` run the way a user runs it (the CLI, from another folder).

Oracles: PyBullet's floating-base ``calculateInverseDynamics`` / ``calculateMassMatrix`` (mapped
by :mod:`simbench.check.floating`, itself tested against Pinocchio's free flyer), and for a root
of mass 0 the fact measured here by direct calls: PyBullet loads it welded even without
``useFixedBase`` (``getDynamicsInfo`` mass 0, the 7 + n call refused, the n call answered).
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pybullet as p
import pytest

from simbench.paths import resolve_urdf

A1, LAIKAGO, KUKA = ("pybullet_data:a1/a1.urdf", "pybullet_data:laikago/laikago_toes_zup.urdf",
                     "pybullet_data:kuka_iiwa/model.urdf")


def run(args, cwd):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simbench", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


def verdicts(path):
    data = json.loads(path.read_text())
    return data, {r["target"]: r for r in data["robots"]}


def test_kuka_root_is_massless_and_pybullet_welds_it():
    """The fact the EXPLAINED cause rests on, by direct PyBullet calls."""
    c = p.connect(p.DIRECT)
    try:
        b = p.loadURDF(str(resolve_urdf(KUKA)), useFixedBase=False, flags=p.URDF_USE_INERTIA_FROM_FILE,
                       physicsClientId=c)
        assert p.getDynamicsInfo(b, -1, physicsClientId=c)[0] == 0.0
        with pytest.raises(Exception):
            p.calculateInverseDynamics(b, [0, 0, 0, 0, 0, 0, 1] + [0.0] * 7, [0.0] * 13, [0.0] * 13, physicsClientId=c)
        assert len(p.calculateInverseDynamics(b, [0.0] * 7, [0.0] * 7, [0.0] * 7, physicsClientId=c)) == 7
    finally:
        p.disconnect(physicsClientId=c)


def test_check_floating_targets_via_cli(tmp_path):
    out = tmp_path / "r.json"
    proc = run([A1, LAIKAGO, KUKA, "--floating", "--samples", "5", "--json", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data, res = verdicts(out)
    assert data["settings"]["floating"] is True
    assert data["summary"]["PASS"] == 2 and data["summary"]["EXPLAINED"] == 1 and data["summary"]["compared"] == 3
    for name in (A1, LAIKAGO):
        r = res[name]
        assert r["verdict"] == "PASS" and r["dof"] == 18  # the six base rows compared too
        assert r["errors"]["tau_rel"] < 1e-8 and r["errors"]["M_rel"] < 1e-8
        assert r["pinocchio"]["available"] and r["pinocchio"]["vs_ours"]["tau_rel"] < 1e-9
    kuka = res[KUKA]
    assert kuka["verdict"] == "EXPLAINED" and [c["kind"] for c in kuka["causes"]] == ["massless_root_welded"]
    assert kuka["causes"][0]["before"]["tau_abs"] is None  # refused: no number
    assert kuka["causes"][0]["after"]["tau_abs"] < 1e-10
    assert "massless_root_welded [lbr_iiwa_link_0]" in proc.stdout


def test_scene_target_follows_fixed_base(tmp_path):
    (tmp_path / "s.toml").write_text(
        f'[[body]]\nname = "dog"\nurdf = "{A1}"\nposition = [0, 0, 1]\norientation = [0.3, 0, 0]\n'
        f'[[body]]\nname = "arm"\nurdf = "{KUKA}"\nfixed_base = true\norientation = [0, 0.4, 0]\n'
        f'[[body]]\nname = "pup"\nurdf = "{A1}"\nposition = [2, 0, 1]\nscale = 2.0\n')
    out = tmp_path / "r.json"
    proc = run(["s.toml:dog", "s.toml:arm", "s.toml:pup", "--samples", "5", "--json", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    _, res = verdicts(out)
    dog, arm = res["s.toml:dog"], res["s.toml:arm"]
    assert dog["verdict"] == "PASS" and dog["dof"] == 18 and any("floating" in n for n in dog["notes"])
    assert arm["dof"] == 7 and arm["verdict"] == "EXPLAINED"  # the fixed, tilted base: as before
    assert [c["kind"] for c in arm["causes"]] == ["base_orientation_ignored"]
    pup = res["s.toml:pup"]  # floating and scaled: PyBullet keeps masses and inertias, so does sim.model
    assert pup["verdict"] == "PASS" and pup["dof"] == 18 and pup["errors"]["tau_rel"] < 1e-8


def test_floating_with_base_orientation_is_a_usage_error(tmp_path):
    proc = run([A1, "--floating", "--base-orientation", "0", "0", "1"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--base-orientation applies to fixed bases" in proc.stderr


def test_corpus_floating_reports_floating_robots(tmp_path):
    """Every robot of pybullet_data with a floating base: none FAILs, none is SKIPPED for a
    floating reason (PyBullet's refusal of a massless root is EXPLAINED). Measured: 45 robots,
    25 PASS, 15 EXPLAINED (11 with massless_root_welded), 5 SKIPPED: 3 files PyBullet or the parser
    cannot load (as in the fixed-base run) and 2 with spherical joints (not compared yet)."""
    out = tmp_path / "c.json"
    proc = run(["--corpus", "pybullet_data", "--floating", "--samples", "2", "-q", "--json", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data, res = verdicts(out)
    s = data["summary"]
    assert s["FAIL"] == 0 and s["ERROR"] == 0 and s["compared"] >= 40
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    said = re.search(r"with `--floating`, (\d+) PASS, (\d+) EXPLAINED, 0 FAIL, (\d+) SKIPPED", readme)
    assert said and [int(x) for x in said.groups()] == [s["PASS"], s["EXPLAINED"], s["SKIPPED"]], said and said[0]
    skipped = [r for r in res.values() if r["verdict"] == "SKIPPED"]
    assert not [r for r in skipped if "calculateInverseDynamics refuses" in r["reason"] or "floating" in r["reason"]]
    assert not [r for r in skipped if "spherical" in r["reason"]]
    for t in ("pybullet_data:humanoid/humanoid.urdf", "pybullet_data:spherical_joint_limit.urdf"):
        assert res[t]["verdict"] == "EXPLAINED" and "spherical_pivot_at_parent" in {c["kind"] for c in res[t]["causes"]}
    welded = [t for t, r in res.items() if any(c["kind"] == "massless_root_welded" for c in r["causes"])]
    assert len(welded) == 11 and all(res[t]["verdict"] == "EXPLAINED" for t in welded)
    # the others were compared with their six base rows: nv = 6 + joints
    # 29 + the two spherical robots (humanoid, spherical_joint_limit)
    assert sum(1 for t, r in res.items() if r["verdict"] in ("PASS", "EXPLAINED") and t not in welded) == 32  # + husky (loads since 560e26b)
