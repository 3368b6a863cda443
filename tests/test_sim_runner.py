"""``simbench run``: durations, results, errors, Ctrl-C (in process and as a real SIGINT to a
``python -m simbench.cli run`` process), ``--gui`` without a display, and a real GUI under Xvfb."""
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from simbench.errors import SimbenchError
from simbench.runner import main as runner_main
from simbench.runner import run_script

ROOT = Path(__file__).resolve().parents[1]
HEADER = 'SCENE = "pybullet_data:kuka_iiwa/model.urdf"\n'


def write(tmp_path, body: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def test_duration_results_and_recording(tmp_path, capsys):
    script = write(tmp_path, """
        DURATION = 0.5
        def main(sim):
            sim.robot.set_joint_targets({"lbr_iiwa_joint_2": 0.5})
            while True:          # the runner's duration ends it
                sim.step()
        """)
    res = run_script(script, gui=False, record=tmp_path / "r.gif", fps=10, size=(64, 48), progress=False)
    assert res.reason == "duration" and res.exit_code == 0
    assert res.steps == 120 and res.t == pytest.approx(0.5)
    assert res.frames == 6 and Image.open(res.recording).n_frames == 6
    assert "reached its duration at t = 0.500 s" in capsys.readouterr().err

    script = write(tmp_path, """
        def main(sim):
            sim.advance(0.25)
            return {"t": sim.t, "dt": sim.dt, "out": str(sim.out_dir)}
        """, "ret.py")
    res = run_script(script, gui=False, dt=0.01, out_dir=tmp_path / "o", progress=False)
    assert res.reason == "finished" and res.value == {"t": pytest.approx(0.25), "dt": 0.01, "out": str(tmp_path / "o")}
    out = capsys.readouterr().out
    assert "results:" in out and "t: 0.25" in out


def test_script_error_closes_servers(tmp_path):
    script = write(tmp_path, """
        CLIENTS = []
        def main(sim):
            CLIENTS.extend([sim.client, sim.collision_client])
            sim.step(3)
            raise ValueError("boom in the script")
        """)
    stream = io.StringIO()
    res = run_script(script, gui=False, stream=stream, record=tmp_path / "e.gif", size=(32, 24))
    assert res.reason == "error" and res.exit_code == 1 and isinstance(res.error, ValueError)
    text = stream.getvalue()
    assert "Traceback" in text and "boom in the script" in text and "servers closed" in text
    assert Image.open(tmp_path / "e.gif").n_frames >= 1


def test_sigint_in_process_finishes_recording_and_closes(tmp_path):
    """Ctrl-C raises KeyboardInterrupt in the script at once (here right after 30 steps); a
    script that catches it and goes on stepping gets SimulationDone from its next step. Both:
    exit 130, recording finished, servers closed, handlers restored."""
    script = write(tmp_path, """
        import signal
        def main(sim):
            sim.step(30)
            signal.raise_signal(signal.SIGINT)
            raise AssertionError("not reached: the handler raises")
        """)
    before = signal.getsignal(signal.SIGINT)
    stream = io.StringIO()
    res = run_script(script, gui=False, record=tmp_path / "i.gif", fps=60, size=(64, 48), stream=stream)
    assert res.reason == "interrupted" and res.exit_code == 130 and res.error is None
    assert res.steps == 30 and res.t == pytest.approx(30 / 240)
    assert Image.open(tmp_path / "i.gif").n_frames == 1 + 7
    assert "SIGINT: stopping" in stream.getvalue()
    assert signal.getsignal(signal.SIGINT) is before  # handlers restored

    script = write(tmp_path, """
        import signal
        def main(sim):
            sim.step(10)
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass          # a stubborn script: the next step ends it
            for _ in range(10**9):
                sim.step()
        """, "stubborn.py")
    res = run_script(script, gui=False, stream=io.StringIO())
    assert res.reason == "interrupted" and res.steps == 10


def test_setup_errors_exit_2(tmp_path, capsys):
    assert runner_main([str(tmp_path / "nope.py")]) == 2
    assert "script not found" in capsys.readouterr().err
    script = tmp_path / "nomain.py"
    script.write_text("x = 1\n")
    with pytest.raises(SimbenchError, match=r"defines no main\(sim\)"):
        run_script(script)
    assert runner_main([str(script), "--direct"]) == 2
    script = write(tmp_path, "def main(sim):\n    pass\n", "ok.py")
    assert runner_main([str(script), "--direct", "--duration", "-1"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "simbench run: error: --duration -1.0: expected a positive number of seconds, "
        "e.g. --duration 1 (leave it out for the script's DURATION)")


def test_frames_counted_when_the_script_stops_the_recording(tmp_path):
    script = write(tmp_path, """
        def main(sim):
            sim.advance(0.2)
            sim.recordings[0].stop()
            sim.advance(0.2)
        """)
    res = run_script(script, gui=False, record=tmp_path / "r.gif", fps=10, size=(64, 48), progress=False)
    assert res.reason == "finished" and res.frames == Image.open(res.recording).n_frames == 3


def test_gui_without_display_falls_back(tmp_path, monkeypatch, caplog):
    monkeypatch.delenv("DISPLAY", raising=False)
    script = write(tmp_path, """
        def main(sim):
            sim.step(2)
            return {"gui": sim.gui}
        """)
    res = run_script(script, gui=True, progress=False)
    assert res.exit_code == 0 and res.value == {"gui": False} and not res.gui
    assert [r.getMessage() for r in caplog.records if r.name == "simbench.bullet.display"] == [
        "no display found (DISPLAY is not set); running headless (DIRECT) instead of the GUI"]


LONG = HEADER + textwrap.dedent("""
    import sys
    def main(sim):
        sim.robot.set_joint_targets({"lbr_iiwa_joint_1": 3.0, "lbr_iiwa_joint_2": 1.0})
        sim.step(48)
        print("READY", flush=True)
        while True:            # runs until Ctrl-C
            sim.step()
    """)


def _env():
    """The child's environment: this checkout importable, no DISPLAY (xvfb-run sets its own)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    env.pop("DISPLAY", None)
    return env


def test_sigint_to_simbench_run_process(tmp_path):
    """A real Ctrl-C to ``python -m simbench.cli run``: exit 130, servers closed, GIF readable."""
    script = tmp_path / "long.py"
    script.write_text(LONG)
    gif = tmp_path / "long.gif"
    proc = subprocess.Popen([sys.executable, "-m", "simbench.cli", "run", str(script), "--direct",
                             "--record", str(gif), "--fps", "30", "--size", "64x48"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted at t =" in err and "servers closed" in err
    im = Image.open(gif)
    assert im.n_frames > 1 and im.size == (64, 48)
    for k in range(im.n_frames):  # every frame decodes
        im.seek(k)
        im.convert("RGB")


def test_sigterm_in_process_is_terminated_143(tmp_path):
    script = write(tmp_path, """
        import signal
        def main(sim):
            sim.step(5)
            signal.raise_signal(signal.SIGTERM)
        """)
    res = run_script(script, gui=False, stream=io.StringIO())
    assert res.reason == "terminated" and res.exit_code == 143 and res.steps == 5


def test_progress_lines_and_real_time(tmp_path):
    from simbench.runner import _progress_printer
    from simbench.sim import Simulation

    stream = io.StringIO()
    with Simulation(gui=False, dt=0.01, duration=1.0, real_time=True) as sim:
        sim.add_step_callback(_progress_printer("x.py", stream, time.perf_counter(), every=0.1))
        t0 = time.perf_counter()
        sim.advance(0.8)
        wall = time.perf_counter() - t0
    assert wall >= 0.78  # real time: 0.8 s simulated take at least ~0.8 s
    lines = stream.getvalue().splitlines()
    # after 0.1 s, then gaps of 0.2 and 0.4 s (doubling): at 0.1, 0.3 and 0.7 s; every 0.1 s was 8 lines
    assert 2 <= len(lines) <= 4 and all(line.startswith("simbench run: x.py: t = ") for line in lines)
    assert "/ 1 s" in lines[-1] and "real time" in lines[-1]


# ---------------------------------------------------------------------- signals between steps
BETWEEN_STEPS = HEADER + textwrap.dedent("""
    import time
    import numpy as np
    def main(sim):
        sim.robot.set_joint_targets({"lbr_iiwa_joint_2": 1.0})
        sim.advance(0.5)
        print("READY", flush=True)
        if BUSY:
            x = np.zeros(1000)
            while True:        # computing, never stepping again
                x = np.sin(x) + 1.0
        time.sleep(600)        # waiting, never stepping again
    """)


def _signalled(tmp_path, sig, busy, record):
    script = tmp_path / "between.py"
    script.write_text(f"BUSY = {busy}\n" + BETWEEN_STEPS)
    proc = subprocess.Popen([sys.executable, "-m", "simbench.cli", "run", str(script), "--direct", "--quiet",
                             "--record", str(record), "--fps", "20", "--size", "64x48"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(0.3)
        t0 = time.perf_counter()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        waited = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err, waited


def _mp4_frames(path):
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    frames = [np.frombuffer(f, np.uint8).reshape(meta["size"][1], meta["size"][0], 3) for f in reader]
    return meta, frames


@pytest.mark.parametrize("busy", [False, True])
def test_sigterm_between_steps_stops_and_finishes_the_mp4(tmp_path, busy):
    mp4 = tmp_path / "t.mp4"
    code, err, waited = _signalled(tmp_path, signal.SIGTERM, busy, mp4)
    assert code == 143, err
    assert "SIGTERM: stopping" in err and "terminated (SIGTERM) at t = 0.500 s" in err and "servers closed" in err
    assert waited < 30
    meta, frames = _mp4_frames(mp4)
    assert meta["size"] == (64, 48) and len(frames) == 1 + 10  # t = 0 .. 0.5 s at 20 fps
    assert frames[-1].std() > 5


@pytest.mark.parametrize("busy", [False, True])
def test_sigint_between_steps_stops_and_finishes_the_gif(tmp_path, busy):
    gif = tmp_path / "i.gif"
    code, err, _ = _signalled(tmp_path, signal.SIGINT, busy, gif)
    assert code == 130, err
    assert "interrupted at t = 0.500 s" in err and "Traceback" not in err
    im = Image.open(gif)
    assert im.n_frames == 1 + 10
    assert gif.read_bytes().endswith(b"\x3b")


def test_script_error_finishes_the_recording_and_exits_1(tmp_path):
    script = write(tmp_path, """
        def main(sim):
            sim.advance(0.25)
            raise RuntimeError("boom at a quarter second")
        """)
    mp4 = tmp_path / "e.mp4"
    proc = subprocess.run([sys.executable, "-m", "simbench.cli", "run", str(script), "--direct", "--quiet",
                           "--record", str(mp4), "--fps", "20", "--size", "64x48"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "RuntimeError: boom at a quarter second" in proc.stderr and "failed at t = 0.250 s" in proc.stderr
    _, frames = _mp4_frames(mp4)
    assert len(frames) == 1 + 5


def test_script_failing_at_import_is_a_script_error_with_its_traceback(tmp_path):
    """An error while the script is imported (before main) is the script's, not simbench's: its
    own traceback (no runner or runpy frames), a line naming the script, exit status 1, and no
    process left behind (every descendant carries a marker in its environment)."""
    script = tmp_path / "importerr.py"
    script.write_text("import os\nimport nosuchmodule_xyz\n\ndef main(sim):\n    pass\n")
    marker = f"simbench-import-test-{os.getpid()}-{time.monotonic_ns()}"
    proc = subprocess.run([sys.executable, "-m", "simbench.cli", "run", str(script), "--direct"],
                          cwd=tmp_path, env=dict(_env(), SIMBENCH_TEST_MARKER=marker),
                          capture_output=True, text=True, timeout=120)
    err = proc.stderr
    assert proc.returncode == 1, err
    assert ("simbench run: importerr.py failed while loading (before main): "
            "ModuleNotFoundError: No module named 'nosuchmodule_xyz'") in err.splitlines(), err
    assert "Traceback (most recent call last):" in err
    assert f'File "{script}", line 2, in <module>' in err and "import nosuchmodule_xyz" in err, err
    assert "runpy" not in err and "runner.py" not in err and "unexpected" not in err, err
    left = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes():
                left.append(environ.parent.name)
        except OSError:
            pass
    assert left == [], left


# ---------------------------------------------------------------------- output paths, checked first
def test_unwritable_outputs_fail_at_once_in_one_line(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    marker = tmp_path / "ran"
    script = write(tmp_path, f"""
        def main(sim):
            open({str(marker)!r}, "w").write("the script ran")
        """)
    cases = {
        ("run", str(script), "--direct", "--record", str(a_file / "r.gif")): str(a_file),
        ("run", str(script), "--direct", "--record", str(tmp_path)): str(tmp_path),
        ("run", str(script), "--direct", "--record", str(tmp_path / "r.avi")): "r.avi",
        ("run", str(script), "--direct", "--screenshot", str(a_file / "s.png")): str(a_file),
        ("demo", "--direct", "--out", str(a_file)): str(a_file),
        ("view", "pybullet_data:kuka_iiwa/model.urdf", "--direct", "--out", str(a_file / "v.png")): str(a_file),
    }
    for args, named in cases.items():
        proc = subprocess.run([sys.executable, "-m", "simbench.cli", *args], cwd=tmp_path, env=_env(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, (args, lines)
        assert lines[0].startswith(f"simbench {args[0]}: error: ") and named in lines[0], (args, lines)
        assert proc.stdout == "" and not marker.exists(), args  # nothing ran
    assert len(cases) == 6


def test_xacro_scene_with_xacro_args_from_another_folder(tmp_path):
    """``simbench run --scene FILE.urdf.xacro --xacro-arg prefix:=left_``: the xacro file is a
    one-body scene; oracle: PyBullet's joint names of the loaded body."""
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""
        import pybullet as p
        def main(sim):
            rid = sim.bodies["robot"]
            return {"names": [p.getJointInfo(rid, j, physicsClientId=sim.client)[1].decode()
                              for j in range(p.getNumJoints(rid, physicsClientId=sim.client))],
                    "model": list(sim.model.joint_names)}
        """))
    proc = subprocess.run([sys.executable, "-m", "simbench", "run", str(script), "--direct", "--quiet", "--scene",
                           "simbench:ros/simbench_demo_description/urdf/arm.urdf.xacro",
                           "--xacro-arg", "prefix:=left_"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "names: ['left_joint1', 'left_joint2']" in proc.stdout
    assert "model: ['left_joint1', 'left_joint2']" in proc.stdout


def test_missing_matplotlib_logs_one_line_naming_the_extra(monkeypatch, caplog):
    from simbench.plotting import stacked_axes

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    caplog.set_level("WARNING", logger="simbench")
    assert stacked_axes() is None
    assert [r.getMessage() for r in caplog.records] == [
        "drawing the scenario's plots needs matplotlib, which is not installed; install the 'plot' extra: "
        "pip install 'simbench[plot]'; no plot"]


def test_a_missing_script_suggests_only_alike_names(tmp_path, monkeypatch):
    """From a checkout's root, ``simbench run scenario_computed_torque.py`` suggested the
    unrelated 'script.py' beside it and never scripts/ (a newcomer's walkthrough): scripts are
    matched by their names without '.py', in the folder and in its scripts/ folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "script.py").write_text("def main(sim):\n    pass\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "scenario_free_body.py").write_text("def main(sim):\n    pass\n")
    said = {}
    for name in ("scenario_computed_torque.py", "scenario_free_body.py", "scrpt.py"):
        with pytest.raises(SimbenchError) as err:
            run_script(name)
        said[name] = str(err.value)
    assert said == {"scenario_computed_torque.py": "script not found: 'scenario_computed_torque.py'",
                    "scenario_free_body.py": "script not found: 'scenario_free_body.py'; did you mean "
                                             "'scripts/scenario_free_body.py'?",
                    "scrpt.py": "script not found: 'scrpt.py'; did you mean 'script.py'?"}, said


def test_a_legged_urdf_given_as_the_scene_is_said_to_be_mounted(tmp_path):
    """`run --scene robot.urdf` mounts the robot (a one-body scene, fixed_base = true); for a
    robot whose root carries legs (a1: four hips, as its file says) that is said in one warning
    line, so that nobody wonders why the dog floats (a walkthrough's quadruped got nq 12 and no
    word); an arm (the iiwa) gets no line."""
    (tmp_path / "dog.py").write_text("def main(sim):\n    print('nq', sim.model.nq)\n")
    said = {}
    for urdf in ("pybullet_data:a1/a1.urdf", "pybullet_data:kuka_iiwa/model.urdf"):
        proc = subprocess.run([sys.executable, "-m", "simbench", "run", "dog.py", "--scene", urdf, "--direct"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        said[urdf] = [ln for ln in proc.stderr.splitlines() if "warning" in ln]
    assert said["pybullet_data:kuka_iiwa/model.urdf"] == []
    (line,) = said["pybullet_data:a1/a1.urdf"]
    assert line.startswith("simbench run: warning: pybullet_data:a1/a1.urdf: a URDF given as the scene is mounted "
                           "(fixed_base = true), but its root carries 4 limbs (FR_hip, FL_hip, RR_hip, RL_hip)")
    assert "give a scene TOML with this body and fixed_base = false" in line


def test_script_using_the_simulation_after_closing_it_is_its_own_error_under_gui(tmp_path):
    """Under ``--gui`` a script that used ``sim`` after its own ``sim.close()`` exited 2 as a
    usage error, with no traceback (the runner asked the closed simulation whether its window
    was still connected). It is the script's error, as headless: its traceback, exit 1. A
    ``--screenshot`` the closed simulation cannot take is said in one line, not left missing.
    Oracle: the exit status, the traceback's line of the script, the file system."""
    from conftest import require_xvfb
    (tmp_path / "close_.py").write_text("def main(sim):\n    sim.step(10)\n    sim.close()\n    print(sim.robot.q)\n")
    (tmp_path / "close2.py").write_text("def main(sim):\n    sim.step(10)\n    sim.close()\n")
    xvfb = [require_xvfb(), "-a", "-s", "-screen 0 640x480x24"]
    for mode in (["--gui"], ["--direct"]):
        proc = subprocess.run([*xvfb, sys.executable, "-m", "simbench.cli", "run", "close_.py", *mode],
                              capture_output=True, text=True, timeout=240, cwd=tmp_path, env=_env())
        assert proc.returncode == 1, (mode, proc.stderr)
        out = proc.stdout + proc.stderr
        assert 'close_.py", line 4, in main' in out and "the simulation was closed (sim.close())" in out, out
        assert "close_.py failed at t = 0.042 s (10 steps" in out, out
        shot = subprocess.run([*xvfb, sys.executable, "-m", "simbench.cli", "run", "close2.py", *mode,
                               "--screenshot", "c2.png"], capture_output=True, text=True, timeout=240,
                              cwd=tmp_path, env=_env())
        assert shot.returncode == 0 and not (tmp_path / "c2.png").exists(), shot.stderr
        assert ("simbench run: warning: --screenshot c2.png not written: the script closed the simulation "
                "(sim.close()) before it ended") in shot.stderr, shot.stderr
