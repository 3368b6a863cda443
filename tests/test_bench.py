"""simbench bench: the harness, the row schema, the report writer and every suite.

No timing is asserted (speed lives in ``simbench bench``'s table): the tests check the
structure, and that every ratio is a row's median over the median of its named reference,
timed in the same run and the same group (oracle: the rows' own medians, recomputed; and, for
the harness, hand-made clocks whose medians are known).
"""
from __future__ import annotations

import json
import shutil
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from simbench.bench import report
from simbench.bench.harness import Contender, Timing, interleaved
from simbench.bench.schema import KEYS, SCHEMA, Report, Row, rows_from

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def check_ratios(rows: list[Row]) -> int:
    """Every row with a ratio names a reference timed in the same suite, robot and quantity,
    and its ratio is its median over the reference's; the reference's own ratio is 1. Returns
    how many ratios were compared."""
    by_key = {(r.suite, r.robot, r.quantity, r.contender): r for r in rows}
    assert len(by_key) == len(rows), "contender names repeat within a group"
    compared = 0
    for r in rows:
        assert (r.ratio is None) == (r.reference is None), r
        if r.reference is None:
            continue
        ref = by_key[(r.suite, r.robot, r.quantity, r.reference)]
        assert r.ratio == pytest.approx(r.us_per_config / ref.us_per_config, rel=1e-12), r
        assert ref.ratio == pytest.approx(1.0)
        compared += 1
    return compared


# ---------------------------------------------------------------------- harness
def test_harness_medians_and_interleaving_against_known_clocks():
    """Contenders that report their own seconds: the medians are those of the reported values
    per configuration, every round runs every contender, and the order reverses each round."""
    calls: list[str] = []

    def reporter(name: str, seconds: list[float]) -> Contender:
        it = iter(seconds)
        return Contender(name, lambda: (calls.append(name), next(it))[1], configs=10, clock="reported",
                         warmup=False)

    a = [0.001, 0.003, 0.002, 0.010, 0.002]
    b = [0.004, 0.004, 0.005, 0.004, 0.100]
    t = interleaved([reporter("a", a), reporter("b", b)], rounds=5)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a", "a", "b"]
    assert t["a"].us == pytest.approx(statistics.median(a) / 10 * 1e6)
    assert t["b"].us == pytest.approx(statistics.median(b) / 10 * 1e6)
    assert t["a"].best_us == pytest.approx(100.0) and len(t["b"].samples) == 5 and t["a"].configs == 10


def test_harness_warms_up_once_and_calls_each_contender_calls_times_per_round():
    counts = {"x": 0}

    def f() -> None:
        counts["x"] += 1

    interleaved([Contender("x", f, calls=7)], rounds=3)
    assert counts["x"] == 1 + 3 * 7
    with pytest.raises(ValueError, match="repeat"):
        interleaved([Contender("x", f), Contender("x", f)], rounds=1)


def test_rows_from_takes_ratios_against_the_named_reference():
    timings = {"ours": Timing("ours", 2.0, 1.5, (2.0,), 100), "ref": Timing("ref", 8.0, 7.0, (8.0,), 100),
               "other": Timing("other", 4.0, 4.0, (4.0,), 1)}
    rows = rows_from("dynamics", "arm", "q", timings, "ref", {"ours": "a note"})
    assert [(r.contender, r.ratio, r.reference, r.n) for r in rows] == [
        ("ours", 0.25, "ref", 100), ("ref", 1.0, "ref", 100), ("other", 0.5, "ref", 1)]
    assert rows[0].notes == "a note" and check_ratios(rows) == 3
    assert all(r.ratio is None and r.reference is None for r in rows_from("s", "r", "q", timings, None))


def test_json_layout_round_trips_and_markdown_has_one_line_per_row(tmp_path):
    rows = rows_from("collision", "arm", "q", {"a": Timing("a", 3.0, 3.0, (3.0,), 5),
                                               "b": Timing("b", 1.5, 1.5, (1.5,), 5)}, "b")
    result = Report(rows, {"rounds": 1}, ["a note"])
    path = report.write_json(result, tmp_path / "out" / "bench.json")
    data = json.loads(path.read_text())
    assert list(data) == ["schema", "machine", "versions", "settings", "rows", "notes"]
    assert data["schema"] == SCHEMA and {"cpu", "cores", "usable_cores", "load_average_1min"} <= set(data["machine"])
    assert {"python", "numpy", "numba", "pybullet", "pin", "sympy", "jax", "ray"} <= set(data["versions"])
    assert all(tuple(r) == KEYS for r in data["rows"])
    assert report.read_json(path).rows == rows
    md = report.markdown(result).splitlines()
    assert sum(line.startswith("| arm | q (ratio to b) |") for line in md) == 1
    assert sum(line.startswith("|  |  | ") for line in md) == 1 and len(md) == 8  # machine, blank, title, blank, head, rule, 2 rows
    text = report.console(result)
    assert "== collision: arm" in text and "(ratio to b)" in text and "note: a note" in text


