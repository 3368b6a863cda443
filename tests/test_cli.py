"""The simbench command: output content and exit codes (2 and one line on user errors)."""
import subprocess
import sys

import pytest

from simbench.cli import main


def run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "simbench.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_info_prints_tree_dof_mass_limits_and_issues(capsys):
    assert main(["info", "pybullet_data:TwoJointRobot_wo_fixedJoints.urdf"]) == 0
    out = capsys.readouterr().out
    assert "dof: 2" in out and "total mass:" in out
    assert "joint_1 (revolute [-3.14, 3.14]" in out or "joint_1 (revolute" in out
    assert "inertia_triangle_inequality: link 'link_1'" in out


def test_info_kuka_tree_and_mass(capsys):
    assert main(["info", "pybullet_data:kuka_iiwa/model.urdf"]) == 0
    out = capsys.readouterr().out
    # total mass of the file: 0 + 4 + 4 + 3 + 2.7 + 1.7 + 1.8 + 0.3 kg
    assert "dof: 7, total mass: 17.5 kg" in out
    assert "-- lbr_iiwa_joint_7 (revolute [-3.054, 3.054] axis [0. 0. 1.]) --> lbr_iiwa_link_7" in out


@pytest.mark.parametrize("args, message", [
    (["info", "no/such/robot.urdf"], "simbench info: error: URDF file not found: 'no/such/robot.urdf'"),
    (["info", "pybullet_data:kuka.urdf"], "simbench info: error: URDF file not found: 'pybullet_data:kuka.urdf'"),
    # misspelled options, choices and commands get the closest valid one (no abbreviations)
    (["sweep", "dynamics", "x.urdf", "--sample", "100", "--out", "o"],
     "simbench sweep: error: unrecognized arguments: --sample 100; did you mean --samples?"),
    (["sweep", "dynamics", "x.urdf", "--n", "100"], "simbench sweep: error: unrecognized arguments: --n 100 (see"),
    (["demo", "--render", "contiuous"], "simbench demo: error: argument --render: invalid choice: 'contiuous' "
                                        "(choose from 'continuous', 'sync'); did you mean 'continuous'?"),
    (["chek", "x.urdf"], "simbench: error: argument COMMAND: invalid choice: 'chek'"),
    (["--verbos"], "simbench: error: unrecognized arguments: --verbos; did you mean --verbose?"),
    (["--verbos", "info", "x.urdf"], "simbench: error: unrecognized arguments: --verbos; did you mean --verbose?"),
])
def test_user_errors_exit_2_with_one_line_and_no_traceback(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    assert proc.stderr.strip() == message or proc.stderr.strip().startswith(message), proc.stderr
    if args[0] == "chek":
        assert "did you mean 'check'?" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "pybullet build time" not in proc.stdout + proc.stderr


def test_malformed_urdf_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r">\n<link name="a">\n</robot>\n')
    proc = run("info", str(bad))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{bad}: malformed XML" in proc.stderr and "line 3" in proc.stderr


def test_demo_headless_prints_distances_and_writes_a_png(tmp_path):
    proc = run("demo", "--direct", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "main server DIRECT (headless), collision server DIRECT" in lines[0]
    header = next(i for i, l in enumerate(lines) if l.split()[:5] == ["waypoint", "ground", "cube1", "cube2", "cube3"])
    rows = [l.split() for l in lines[header + 1:] if l.split() and l.split()[0].isdigit()]
    assert len(rows) == 6
    # waypoint 0 is the upright arm: link 7 is ~1.25 m above the ground and equally far from the cubes
    d0 = [float(x) for x in rows[0][1:5]]
    assert 1.1 < d0[0] < 1.4 and abs(d0[1] - d0[2]) < 1e-3 and abs(d0[1] - d0[3]) < 1e-3
    png = tmp_path / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_sigint_stops_a_command_started_with_sigint_ignored(tmp_path):
    """A script's `simbench sweep ... &` starts with SIGINT ignored (POSIX, inherited through exec);
    `kill -INT` stops it all the same, as `run`, `demo` and `view` stop: exit status 130, a line
    saying how many chunks the folder holds, the chunks so far kept and no worker left."""
    import signal
    import time

    out = tmp_path / "sw"
    proc = subprocess.Popen(
        [sys.executable, "-m", "simbench", "sweep", "dynamics", "pybullet_data:kuka_iiwa/model.urdf",
         "--samples", "20000000", "--chunk-size", "20000", "--workers", "1", "--out", str(out), "--quiet"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 240
    while not list(out.glob("chunk-*.parquet")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert list(out.glob("chunk-*.parquet")), "no chunk written"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert lines[-1] == "simbench sweep: interrupted", err
    kept = len(list(out.glob("chunk-*.parquet")))     # the files the folder holds: what resuming skips
    assert f"holds {kept:,} chunk{'' if kept == 1 else 's'} of 1,000; the same command resumes" in lines[-2], err
    assert (out / "_manifest.json").exists()
    left = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
    assert left == [], left


@pytest.mark.parametrize("after", [0.5, 0.8])
def test_ctrl_c_while_the_command_starts_is_one_line_and_status_130(tmp_path, after):
    """SIGINT sent to the installed ``simbench`` script while it starts (its modules loading:
    the whole first second before, when every command's module was imported to build the
    parser) ends as later: one line 'simbench check: interrupted', exit status 130, no
    traceback (before: a KeyboardInterrupt traceback and status 1)."""
    import os
    import signal
    import time
    from pathlib import Path

    script = Path(sys.executable).with_name("simbench")
    proc = subprocess.Popen([str(script), "check", "simbench:planar_2r.urdf", "--samples", "5000", "-q"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("simbench check: interrupted"), err[-2000:]


def test_version_and_help_load_no_command_module():
    """``simbench --version`` / ``--help`` / a misspelt command import none of the commands'
    modules (numba, PyBullet, the checker: 1.3 s of the 1.4 s before), and a command imports
    only its own: `info` neither numba nor the checker."""
    code = ("import sys; from simbench.cli import main\n"
            "for argv in (['--version'], ['--help'], ['chek']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in ('numba', 'pybullet', 'simbench.check.checker', 'simbench.sim',"
            " 'numpy') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr
    assert main(["--quiet", "info", "simbench:planar_2r.urdf"]) == 0   # the whole path still works


def test_verbose_and_quiet_after_the_command(tmp_path):
    """``simbench run x.py -q`` was refused ('unrecognized arguments: -q') while ``sweep ... -q``
    worked: -v / -q are taken before or after any command (a command's own -q, as check's and
    sweep's, keeps its meaning). Oracle: the exit status and the debug lines that -v adds."""
    (tmp_path / "s.py").write_text("def main(sim):\n    sim.step(3)\n")
    assert run("run", str(tmp_path / "s.py"), "--direct", "-q").returncode == 0
    quiet = run("info", "simbench:planar_2r.urdf", "-q")
    assert quiet.returncode == 0 and "dof: 2" in quiet.stdout, quiet.stderr
    loud, plain = run("info", "simbench:planar_2r.urdf", "-v"), run("info", "simbench:planar_2r.urdf")
    debug = [line for line in loud.stderr.splitlines() if line.startswith("simbench info: debug:")]
    assert loud.returncode == 0 and debug and "debug:" not in plain.stderr, loud.stderr


def test_options_may_come_before_the_targets(tmp_path):
    """``simbench sweep collision --samples 20 scene.toml`` was refused ('unrecognized arguments:
    scene.toml'): argparse gives a TARGET... list only the words before the first option. Words
    after options are targets too. Oracle: the same job with the targets first (identical
    Parquet), and check's report naming both robots."""
    import pyarrow.parquet as pq
    late = run("sweep", "collision", "--samples", "20", "--seed", "1", "--out", str(tmp_path / "late"),
               "simbench:kuka_cubes.toml")
    first = run("sweep", "collision", "simbench:kuka_cubes.toml", "--samples", "20", "--seed", "1",
                "--out", str(tmp_path / "first"))
    assert late.returncode == 0 and first.returncode == 0, late.stderr + first.stderr
    a, b = (pq.read_table(tmp_path / name / "chunk-000000.parquet") for name in ("late", "first"))
    assert a.num_rows == 20 and a.column_names == b.column_names and a.equals(b)
    check = run("check", "simbench:planar_2r.urdf", "--samples", "3", "--no-pinocchio",
                "simbench:anthropomorphic_3link.urdf", "--json", str(tmp_path / "c.json"))
    assert check.returncode == 0, check.stderr
    import json
    names = [r["target"] for r in json.loads((tmp_path / "c.json").read_text())["robots"]]
    assert len(names) == 2 and "planar_2r" in names[0] and "anthropomorphic_3link" in names[1]
    # a misspelt option after the target is named alone, not with the target before it
    bad = run("sweep", "collision", "--samples", "20", "simbench:kuka_cubes.toml", "--out", "o", "--sampels", "3")
    assert bad.returncode == 2 and bad.stderr.startswith(
        "simbench sweep: error: unrecognized arguments: --sampels 3; did you mean --samples?"), bad.stderr
