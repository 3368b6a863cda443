"""Faulty user dynamics through ``simbench check``: each gets a verdict (ERROR or FAIL) with its
reason in the printed line, the JSON and the Markdown; exit status 1; no traceback; no process
left behind. Driven through the CLI (a subprocess started from the user's folder) and the API.

Oracle: each function's fault is known by construction (the joint it poisons, the exception it
raises, how long it sleeps), so the expected verdict and reason are written down independently.
The table is data: adding a case is one line.

Overhead of the worker process (measured once, iiwa, 50 samples = 450 calls of a function
calling ``simbench.dynamics.inverse_dynamics``, medians of 7 in one run on the shared 2-core
machine): direct 2.4 ms, thread 2.8 ms, worker process 2.7 ms per robot; starting the worker and
importing the user's module 0.83 s once per run (and again after a timeout).
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import simbench.check as cc
from simbench.errors import SimbenchError

KUKA = "pybullet_data:kuka_iiwa/model.urdf"
ARM = "simbench:urdf/defects/arm.urdf"

MODULE = '''
import os, time
import numpy as np
import simbench.dynamics as d
from simbench.model import RobotModel

kuka = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")

def right(q, qd, qdd):
    return d.inverse_dynamics(kuka, q, qd, qdd)

def nan(q, qd, qdd):
    t = right(q, qd, qdd); t[1] = np.nan; return t

def inf(q, qd, qdd):
    t = right(q, qd, qdd); t[2] = -np.inf; return t

def raises(q, qd, qdd):
    return {}["no such key"]

def strings(q, qd, qdd):
    return ["1.0"] * 7

def short(q, qd, qdd):
    return np.zeros(6)

def none(q, qd, qdd):
    return None

def mapping(q, qd, qdd):
    return {"tau": right(q, qd, qdd)}

def sleeps(q, qd, qdd):
    with open("worker.pid", "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(0.2)

def exits(q, qd, qdd):
    os._exit(3)

def noargs():
    return right([0.0] * 7, [0.0] * 7, [0.0] * 7)

def elbow(q, qd, qdd):
    t = right(q, qd, qdd); t[3] += 0.5; return t
'''
RAISE_LINE = textwrap.dedent(MODULE).splitlines().index('    return {}["no such key"]') + 1
NOARGS_LINE = textwrap.dedent(MODULE).splitlines().index('def noargs():') + 1
SYNTAX_ERROR = "def tau(q, qd, qdd)\n    return q\n"
IMPORT_ERROR = "import no_such_dependency_xyz\n\ndef tau(q, qd, qdd):\n    return q\n"

# (case, --dynamics, verdict, words the reason must contain, extra CLI arguments)
CASES = [
    ("nan", "faulty_dyn:nan", "FAIL", ["returned nan", "'lbr_iiwa_joint_2'", "sample 0", "finite inputs"], []),
    ("inf", "faulty_dyn:inf", "FAIL", ["returned -inf", "'lbr_iiwa_joint_3'"], []),
    ("raises", "faulty_dyn:raises", "ERROR", ["raised KeyError", "'no such key'", f"faulty_dyn.py:{RAISE_LINE} in raises"], []),
    ("strings", "faulty_dyn:strings", "ERROR", ["returned list", "not real numbers", "expected 7 torques"], []),
    ("wrong shape", "faulty_dyn:short", "ERROR", ["returned shape (6,)", "expected 7 torques"], []),
    ("None", "faulty_dyn:none", "ERROR", ["returned None", "expected 7 torques"], []),
    ("wrong type", "faulty_dyn:mapping", "ERROR", ["returned dict", "expected 7 torques"], []),
    ("sleeps forever", "faulty_dyn:sleeps", "ERROR", ["did not return within 2 s", "worker was stopped"],
     ["--timeout", "2"]),
    ("process exits", "faulty_dyn:exits", "ERROR", ["died", "exit status 3"], []),
]


@pytest.fixture
def user_dir(tmp_path):
    (tmp_path / "faulty_dyn.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "syntax_bad.py").write_text(SYNTAX_ERROR)
    (tmp_path / "import_bad.py").write_text(IMPORT_ERROR)
    return tmp_path


def simbench(*args, cwd, timeout=300):
    """The ``simbench`` CLI as a user runs it, from their own folder."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-m", "simbench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.parametrize("case, spec, verdict, words, extra", CASES, ids=[c[0] for c in CASES])