# ---------------------------------------------------------------------- suites
def test_dynamics_suite_fixed_and_floating_rows_with_same_run_ratios():
    """A tiny run on the mobile manipulator (with its sympy contenders) and the a1 with a
    floating base: every quantity, every input form, Pinocchio as each group's reference,
    PyBullet for the fixed base only."""
    from simbench.bench import dynamics

    notes: list[str] = []
    rows = dynamics.run(["mobile_manipulator", "a1"], first_use=False, notes=notes, n=64, single_calls=3,
                        batch_calls=1, rounds=1, lagrange_n=4, symbolic_max_dof=3, want_c=False)
    assert all(r.suite == "dynamics" and r.us_per_config > 0 for r in rows)
    for robot in ("mobile_manipulator", "a1_floating"):
        quantities = {r.quantity for r in rows if r.robot == robot}
        assert {f"{q}, {m}" for q in ("inverse dynamics", "mass matrix", "forward dynamics")
                for m in ("batched", "single call")} | {"inverse dynamics, input forms"} <= quantities
        forms = [r for r in rows if r.robot == robot and r.quantity == "inverse dynamics, input forms"]
        assert [r.contender for r in forms] == [dynamics.PLAIN, "list", "read-only arrays", "float32",
                                                "gravity as an equal tuple", "gravity as a list",
                                                "one-row batch"]
        assert all(r.reference == dynamics.PLAIN and "target ratio <= 1.3" in r.notes for r in forms[1:])
        extras = [r for r in rows if r.robot == robot and r.quantity == "inverse dynamics, wrenches and losses"]
        assert [r.contender for r in extras] == [dynamics.PLAIN, "an external wrench (f_ext)",
                                                 "damping and friction", "f_ext, damping and friction"]
        assert all(r.reference == dynamics.PLAIN and r.ratio > 0 and "target" not in (r.notes or "") for r in extras)
        batched = [r for r in rows if r.robot == robot and r.quantity == "inverse dynamics, batched"]
        assert {r.reference for r in batched} == {"pinocchio rnea loop"}
        assert "target ratio <=" in next(r.notes for r in batched if r.contender == "simbench inverse_dynamics")
    contenders = {r.contender for r in rows if r.robot == "mobile_manipulator"}
    assert {"pybullet calculateInverseDynamics loop", "simbench lagrange.inverse_dynamics", "sympy lambdify",
            "sympy derive (M, C, g)"} <= contenders
    assert not any("pybullet" in r.contender for r in rows if r.robot == "a1_floating")
    assert any("a1_floating: no PyBullet rows" in n for n in notes)
    assert check_ratios(rows) >= 40


def test_quick_runs_state_the_targets_without_judging_them():
    """``--quick``'s batches (n = 1000) and rounds are too small for the speed targets, which are
    for the full settings: its notes say "not judged" where a full run says met or MISSED (a
    user's smoke run printed ten MISSED lines)."""
    import argparse

    from simbench.bench import cli, dynamics
    from simbench.bench.schema import Row

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert cli.settings_of(parser.parse_args(["--quick"]))["dynamics"]["judge"] is False
    assert cli.settings_of(parser.parse_args([]))["dynamics"]["judge"] is True
    quantity = "inverse dynamics, batched"
    rows = [Row("dynamics", "r", quantity, dynamics.OURS["inverse dynamics"], 10, 1.0, "loop", ratio)
            for ratio in (0.05, 0.5)]
    full = [r.notes for r in dynamics._target_notes(quantity, False, rows)]
    quick = [r.notes for r in dynamics._target_notes(quantity, False, rows, judge=False)]
    assert full[0].endswith(": met") and full[1].endswith(": MISSED")
    assert all("target ratio <= 0.0667: not judged (a --quick run" in n for n in quick), quick


def test_unknown_robot_is_one_line_with_the_closest_name():
    from simbench.bench.dynamics import resolve_robots
    from simbench.errors import SimbenchError

    with pytest.raises(SimbenchError, match="did you mean 'humanoid'"):
        resolve_robots(["humanoidd"])
    assert resolve_robots(["panda", "a1"]) == {"franka_panda": ("pybullet_data:franka_panda/panda.urdf", False),
                                               "a1_floating": ("pybullet_data:a1/a1.urdf", True)}


