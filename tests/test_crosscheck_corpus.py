"""The whole pybullet_data corpus through ``simbench check``: no FAIL, and the robots PyBullet
alters on import come out EXPLAINED with the right cause and links.

Oracle: the verdicts are pinned by name (each EXPLAINED cause was shown with PyBullet called
directly and Pinocchio's own parser in test_crosscheck.py), and the totals are counted."""
import re
import time
from pathlib import Path

import pytest

import simbench.check as cc

PD = "pybullet_data:"
TRI, MISSING, TILT = "triangle_inequality_zeroed", "missing_inertial_default", "root_inertial_gravity_tilt"
EXPECTED_EXPLAINED = {
    "TwoJointRobot_w_fixedJoints.urdf": {TRI: {"link_1", "link_2"}},
    "TwoJointRobot_wo_fixedJoints.urdf": {TRI: {"link_1", "link_2"}},
    "bicycle/bike.urdf": {TILT: {"frameLink"}},
    "mini_cheetah/mini_cheetah.urdf": {TRI: {"thigh_fr", "thigh_fl", "thigh_hr", "thigh_hl"}},
    "quadruped/spirit40newer.urdf": {MISSING: {"FR_upper_shoulder", "FL_upper_shoulder",
                                               "RR_upper_shoulder", "RL_upper_shoulder"}},
    "xarm/xarm6_robot.urdf": {TRI: {"link2", "link3"}},
    "xarm/xarm6_robot_white.urdf": {TRI: {"link2", "link3"}},
    "xarm/xarm6_with_gripper.urdf": {TRI: {"link2", "link3"}},
    "humanoid/humanoid.urdf": {"spherical_pivot_at_parent": {
        "chest", "neck", "right_shoulder", "left_shoulder", "right_hip", "right_ankle", "left_hip", "left_ankle"}},
    "spherical_joint_limit.urdf": {TRI: {"neck"}},
}
EXPECTED_SKIPPED = {  # with a word the reason must contain
    "torus_deform.urdf": "no <link>",                # a deformable, not a robot
    "kuka_iiwa/model_for_sdf.urdf": "PyBullet cannot load",  # its meshes are missing
}


@pytest.fixture(scope="module")
def corpus_report():
    t0 = time.perf_counter()
    report = cc.check([], corpus="pybullet_data", samples=4, seed=1, pinocchio=False)
    print(f"\ncorpus sweep: {len(report.results)} robots in {time.perf_counter() - t0:.1f} s: {report.counts()}")
    return report


def test_corpus_counts_and_no_fail(corpus_report):
    fails = [r.line() for r in corpus_report.results if r.verdict in (cc.FAIL, cc.ERROR)]
    assert not fails, "\n".join(fails)
    assert corpus_report.counts() == {"PASS": 33, "EXPLAINED": 10, "FAIL": 0, "ERROR": 0, "SKIPPED": 2}
    # and the README says what a user gets (it said 32 PASS, 3 SKIPPED for sessions after a fix)
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    said = re.search(r"runs every bundled robot with movable joints: (\d+) PASS, (\d+) EXPLAINED, (\d+) FAIL, "
                     r"(\d+) ERROR, (\d+) SKIPPED", readme)
    assert said and dict(zip(["PASS", "EXPLAINED", "FAIL", "ERROR", "SKIPPED"], map(int, said.groups()))) == \
        corpus_report.counts(), said and said[0]
    assert len(corpus_report.results) == 45  # the distinct URDFs with movable joints (+ skipped)
    assert corpus_report.exit_code() == 0
    assert corpus_report.exit_code(strict=True) == 1  # EXPLAINED robots exist


def test_altered_robots_are_explained_with_the_right_cause(corpus_report):
    for name, causes in EXPECTED_EXPLAINED.items():
        r = corpus_report[PD + name]
        assert r.verdict == cc.EXPLAINED, r.line()
        assert {c.kind: set(c.links) for c in r.causes} == causes, r.line()
        for c in r.causes:  # a real disagreement that the rebuilt model removes
            assert c.before.tau_abs > 1e-3 or c.before.M_abs > 1e-3
            assert c.after.within(1e-8), c.after


def test_everything_else_passes_or_is_skipped_with_a_reason(corpus_report):
    for r in corpus_report.results:
        name = r.target.removeprefix(PD)
        if name in EXPECTED_EXPLAINED:
            continue
        if name in EXPECTED_SKIPPED:
            assert r.verdict == cc.SKIPPED and EXPECTED_SKIPPED[name] in r.reason, r.line()
        else:
            assert r.verdict == cc.PASS, r.line()
            assert r.errors.within(1e-8) and not r.causes


def test_the_husky_is_read_as_pybullet_reads_its_xacro_leftovers(corpus_report):
    """husky.urdf holds xacro left-overs ($(optenv ...)) in a fixed joint's origin: it was
    SKIPPED; read as PyBullet reads them (560e26b) it PASSes against PyBullet."""
    r = corpus_report[PD + "husky/husky.urdf"]
    assert r.verdict == cc.PASS and r.errors.within(1e-8), r.line()


def test_small_residuals_are_traced_to_pybullets_diagonalised_inertia(corpus_report):
    # aliengo's ~1e-9 residual: PyBullet keeps principal moments + a rotation, not the file's tensor
    r = corpus_report[PD + "aliengo/aliengo.urdf"]
    assert r.verdict == cc.PASS and r.errors.tau_abs > 1e-12
    assert any("diagonalised link inertia" in n for n in r.notes), r.notes


def test_corpus_is_deduplicated_and_parsed_once():
    import hashlib

    targets, skipped = cc.corpus_targets()
    labels = [t.label for t in targets]
    assert len(set(labels)) == len(labels) == 43 and len(skipped) == 2  # model_for_sdf: meshes missing
    digests = [hashlib.sha1(t.path.read_bytes()).hexdigest() for t in targets]
    assert len(set(digests)) == len(digests)
    assert all(t.file_model.source == str(t.path) and t.file_model.dof > 0 for t in targets)