def test_faulty_user_function_through_the_cli(user_dir, case, spec, verdict, words, extra):
    proc = simbench("check", KUKA, "--dynamics", spec, "--samples", "3", "--no-pinocchio",
                    "--json", "r.json", "--markdown", "r.md", *extra, cwd=user_dir)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stderr == ""
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3, lines  # the robot's line, the state it failed on, and the summary
    assert lines[0].startswith(f"{verdict:<9s} {KUKA}") and all(w in lines[0] for w in words), lines[0]
    assert lines[1].startswith(f"  {verdict} {KUKA}: state of sample 0: q=["), lines[1]
    assert lines[2].startswith(f"1 robot: 0 PASS, 0 EXPLAINED, {int(verdict == 'FAIL')} FAIL, "
                               f"{int(verdict == 'ERROR')} ERROR, 0 SKIPPED")
    data = json.loads((user_dir / "r.json").read_text())
    robot = data["robots"][0]
    assert robot["verdict"] == verdict and all(w in robot["reason"] for w in words)
    assert data["summary"][verdict] == 1 and data["summary"]["exit_code"] == 1
    row = [ln for ln in (user_dir / "r.md").read_text().splitlines() if ln.startswith(f"| `{KUKA}`")]
    assert len(row) == 1 and f"**{verdict}**" in row[0] and words[0] in row[0]
    if case == "sleeps forever":  # the worker that never returned was stopped, not left behind
        assert not pid_alive(int((user_dir / "worker.pid").read_text()))


@pytest.mark.parametrize("spec, words", [
    ("syntax_bad:tau", ["cannot import 'syntax_bad'", "SyntaxError", "line 1", "expected a module that imports"]),
    ("import_bad:tau", ["cannot import 'import_bad'", "No module named 'no_such_dependency_xyz'"])])
def test_a_module_that_does_not_import_is_a_usage_error(user_dir, spec, words):
    """As a missing function is: one line, exit 2, before any robot (docs: checked before the work)."""
    proc = simbench("check", KUKA, "--dynamics", spec, "--samples", "3", "--no-pinocchio", cwd=user_dir)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"simbench check: error: --dynamics {spec}: ") \
        and all(w in lines[0] for w in words), lines


def test_faulty_functions_through_the_api(user_dir, monkeypatch):
    """The same table as callables (run in a thread) and by name (run in a worker process)."""
    monkeypatch.chdir(user_dir)
    monkeypatch.syspath_prepend(str(user_dir))
    import faulty_dyn

    compared = 0
    for case, spec, verdict, words, extra in CASES:
        module, func = spec.split(":")
        timeout = 2.0 if extra else 60.0
        r = cc.compare(KUKA, samples=3, dynamics=spec, pinocchio=False, timeout=timeout)
        assert (r.verdict, all(w in r.reason for w in words)) == (verdict, True), (case, r.line())
        if module == "faulty_dyn" and case not in ("process exits", "sleeps forever"):
            r = cc.compare(KUKA, samples=3, dynamics=getattr(faulty_dyn, func), pinocchio=False)
            label_free = [w for w in words if "faulty_dyn" not in w]
            assert r.verdict == verdict and all(w in r.reason for w in label_free), (case, r.line())
            compared += 1
        compared += 1
    assert compared == len(CASES) + 7


def test_a_callable_that_never_returns_gets_a_verdict_from_its_thread():
    def stuck(q, qd, qdd):
        time.sleep(30)

    t0 = time.perf_counter()
    r = cc.compare(ARM, samples=2, dynamics=stuck, pinocchio=False, timeout=0.5)
    assert r.verdict == "ERROR" and "did not return within 0.5 s" in r.reason
    assert time.perf_counter() - t0 < 20  # it did not wait for the sleeping thread


def test_the_right_function_passes_in_the_worker_and_in_a_thread(user_dir, monkeypatch):
    monkeypatch.chdir(user_dir)
    monkeypatch.syspath_prepend(str(user_dir))
    import faulty_dyn

    for dyn in ("faulty_dyn:right", faulty_dyn.right):
        r = cc.compare(KUKA, samples=4, dynamics=dyn, pinocchio=False)
        assert r.verdict == "PASS" and r.errors.tau_abs < 1e-10, r.line()


