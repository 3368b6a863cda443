"""MoveIt-like self-collision defaults: the sampled matrix, its cache and SRDF, home poses.

Oracles: direct ``getClosestPoints`` calls, and the files on disk.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import pybullet as p
import pytest

from simbench.bullet.collision import (CollisionDetector, read_srdf_disabled, robot_matrix, self_collision_pairs)
from simbench.bullet.collision_sampling import SAMPLES, SEED, cache_dir
from simbench.bullet.scene import Scene
from simbench.paths import resolve_urdf

HOMES = {  # conventional home / ready poses
    "pybullet_data:kuka_iiwa/model.urdf": np.zeros(7),
    "pybullet_data:franka_panda/panda.urdf": np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785, 0.04, 0.04]),
    "pybullet_data:a1/a1.urdf": np.array([0.0, 0.9, -1.8] * 4),  # standing quadruped, fixed base here
}


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIMBENCH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.mark.parametrize("urdf", list(HOMES))
def test_default_self_collision_is_free_at_home(urdf):
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_dict({"body": [{"name": "robot", "urdf": urdf, "fixed_base": True}]}).load(client)
        pairs = self_collision_pairs(loaded, "robot")
        everything = self_collision_pairs(loaded, "robot", disabled=None)
        det = CollisionDetector(loaded, pairs)
        home = HOMES[urdf]
        assert det.in_collision(home) is False
        # direct PyBullet on every kept pair: apart
        rid = loaded.bodies["robot"]
        for j, x in zip(loaded.robot.movable_indices, home):
            p.resetJointState(rid, j, x, physicsClientId=client)
        for a, b in det.pairs:
            pts = p.getClosestPoints(rid, rid, 0.05, loaded.robot.links[a.link], loaded.robot.links[b.link],
                                     physicsClientId=client)
            assert not pts or min(pt[8] for pt in pts) >= 0.0, (a, b)
        rep = robot_matrix(urdf)
        assert rep.samples == SAMPLES == 10_000 and rep.seed == SEED == 0 and rep.margin == 0.05
        assert len(pairs) > 0 and len(pairs) < len(everything)
        disabled = {frozenset(x[:2]) for x in rep.disabled()}
        assert {frozenset((a.link, b.link)) for a, b in everything} - disabled == {frozenset((a.link, b.link))
                                                                                  for a, b in pairs}
    finally:
        p.disconnect(physicsClientId=client)


@pytest.mark.parametrize("urdf", list(HOMES))
def test_default_means_in_contact_at_the_neutral_pose(urdf):
    """MoveIt's "Default": the pairs in collision at the default pose, no more. Pairs merely close
    there (a1's trunk and rear upper legs: 4 cm) stay checked unless sampling finds them always
    close or never; a pair a few centimetres apart at the neutral pose can collide elsewhere.
    Oracle: getClosestPoints of every non-adjacent link pair at the neutral pose."""
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_dict({"body": [{"name": "robot", "urdf": urdf, "fixed_base": True}]}).load(client)
        rep = robot_matrix(urdf)
        rid, links = loaded.bodies["robot"], loaded.robot.links
        lo = [p.getJointInfo(rid, j, physicsClientId=client)[8] for j in loaded.robot.movable_indices]
        hi = [p.getJointInfo(rid, j, physicsClientId=client)[9] for j in loaded.robot.movable_indices]
        for j, a, b in zip(loaded.robot.movable_indices, lo, hi):
            p.resetJointState(rid, j, float(np.clip(0.0, a, b)) if a < b else 0.0, physicsClientId=client)
        adjacent = {frozenset(x) for x in rep.adjacent}
        compared = close = 0
        for name_a, name_b in rep.fraction:
            if frozenset((name_a, name_b)) in adjacent:
                continue
            pts = p.getClosestPoints(rid, rid, 0.1, links[name_a], links[name_b], physicsClientId=client)
            d = min((pt[8] for pt in pts), default=0.1)
            assert ((name_a, name_b) in rep.default) == (d < 0), (name_a, name_b, d)
            close += 0 <= d < 0.05
            compared += 1
        assert compared == len(rep.fraction) > 20
        if urdf.endswith("a1.urdf"):
            assert close >= 2 and ("trunk", "RR_upper") not in rep.default
    finally:
        p.disconnect(physicsClientId=client)


def test_matrix_is_cached_by_the_file_hash_and_written_as_srdf(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMBENCH_CACHE_DIR", str(tmp_path / "cache"))
    src = resolve_urdf("pybullet_data:kuka_iiwa/model.urdf")
    copy = tmp_path / "iiwa" / "model.urdf"
    shutil.copytree(src.parent, copy.parent)
    first = robot_matrix(copy, n=300)
    files = sorted(cache_dir().glob("model-*"))
    srdf = [f for f in files if f.suffix == ".srdf"]
    assert len(srdf) == 1 and {f.suffix for f in files} == {".srdf", ".json"}
    assert [tuple(e) for e in read_srdf_disabled(srdf[0])] == [tuple(e) for e in first.disabled()]

    import simbench.bullet.collision_sampling as sampling

    def refuse(*args, **kwargs):
        raise AssertionError("sampled again although the file did not change")

    original = sampling.sample_disabled_pairs
    monkeypatch.setattr(sampling, "sample_disabled_pairs", refuse)
    again = robot_matrix(copy, n=300)
    assert again.fraction == first.fraction and again.disabled() == first.disabled()
    monkeypatch.setattr(sampling, "sample_disabled_pairs", original)
    copy.write_text(copy.read_text() + "\n<!-- edited -->\n")  # a new hash: sampled anew
    robot_matrix(copy, n=300)
    assert len(sorted(cache_dir().glob("model-*.srdf"))) == 2


def test_info_collision_prints_the_sampled_matrix(tmp_path):
    env = dict(os.environ, SIMBENCH_CACHE_DIR=str(tmp_path / "cache"))
    exe = shutil.which("simbench", path=os.path.dirname(sys.executable))
    proc = subprocess.run([exe, "info", "pybullet_data:kuka_iiwa/model.urdf", "--collision"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "10000 samples (seed 0)" in out and "closer than 0.05 m" in out
    assert "lbr_iiwa_link_0 / lbr_iiwa_link_1" in out and "disabled: adjacent" in out
    assert "5 pairs checked" in out
