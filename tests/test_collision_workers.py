"""Lifetime, threads and frozen workers of the collision detector.

Oracle: the same queries run one at a time in a single thread (itself checked against direct
PyBullet calls in test_collision.py), and the operating system's view of the processes.
"""
import gc
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.collision import CollisionDetector, NamedCollisionObject, robot_vs_world
from simbench.bullet.scene import ASSETS_DIR, Scene

SCENE = ASSETS_DIR / "scenes" / "kuka_cubes.toml"
LINK7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_dead(pids, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


@pytest.fixture()
def loaded():
    client = p.connect(p.DIRECT)
    yield Scene.from_toml(SCENE).load(client)
    p.disconnect(physicsClientId=client)


def test_dropped_detector_releases_its_worker_processes(loaded):
    det = CollisionDetector(loaded, robot_vs_world(loaded), workers=2)
    det.start_workers()
    pids = [h.proc.pid for h in det._pool.helpers]
    assert pids and all(alive(pid) for pid in pids)
    del det  # no close()
    gc.collect()
    assert wait_dead(pids) == []


EXIT_SCRIPT = """
import numpy as np, simbench
from simbench.bullet.collision import robot_vs_world
pair = simbench.connect(gui=False)
det = pair.detector(robot_vs_world(pair), workers=3)
det.start_workers()
det.compute_distances(np.zeros((500, 7)))
print(" ".join(str(h.proc.pid) for h in det._pool.helpers), flush=True)
# no close(), no del: the interpreter exits with the detector and its pool alive
"""


def test_worker_processes_end_with_the_interpreter():
    proc = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pids = [int(x) for x in proc.stdout.split()]
    assert len(pids) == 2
    assert wait_dead(pids) == []


def test_two_threads_share_a_detector_without_a_wrong_row():
    with simbench.connect(gui=False) as pair:
        det = pair.detector(robot_vs_world(pair))
        other = pair.detector([(LINK7, "cube1"), (LINK7, "cube2")])  # a second detector, same server
        rng = np.random.default_rng(0)
        Q = {k: rng.uniform(-2, 2, (8000, 7)) for k in ("single", "batch")}
        ref_single = np.array([det.compute_distances(q) for q in Q["single"]])
        ref_batch = det.compute_distances(Q["batch"])
        ref_other = other.compute_distances(Q["single"][:2000])
        got = {}

        def singles():
            got["single"] = np.array([det.compute_distances(q) for q in Q["single"]])

        def batches():
            got["batch"] = np.concatenate([det.compute_distances(Q["batch"][s:s + 50]) for s in range(0, 8000, 50)])
            got["other"] = np.array([other.compute_distances(q) for q in Q["single"][:2000]])
            got["collision"] = np.array([det.in_collision(q) for q in Q["batch"][:2000]])

        threads = [threading.Thread(target=singles), threading.Thread(target=batches)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wrong = {"single": int((got["single"] != ref_single).any(axis=1).sum()),
                 "batch": int((got["batch"] != ref_batch).any(axis=1).sum()),
                 "other": int((got["other"] != ref_other).any(axis=1).sum()),
                 "collision": int((got["collision"] != (ref_batch[:2000] < 0).any(axis=1)).sum())}
        assert got["single"].shape == (8000, len(det.pairs)) and got["batch"].shape == (8000, len(det.pairs))
        assert wrong == {"single": 0, "batch": 0, "other": 0, "collision": 0}


def test_frozen_worker_is_reported_by_name_and_replaced(loaded, caplog):
    det = CollisionDetector(loaded, robot_vs_world(loaded), workers=2, worker_timeout=1.0)
    Q = np.random.default_rng(2).uniform(-2, 2, (3000, 7))
    expected = det.compute_distances(Q, workers=1)
    det.start_workers()
    frozen = det._pool.helpers[0]
    name, pid = frozen.name, frozen.proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        with caplog.at_level(logging.WARNING, logger="simbench"):
            t0 = time.monotonic()
            got = det.compute_distances(Q, workers=2)
            took = time.monotonic() - t0
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGCONT)
    assert np.array_equal(got, expected)
    assert took < 60  # never a hang: about the timeout plus the work
    assert name in caplog.text and re.search(r"did not answer within [0-9.]+ s", caplog.text)
    assert det._pool.replaced == [name] and wait_dead([pid]) == []
    new = det._pool.helpers[0]
    assert new.proc.pid != pid and new.proc.is_alive()
    assert np.array_equal(det.compute_distances(Q, workers=2), expected)  # the replacement works
    assert new.done > 0
    det.close()


def test_workers_forked_after_a_batched_inverse_dynamics_answer_like_one_process(tmp_path):
    """Forking after threads: a script runs a batched inverse_dynamics first (the dynamics'
    thread pool is then alive in the process), then asks two collision workers. They are
    forked, answer, and give bit-identical distances to the in-process query (the oracle)."""
    script = tmp_path / "script.py"
    script.write_text(
        "import os, numpy as np, simbench\n"
        "from simbench.dynamics import inverse_dynamics\n"
        "from simbench.bullet.collision import NamedCollisionObject as O\n"
        "from simbench.bullet.collision_workers import start_method\n"
        "m = simbench.RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
        "q = np.zeros((20000, 7))\n"
        "inverse_dynamics(m, q, q, q)  # a batch on the dynamics' threads\n"
        "with simbench.Simulation(gui=False) as sim:\n"
        "    det = sim.detector([(O('robot', 'lbr_iiwa_link_7'), O(n)) for n in ('ground', 'cube1', 'cube2')],\n"
        "                       workers=2)\n"
        "    Q = np.random.default_rng(0).uniform(-1.5, 1.5, (4000, 7))\n"
        "    two, one = det.compute_distances(Q, workers=2), det.compute_distances(Q, workers=1)\n"
        "    print(len(os.listdir('/proc/self/task')), start_method(), np.array_equal(two, one),\n"
        "          sum(h.done for h in det._pool.helpers))\n"
        "    det.close()\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "OpenMP" not in proc.stderr, proc.stderr
    threads, method, same, chunks = proc.stdout.split()
    assert int(threads) > 1 and method == "fork"  # forked from a process with threads
    assert same == "True" and int(chunks) > 0


def test_workers_are_spawned_once_jax_is_loaded_and_answer_like_one_process(tmp_path):
    """jax runs its own runtime threads (and warns on os.fork): a script that used the jax
    derivatives first gets spawned helpers, no fork warning, and the same distances as the
    in-process query (the oracle)."""
    pytest.importorskip("jax")
    script = tmp_path / "script.py"
    script.write_text(
        "import numpy as np, simbench\n"
        "from simbench.dynamics import inverse_dynamics_derivatives\n"
        "from simbench.bullet.collision import NamedCollisionObject as O\n"
        "from simbench.bullet.collision_workers import start_method\n"
        "if __name__ == '__main__':  # spawned helpers re-import this file\n"
        "    m = simbench.RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
        "    inverse_dynamics_derivatives(m, np.zeros(7), np.zeros(7), np.zeros(7))\n"
        "    with simbench.Simulation(gui=False) as sim:\n"
        "        det = sim.detector([(O('robot', 'lbr_iiwa_link_7'), O('cube1'))], workers=2)\n"
        "        Q = np.random.default_rng(0).uniform(-1.5, 1.5, (20000, 7))\n"
        "        det.compute_distances(Q, workers=2); det._pool.wait_ready(60)  # a spawned helper's start\n"
        "        two, one = det.compute_distances(Q, workers=2), det.compute_distances(Q, workers=1)\n"
        "        print(start_method(), np.array_equal(two, one), sum(h.done for h in det._pool.helpers))\n"
        "        det.close()\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "fork" not in proc.stderr, proc.stderr
    method, same, chunks = proc.stdout.split()
    assert method == "spawn" and same == "True" and int(chunks) > 0


def _children() -> set[int]:
    """Live child processes of this one, read from /proc (the oracle)."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().split(")")[-1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                out.add(int(entry))
    return out


def test_no_more_processes_than_rows_or_than_the_machine_takes(loaded):
    """workers=10**6 on a 4-row batch started hundreds of processes (~145 MB each) and never
    returned; now a count beyond 4 per CPU is one line, and a batch uses at most one process per
    row. Answers against direct getClosestPoints on the same client."""
    cpus = os.cpu_count() or 1
    with pytest.raises(simbench.SimbenchError) as exc:
        CollisionDetector(loaded, robot_vs_world(loaded), workers=10 ** 6)
    assert str(exc.value) == (f"workers = 1,000,000; expected at most {4 * cpus} (4 per CPU of this machine's {cpus}; "
                              f"each worker loads the scene), e.g. workers={cpus}")
    det = CollisionDetector(loaded, [(NamedCollisionObject("robot"), NamedCollisionObject("cube1"))])
    with pytest.raises(simbench.SimbenchError, match=r"^workers = 1,000,000; expected at most"):
        det.compute_distances(np.zeros((4, 7)), workers=10 ** 6)
    before = _children()
    q = np.array([[0.0] * 7, [0.3] * 7])
    got = det.compute_distances(q, 5.0, workers=4 * cpus)
    helpers = {h.proc.pid for h in det._pool.helpers}
    assert len(helpers) == 1 and helpers <= _children() - before   # two rows: this process and one helper
    robot, cube = loaded.bodies["robot"], loaded.bodies["cube1"]
    for row, d in zip(q, got):
        for j, v in zip(loaded.body("robot").movable_indices, row):
            p.resetJointState(robot, j, float(v), physicsClientId=loaded.client)
        truth = min(pt[8] for pt in p.getClosestPoints(robot, cube, 5.0, physicsClientId=loaded.client))
        assert abs(d[0] - truth) < 1e-9
    det.close()


def test_a_helper_as_slow_as_this_process_is_not_replaced(loaded, caplog):
    """At a load of 24-80 a walkthrough's helpers were replaced one after another (each chunk
    took longer than the timeout, as every chunk did) and two processes took 25 times as long as
    one. The timeout now stretches to 20 times the slowest chunk this process computed itself:
    with a 1 ms timeout, far below a chunk's time, a healthy helper keeps its work (it was
    replaced at every chunk before), and the answers equal one process's."""
    det = CollisionDetector(loaded, robot_vs_world(loaded), workers=2, worker_timeout=0.001)
    Q = np.random.default_rng(5).uniform(-2, 2, (3000, 7))
    expected = det.compute_distances(Q, workers=1)
    det.start_workers()
    with caplog.at_level(logging.WARNING, logger="simbench"):
        got = det.compute_distances(Q, workers=2)
    assert np.array_equal(got, expected)
    assert det._pool.replaced == [] and "did not answer" not in caplog.text, det._pool.replaced
    assert det._pool.helpers[0].done > 0
    det.close()