def test_usage_errors_of_dynamics_exit_2_with_one_line(user_dir, monkeypatch):
    for spec, words in [("faulty_dyn:rigth", ["has no function 'rigth'", "did you mean 'right'"]),
                        ("faulty_dyn:zzz", ["has no function 'zzz'", "; it defines 'elbow', 'exits', "]),  # no close name
                        ("no_such_module_xyz:tau", ["no module named 'no_such_module_xyz'", "current folder"]),
                        ("faulty_dyn", ["expected module:function"])]:
        proc = simbench("check", KUKA, "--dynamics", spec, "--samples", "2", cwd=user_dir)
        err = proc.stderr.strip()
        assert proc.returncode == 2 and proc.stdout == "", (spec, proc.stdout, err)
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert err.startswith("simbench check: error: --dynamics") and all(w in err for w in words), err
    monkeypatch.chdir(user_dir)
    with pytest.raises(SimbenchError, match="has no function 'rigth'"):
        cc.compare(KUKA, samples=2, dynamics="faulty_dyn:rigth")


def test_ctrl_c_keeps_the_results_so_far_and_stops_the_worker(user_dir):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-m", "simbench.cli", "check", ARM, KUKA, "--dynamics",
                             "faulty_dyn:sleeps", "--samples", "2", "--json", "r.json", "--no-pinocchio"],
                            cwd=user_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = user_dir / "worker.pid"
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err and "interrupted" in err
    data = json.loads((user_dir / "r.json").read_text())
    assert data["summary"]["interrupted"] is True and data["summary"]["exit_code"] == 130 == proc.returncode
    time.sleep(0.5)
    assert not pid_alive(int(pid_file.read_text()))


def test_user_function_outputs_are_judged_directly():
    """The judge itself, on values whose fault is known."""
    from simbench.check.usercode import UserCodeFault, as_torques

    names = ["a", "b", "c"]
    np.testing.assert_array_equal(as_torques([1.0, 2, 3], names, "f", ""), [1.0, 2.0, 3.0])
    with pytest.raises(UserCodeFault, match=r"returned int64 \[1, 2, 3\] at sample 0, integers"):
        as_torques([1, 2, 3], names, "f", "at sample 0")   # rounded torques: said, not a FAIL later
    cases = [(None, "ERROR", "returned None"), ("abc", "ERROR", "not real numbers"),
             ([1, 2], "ERROR", "shape (2,)"), (np.ones((3, 3)), "ERROR", "shape (3, 3)"),
             ([1j, 0, 0], "ERROR", "not real numbers"), ([[1, 2], [3]], "ERROR", "returned list"),
             ([0, np.nan, 0], "FAIL", "nan for joint 'b'"), ([np.inf, 0, 0], "FAIL", "inf for joint 'a'"),
             (np.ones((3, 1)), "ERROR", "shape (3, 1)"), ([True, False, True], "ERROR", "booleans, not numbers")]
    for value, verdict, words in cases:
        with pytest.raises(UserCodeFault) as info:
            as_torques(value, names, "f", "at sample 0")
        assert info.value.verdict == verdict and words in info.value.message, (value, info.value.message)
    assert len(cases) == 10


def test_a_module_that_hangs_at_import_gets_a_verdict_for_every_robot(user_dir):
    from simbench.check.dynamics import FunctionDynamics
    from simbench.check.isolation import ProcessRunner

    (user_dir / "import_hang.py").write_text(
        f"import os, time\nopen({str(user_dir / 'import.pid')!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
        "def tau(q, qd, qdd):\n    return q\n")
    runner = ProcessRunner("import_hang:tau", timeout=2, search_path=[str(user_dir)], import_timeout=2)
    dyn = FunctionDynamics(runner, "import_hang:tau")
    try:
        report = cc.check([ARM, KUKA], samples=2, dynamics=dyn, pinocchio=False)
    finally:
        dyn.close()
    assert [r.verdict for r in report.results] == ["ERROR", "ERROR"]
    assert all("import_hang:tau did not finish importing within 2 s" in r.reason for r in report.results)
    assert report.exit_code() == 1
    time.sleep(0.2)
    assert not pid_alive(int((user_dir / "import.pid").read_text()))