def test_a_urdf_file_as_the_robot_is_benchmarked(tmp_path):
    """--robot FILE.urdf was refused at the suite ("--robot 'arm': expected one of ...") after the
    command had accepted it: the suite was handed the name again, not the file. Ratios are
    checked against their reference rows of the same run."""
    shutil.copy(ROOT / "simbench" / "assets" / "urdf" / "planar_2r.urdf", tmp_path / "arm.urdf")
    proc = _run(["-m", "simbench", "bench", "--suite", "dynamics", "--robot", "arm.urdf", "--quick", "--json", "b.json"],
                tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [Row(**r) for r in json.loads((tmp_path / "b.json").read_text())["rows"]]
    assert rows and {r.robot for r in rows} == {"arm"}
    assert check_ratios(rows) >= 5


def test_collision_suite_from_another_folder_by_python_m(tmp_path):
    """``python -m simbench.bench --suite collision --quick`` as a user runs it: the table,
    and a JSON report whose ratios are taken against references of the same run."""
    out, md = tmp_path / "reports" / "c.json", tmp_path / "c.md"
    r = _run(["-m", "simbench.bench", "--suite", "collision", "--quick", "--rounds", "1", "--json", str(out),
              "--markdown", str(md)], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "== collision: kuka_iiwa (kuka_cubes scene)" in r.stdout and "(ratio to raw PyBullet minimum)" in r.stdout
    result = report.read_json(out)
    assert result.settings["suites"] == ["collision"] and {r.suite for r in result.rows} == {"collision"}
    quantities = {r.quantity for r in result.rows}
    assert {"distances of 4 pairs, per configuration", "one world: one query per call in a tight loop",
            "path checking, per edge (n = edges)", "throughput on a batch of 4,000"} == quantities
    assert check_ratios(result.rows) == len(result.rows) == 13
    assert md.read_text() == report.markdown(result)


def test_sweep_suite_runs_each_engine_in_a_fresh_process():
    from simbench.bench import sweep

    rows = sweep.run(samples=400, chunk_size=200, rounds=1, ray=False)
    assert [r.contender for r in rows] == ["local engine, 1 worker", "local engine, 2 workers"]
    assert all("CPU" in r.notes and "peak RSS" in r.notes for r in rows) and check_ratios(rows) == 2


def test_autodiff_suite_rows_against_pinocchio(tmp_path):
    """In a fresh process (a process that loaded jax should not fork later tests' workers)."""
    code = ("import json\nfrom simbench.bench import autodiff\n"
            "rows = autodiff.run(['mobile_manipulator'], batch=8, rounds=1, calls=2, cold=False)\n"
            "print(json.dumps([r.as_dict() for r in rows]))\n")
    r = _run(["-c", code], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [Row(**d) for d in json.loads(r.stdout.strip().splitlines()[-1])]
    groups = {r.quantity for r in rows}
    assert len(groups) == 7 and "jax compile, first call (once)" in groups
    assert any(r.contender.startswith("the post's automatic method") for r in rows)
    assert {r.reference for r in rows if r.quantity == "inverse dynamics, single call"} == {"pinocchio rnea"}
    assert check_ratios(rows) == len(rows) - 3  # all but the three compile times


def test_missing_jax_skips_the_autodiff_rows_with_one_line_naming_the_extra(tmp_path):
    code = ("import logging, sys\nsys.modules['jax'] = None\n"
            "logging.basicConfig(level=logging.INFO, format='%(levelname)s %(message)s')\n"
            "from simbench.bench import autodiff\nnotes = []\n"
            "print(autodiff.run(['mobile_manipulator'], notes=notes), len(notes))\n")
    r = _run(["-c", code], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[] 1"
    lines = [line for line in r.stderr.splitlines() if "autodiff" in line]
    assert len(lines) == 1 and "'autodiff' extra" in lines[0] and "pip install 'simbench[autodiff]'" in lines[0]


def test_importing_the_suites_imports_no_timed_library():
    code = ("import sys, simbench.bench, simbench.bench.dynamics, simbench.bench.collision, "
            "simbench.bench.sweep, simbench.bench.autodiff, simbench.bench.cli, simbench.bench.report\n"
            "print(sorted(m for m in ('pybullet', 'pinocchio', 'jax', 'ray', 'sympy') if m in sys.modules))")
    r = _run(["-c", code], cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("args, bad", [(["--rounds", "0"], "--rounds 0"), (["--n", "-3"], "--n -3"),
                                       (["--suite", "physics"], "'physics'")])
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, bad):
    r = _run(["-m", "simbench.cli", "bench", "--quick", *args], cwd=tmp_path, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simbench bench: error:") and bad in lines[0]


def test_missing_pinocchio_skips_the_autodiff_rows_and_keeps_the_report(tmp_path):
    """jax installed without Pinocchio (the README's 'autodiff' extra alone): ``simbench bench``
    ran its suites, then ended with exit 2 and no report (a user walkthrough). Now the autodiff
    suite gives one line naming Pinocchio and no rows, and the run writes its report, exit 0."""
    code = ("import sys\nsys.modules['pinocchio'] = None\n"
            "from simbench.cli import main\n"
            "sys.exit(main(['bench', '--suite', 'autodiff', '--quick', '--json', 'b.json']))\n")
    r = _run(["-c", code], cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [line for line in r.stderr.splitlines() if "Pinocchio" in line]
    assert len(lines) == 1 and "autodiff: no rows: its references are Pinocchio's" in lines[0], r.stderr
    import json

    report = json.loads((tmp_path / "b.json").read_text())
    assert any("its references are Pinocchio's" in note for note in report["notes"]), report["notes"]
