"""Bad inputs to the Simulation API, run the way a user runs them: a Python process started from
an empty folder calls the API, and each refusal must be one line of a simbench error naming
the bad value and what was expected (found by a user walkthrough of the installed wheel)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

RUNNER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import simbench
    from simbench.dynamics.configuration import random_configuration
    exec(sys.argv[1])
    out = []
    for call in json.loads(sys.argv[2]):
        try:
            eval(call)
            out.append([call, None, None])
        except BaseException as exc:
            out.append([call, type(exc).__name__, str(exc)])
    print(json.dumps({"results": out, "after": eval(sys.argv[3])}))
""")


def run_calls(tmp_path, setup: str, calls: list[str], after: str = "None") -> tuple[list, object]:
    """``calls`` evaluated one by one after ``setup`` in a fresh interpreter started in
    ``tmp_path``: per call [call, error class or None, message], and the value of ``after``."""
    proc = subprocess.run([sys.executable, "-c", RUNNER, textwrap.dedent(setup), json.dumps(calls), after],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data["results"], data["after"]


def check_refused(results: list, cases: list[tuple[str, str, tuple[str, ...]]]) -> int:
    """Every call refused with the expected error class in one line holding every fragment;
    returns how many were compared."""
    assert [r[0] for r in results] == [c[0] for c in cases]
    for (call, kind, message), (_, want_kind, fragments) in zip(results, cases):
        assert kind == want_kind, (call, kind, message)
        assert "\n" not in message, (call, message)
        for fragment in fragments:
            assert fragment in message, (call, fragment, message)
    return len(results)


SIM = "sim = simbench.Simulation(gui=False); r = sim.robot; q = r.q"

STEPPING = [
    ('sim.step("10")', "SimbenchError", ("sim.step: n = '10'", "expected a whole number of steps >= 0",
                                         "did you mean 10?")),
    ("sim.step(2.5)", "SimbenchError", ("n = 2.5", "did you mean 2?")),
    ("sim.step(True)", "SimbenchError", ("n = True", "did you mean 1?")),
    ("sim.step(-1)", "SimbenchError", ("n = -1", "did you mean 0?")),
    ("sim.step(float('nan'))", "SimbenchError", ("n = nan", "expected a whole number of steps >= 0")),
    ("sim.advance(-1)", "SimbenchError", ("sim.advance: seconds = -1", "expected a finite number of seconds >= 0",
                                          "did you mean 0.0?")),
    ('sim.advance("1")', "SimbenchError", ("seconds = '1'", "did you mean 1.0?")),
    ("sim.advance(float('inf'))", "SimbenchError", ("seconds = inf", "finite number of seconds")),
    ("sim.run_until(float('nan'))", "SimbenchError", ("sim.run_until: t = nan", "finite number of seconds")),
    ('sim.run_until("1")', "SimbenchError", ("t = '1'", "did you mean 1.0?")),
    ("sim.run_until(1, callback=3)", "SimbenchError", ("step callback = 3", "expected a function")),
]


def test_stepping_refuses_strings_fractions_negatives_and_nan_without_stepping(tmp_path):
    """``sim.step("10")`` stepped 10 times and ``sim.advance(-1)`` returned silently; now each of
    the 11 bad counts and times is one line, and not one step was taken. Valid numpy scalars
    still step."""
    results, steps = run_calls(tmp_path, SIM, [c[0] for c in STEPPING], "sim.steps")
    assert check_refused(results, STEPPING) == 11
    assert steps == 0
    good, steps = run_calls(tmp_path, SIM, ["sim.step(np.int64(2))", "sim.advance(np.float64(1 / 240))",
                                            "sim.run_until(0)"], "sim.steps")
    assert [r[1] for r in good] == [None, None, None] and steps == 3


RANDOM = [
    ('m.random_configuration("a")', "SimbenchError",
     ("rng = 'a'", "expected a numpy Generator (np.random.default_rng(...)), an integer seed >= 0 or None")),
    ('random_configuration(m, "a")', "SimbenchError", ("rng = 'a'", "integer seed >= 0")),
    ("m.random_configuration(-1)", "SimbenchError", ("rng = -1", "did you mean 0?")),
    ("m.random_configuration(np.random.SeedSequence(0))", "SimbenchError", ("rng = SeedSequence(", "default_rng")),
    ("m.random_configuration(0, -1)", "SimbenchError", ("n = -1", "expected a number of samples, an integer >= 0",
                                                        "did you mean 0?")),
    ("m.random_configuration(0, 2.5)", "SimbenchError", ("n = 2.5", "did you mean 2?")),
    ('m.random_configuration(0, "3")', "SimbenchError", ("n = '3'", "did you mean 3?")),
    ("m.random_configuration(0, True)", "SimbenchError", ("n = True", "integer >= 0")),
    ('simbench.Simulation(gui=False, seed="a")', "SimbenchError", ("seed = 'a'", "integer seed >= 0")),
]


def test_random_configuration_refuses_what_it_does_not_document(tmp_path):
    """A string seed raised numpy's "SeedSequence expects int or sequence of ints"; now the 9
    bad seeds and sample counts are one line each, and the documented forms (a Generator, an
    int seed, None; n an integer >= 0 or None) give their shapes."""
    setup = 'm = simbench.RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")'
    results, _ = run_calls(tmp_path, setup, [c[0] for c in RANDOM])
    assert check_refused(results, RANDOM) == 9
    good = ["m.random_configuration(np.random.default_rng(1), np.int64(2)).shape == (2, 7) or 1/0",
            "m.random_configuration(7).shape == (7,) or 1/0", "m.random_configuration(None, 0).shape == (0, 7) or 1/0"]
    results, _ = run_calls(tmp_path, setup, good)
    assert [r[1] for r in results] == [None, None, None]


CLOSED = [
    ("det.compute_distances(q)", "SimbenchError",
     ("the simulation was closed (sim.close()); distances need an open Simulation",)),
    ("det.in_collision(q)", "SimbenchError", ("the simulation was closed (sim.close())",)),
    ("det.closest_points(q)", "SimbenchError", ("the simulation was closed (sim.close())",)),
    ("det.path_is_free(q, q)", "SimbenchError", ("the simulation was closed (sim.close())",)),
    ("r.q", "SimbenchError", ("the simulation of robot 'robot' was closed (sim.close())",
                              "needs an open Simulation")),
    ("r.set_joint_targets(q)", "SimbenchError", ("the simulation of robot 'robot' was closed",)),
    ("sim.set_pose('cube1', [0, 0, 1])", "SimbenchError",
     ("the simulation was closed (sim.close()); it cannot be used any more",)),
    ("sim.frame()", "SimbenchError", ("the simulation was closed",)),
    ("sim.detector([('robot', 'cube1')])", "SimbenchError", ("the simulation was closed",)),
    ("sim.record('after.gif')", "SimbenchError", ("the simulation was closed",)),
]


def test_a_closed_simulation_refuses_in_one_line_and_writes_nothing(tmp_path):
    """After ``sim.close()`` a detector raised PyBullet's "Not connected to physics server";
    now the detector, the robot handle and the simulation say it was closed (10 calls), and a
    recording started after closing leaves no file."""
    setup = SIM + "; det = sim.detector([(('robot', 'lbr_iiwa_link_7'), 'cube1')]); det.compute_distances(q); sim.close()"
    results, _ = run_calls(tmp_path, setup, [c[0] for c in CLOSED])
    assert check_refused(results, CLOSED) == 10
    assert list(tmp_path.iterdir()) == []


def test_a_detector_of_a_closed_simulation_does_not_answer_for_the_next_one(tmp_path):
    """PyBullet reuses a closed client's id: the old detector used to answer from the next
    simulation's servers (its cube where the first simulation had it). Now it refuses; so do a
    detector of a closed ServerPair whose ids a new pair took, and those of a garbage-collected
    simulation (3 cases)."""
    setup = """
        sim = simbench.Simulation(gui=False); q = sim.robot.q
        det = sim.detector([(('robot', 'lbr_iiwa_link_7'), 'cube1')]); det.compute_distances(q); sim.close()
        sim2 = simbench.Simulation(gui=False); sim2.set_pose('cube1', [5, 5, 0.5])
        pair = simbench.connect('simbench:kuka_cubes.toml', gui=False)
        pdet = pair.detector([(('robot', 'lbr_iiwa_link_7'), 'cube1')]); pair.close()
        gdet = simbench.Simulation(gui=False).detector([('robot', 'cube1')])
        grob = simbench.Simulation(gui=False).robot
        keep = simbench.connect('simbench:kuka_cubes.toml', gui=False)   # takes the closed pair's ids
    """
    cases = [("det.compute_distances(q)", "SimbenchError", ("the simulation was closed (sim.close())",)),
             ("pdet.compute_distances(q)", "SimbenchError",
              ("the collision server of this detector is gone: its ServerPair was closed (pair.close())",)),
             ("gdet.compute_distances(q)", "SimbenchError",
              ("the simulation was garbage-collected (keep a reference to it while you use it)",)),
             ("grob.q", "SimbenchError", ("the simulation of robot 'robot' was garbage-collected",))]
    results, _ = run_calls(tmp_path, setup, [c[0] for c in cases])
    assert check_refused(results, cases) == 4


HANDLE = [
    ("r.change_dynamics(None, linearDampin=0)", "UnknownNameError",
     ("unknown change_dynamics keyword 'linearDampin'", "did you mean 'linearDamping'")),
    ('r.change_dynamics(None, mass="x")', "ShapeError", ("change_dynamics(mass=...) = 'x'", "expected a number")),
    ("r.change_dynamics('lbr_iiwa_link_7', localInertiaDiagonal=[1, 1])", "ShapeError",
     ("localInertiaDiagonal=...) = [1, 1]", "expected three finite numbers")),
    ('r.set_joint_targets(None, qd=[1] * 7, kd="a")', "ShapeError",
     ("kd = 'a'", "expected one non-negative number or 7 of them")),
    ('r.set_joint_targets([0] * 7, qd={"lbr_iiwa_joint_1": 0})', "ShapeError",
     ("qd names joints ['lbr_iiwa_joint_1']", "expected the joints of q in the same order")),
    ("sim.add_step_callback(3)", "SimbenchError", ("step callback = 3", "expected a function taking the simulation")),
    ("sim.draw_closest_points(sim.detector([('robot', 'cube1')]).compute_distances(q))", "SimbenchError",
     ("draw_closest_points: got np.float64(", "expected the list that detector.closest_points(q) returns")),
    ('sim.frame_scene(yaw="a")', "ShapeError", ("camera yaw = 'a'", "expected a number of degrees")),
    ("sim.set_camera(distance=-1)", "ShapeError", ("camera distance = -1", "expected a positive number of metres")),
    ("sim.ray_test_batch(np.zeros((2, 3)), np.zeros((3, 3)))", "ShapeError",
     ("starts has shape (2, 3) and ends (3, 3)", "expected shapes that broadcast together")),
]


def test_robot_handle_and_camera_bad_inputs_are_one_line(tmp_path):
    """PyBullet's "'bogus' is an invalid keyword argument", numpy's "could not convert string to
    float" and "'int' object is not iterable" came through; now the 10 cases name the value,
    the expectation and (for a misspelt keyword) the close names. The camera is unchanged."""
    results, camera = run_calls(tmp_path, SIM + "; before = dict(sim.camera)", [c[0] for c in HANDLE],
                                "sim.camera == before")
    assert check_refused(results, HANDLE) == 10
    assert camera is True


def test_valid_handle_calls_still_work(tmp_path):
    """The forms the checks must let through (4 calls)."""
    ok = ["r.change_dynamics(None, linearDamping=0, angularDamping=0)",
          "r.change_dynamics('lbr_iiwa_link_7', localInertiaDiagonal=(0.1, 0.1, 0.1))",
          "r.change_dynamics('lbr_iiwa_link_7', activationState=1)",
          "sim.draw_closest_points(sim.detector([('robot', 'cube1')]).closest_points(q))"]
    results, _ = run_calls(tmp_path, SIM, ok)
    assert results == [[call, None, None] for call in ok]


def test_a_joint_target_or_reset_in_degrees_is_refused(tmp_path):
    """``set_joint_targets({"elbow": 90})`` was taken as 90 rad and the arm stopped at its limit
    without a word (a user walkthrough). A revolute target beyond a turn outside the joint's
    limits is refused with the degrees hint; a target just past a limit (3.0 rad on the KUKA's
    joint 1, limits +-2.967) is still a target, which the limit stops. Oracle: the URDF's
    limits (kuka_iiwa: joint 2 within +-2.094 rad)."""
    cases = [('r.set_joint_targets({"lbr_iiwa_joint_2": 90})', "SimbenchError",
              ("set_joint_targets: lbr_iiwa_joint_2 = 90 (degrees? 90 degrees is 1.571 rad): outside the "
               "joint's limits [-2.094, 2.094] rad; closest valid value 2.094",)),
             ("r.set_joint_targets([0, -45, 0, 0, 0, 0, 0])", "SimbenchError",
              ("lbr_iiwa_joint_2 = -45 (degrees? -45 degrees is -0.7854 rad)",)),
             # teleports too (a walkthrough's reset(45) folded the arm into a knot, far past its limits)
             ('r.reset({"lbr_iiwa_joint_2": 45})', "SimbenchError",
              ("reset: lbr_iiwa_joint_2 = 45 (degrees? 45 degrees is 0.7854 rad): outside the joint's limits "
               "[-2.094, 2.094] rad; closest valid value 2.094",)),
             ("r.set_model_state([0, 90, 0, -45, 0, 30, 0])", "SimbenchError",
              ("set_model_state: lbr_iiwa_joint_2 = 90 (degrees? 90 degrees is 1.571 rad)",))]
    results, _ = run_calls(tmp_path, SIM, [c[0] for c in cases])
    assert check_refused(results, cases) == 4
    fine, _ = run_calls(tmp_path, SIM, ['r.set_joint_targets({"lbr_iiwa_joint_1": 3.0})',
                                        'r.set_joint_targets({"lbr_iiwa_joint_2": 1.0})',
                                        'r.reset({"lbr_iiwa_joint_2": 2.2})'])     # just past the limit: a reset
    assert [r[1] for r in fine] == [None, None, None], fine