def test_a_function_with_the_wrong_signature_is_shown_where_it_is_defined(user_dir, monkeypatch):
    """A usage error (exit 2) naming the user's file and line and the signature expected, not
    simbench's own code; through the API a SimbenchError with the same words."""
    proc = simbench("check", KUKA, "--dynamics", "faulty_dyn:noargs", "--samples", "2", cwd=user_dir)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and proc.stdout == "" and len(err.splitlines()) == 1, (proc.stdout, err)
    words = [f"noargs() (defined at faulty_dyn.py:{NOARGS_LINE})", "cannot be called as f(q, qd, qdd)",
             "expected def noargs(q, qd, qdd)"]
    assert err.startswith("simbench check: error: --dynamics 'faulty_dyn:noargs': ") and all(w in err for w in words), err
    assert "usercode.py" not in err and "Traceback" not in err
    monkeypatch.chdir(user_dir)
    monkeypatch.syspath_prepend(str(user_dir))
    import faulty_dyn

    for dyn in ("faulty_dyn:noargs", faulty_dyn.noargs):
        with pytest.raises(SimbenchError) as info:
            cc.compare(KUKA, samples=2, dynamics=dyn, pinocchio=False)
        assert all(w in str(info.value) for w in words) and "usercode.py" not in str(info.value), str(info.value)


def test_a_fail_line_labels_the_users_values_as_theirs(user_dir):
    """'yours (module:function)' for the user's torque in the printed worst joint, never 'ours';
    the numbers are PyBullet's (called directly) and PyBullet's plus the known 0.5 N m."""
    import pybullet as p

    from simbench.paths import resolve_urdf

    proc = simbench("check", KUKA, "--dynamics", "faulty_dyn:elbow", "--samples", "3", "--json", "r.json",
                    "--no-pinocchio", cwd=user_dir)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    detail = [ln for ln in proc.stdout.splitlines() if ln.startswith(f"  FAIL {KUKA}: worst joint")]
    assert len(detail) == 1 and "'lbr_iiwa_joint_4': yours (faulty_dyn:elbow) " in detail[0], proc.stdout
    assert " ours " not in detail[0]
    w = json.loads((user_dir / "r.json").read_text())["robots"][0]["worst"]
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -9.81, physicsClientId=c)
        b = p.loadURDF(str(resolve_urdf(KUKA)), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE,
                       physicsClientId=c)
        tb = p.calculateInverseDynamics(b, w["q"], w["qd"], w["qdd"], physicsClientId=c)[3]
    finally:
        p.disconnect(physicsClientId=c)
    assert w["tau_pybullet"] == pytest.approx(tb, abs=1e-9) and w["tau_tested"] == pytest.approx(tb + 0.5, abs=1e-9)
    assert f"yours (faulty_dyn:elbow) {w['tau_tested']!r}, PyBullet {w['tau_pybullet']!r}" in detail[0]


FLOATING = '''
import numpy as np
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioDynamics

a1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
pin = PinocchioDynamics.from_urdf(a1)       # Pinocchio's own parser and free flyer

def right(q, qd, qdd):                      # q (7 + 12,), qd, qdd and tau (6 + 12,)
    return pin.inverse_dynamics(q, qd, qdd)

def no_coriolis(q, qd, qdd):
    return pin.inverse_dynamics(q, 0 * qd, qdd)

def joints_only(q, qd, qdd):
    return pin.inverse_dynamics(q, qd, qdd)[6:]
'''


def test_floating_base_user_functions_get_their_verdicts(tmp_path, monkeypatch):
    """``check --floating --dynamics``: the user's function takes q (7 + 12,) and qd, qdd
    (6 + 12,) and returns the base wrench and the joint torques (6 + 12,). Every function got
    ERROR before (its 18 values were taken for 12 torques; the mass matrix's unit vectors had
    19 entries). Oracle: the user's functions are Pinocchio's free-flyer rnea (its own URDF
    parser), right and without its Coriolis terms, against PyBullet; 3 functions x 2 routes."""
    (tmp_path / "floating_dyn.py").write_text(FLOATING)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import floating_dyn

    a1 = "pybullet_data:a1/a1.urdf"
    compared = 0
    for name, verdict, words in [
            ("right", "PASS", []),
            ("no_coriolis", "FAIL", ["worst entry 'base_vx'", "looks like: Coriolis and centrifugal terms left out"]),
            ("joints_only", "ERROR", ["returned shape (12,) at sample 0; expected 18 generalised forces "
                                      "(shape (18,)) in model.v_labels order (base_vx, base_vy, ...)"])]:
        for dyn in (f"floating_dyn:{name}", getattr(floating_dyn, name)):
            r = cc.compare(a1, samples=3, dynamics=dyn, pinocchio=False, floating=True)
            assert r.verdict == verdict and all(w in r.reason for w in words), (name, r.line())
            if verdict == "PASS":
                assert r.errors.tau_abs < 1e-6 and r.errors.M_abs < 1e-8, r.line()
            compared += 1
    assert compared == 6
