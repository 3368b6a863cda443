"""Packaging: star imports, one version, the extras table, python -m simbench, logging flags.
(The wheel itself is built, installed into a fresh venv and run by scripts/check_wheel.sh.)"""
import importlib
import importlib.metadata
import pkgutil
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import simbench
from simbench import extras, log, progress

ROOT = Path(__file__).resolve().parents[1]


def _modules():
    return sorted(m.name for m in pkgutil.walk_packages(simbench.__path__, "simbench.")
                  if not m.name.endswith("__main__"))


def test_star_import_of_every_package_gives_every_name_in_all():
    packages = ["simbench"] + [m.name for m in pkgutil.walk_packages(simbench.__path__, "simbench.") if m.ispkg]
    code = "\n".join(f"ns = {{}}; exec('from {p} import *', ns); import {p} as m; "
                     f"assert set(m.__all__) <= set(ns), ('{p}', set(m.__all__) - set(ns)); print(len(m.__all__))"
                     for p in packages)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    counts = [int(x) for x in out.stdout.split()]
    assert len(counts) == len(packages) >= 3 and min(counts) > 0


def test_every_module_all_names_exist():
    checked = 0
    for name in _modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            assert hasattr(module, attr), (name, attr)
            checked += 1
    assert checked > 150


def test_one_version_everywhere(tmp_path):
    """The installed metadata, the package attribute and `python -m simbench --version` (run from
    another folder) all read simbench/_version.py."""
    text = (ROOT / "simbench" / "_version.py").read_text()
    version = re.search(r'__version__ = "([^"]+)"', text).group(1)
    assert simbench.__version__ == version == importlib.metadata.version("simbench")
    proc = subprocess.run([sys.executable, "-m", "simbench", "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout.strip()) == (0, f"simbench {version}")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "simbench._version.__version__"}


def test_requires_python_matches_the_classifiers_and_py_typed_ships():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    minimum = re.fullmatch(r">=3\.(\d+)", project["requires-python"]).group(1)
    versions = sorted(int(c.rsplit(".", 1)[1]) for c in project["classifiers"]
                      if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions[0] == int(minimum) == 11  # tomllib
    assert "py.typed" in meta["tool"]["setuptools"]["package-data"]["simbench"]
    assert (ROOT / "simbench" / "py.typed").is_file()


def test_extras_table_matches_pyproject_and_readme():
    """simbench.extras.EXTRAS is the table: every extra of pyproject.toml is in it (and the
    planned ones are not yet in pyproject), and the README's table lists them all."""
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert {e.name for e in extras.EXTRAS if not e.planned} == declared
    readme = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|(.*)\|$", readme, flags=re.M)
    table = {name: rest for name, rest in rows if name in {e.name for e in extras.EXTRAS}}
    assert set(table) == {e.name for e in extras.EXTRAS}
    for e in extras.EXTRAS:
        assert ("planned" in table[e.name]) == e.planned, e.name


def _cli(*args, code=None, cwd=None):
    launch = code or "from simbench.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", launch, *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_verbose_shows_debug_lines_and_quiet_hides_information():
    target = "simbench:ros/simbench_demo_description/urdf/arm.urdf"
    verbose = _cli("-v", "info", target)
    assert verbose.returncode == 0
    debug = [l for l in verbose.stderr.splitlines() if l.startswith("simbench info: debug: simbench.urdf_source: ")]
    assert len(debug) == 1 and "3 links, 6 mesh and texture files (0 not found)" in debug[0]
    quiet = _cli("-q", "info", target)
    assert quiet.returncode == 0 and quiet.stderr == "" and "robot 'demo_arm'" in quiet.stdout


BOOM = textwrap.dedent("""\
    import sys
    import simbench.model
    def boom(*a, **k):
        raise RuntimeError("boom\\nsecond line")
    simbench.model.RobotModel.from_urdf = boom
    from simbench.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_unexpected_error_is_one_line_with_a_hint_and_verbose_shows_the_traceback():
    proc = _cli("info", "simbench:planar_2r.urdf", code=BOOM)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["simbench info: error: unexpected RuntimeError: boom second line; "
                                        "rerun with -v for the traceback"]
    proc = _cli("-v", "info", "simbench:planar_2r.urdf", code=BOOM)
    assert proc.returncode == 1 and "Traceback (most recent call last)" in proc.stderr
    assert proc.stderr.splitlines()[-1] == "simbench info: error: unexpected RuntimeError: boom second line"


def test_usage_errors_are_one_line():
    proc = _cli("demo", "--steps", "many")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["simbench demo: error: argument --steps: invalid int value: 'many' "
                                        "(see simbench demo --help)"]
    proc = _cli("nosuch")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("simbench: error: argument COMMAND: invalid choice: 'nosuch'")


@pytest.mark.parametrize("verbosity, tty, drawn", [
    (log.QUIET, True, False), (log.NORMAL, True, True), (log.VERBOSE, True, True), (log.NORMAL, False, False)])
def test_progress_bars_follow_the_logging_switch(monkeypatch, verbosity, tty, drawn):
    monkeypatch.delenv("SIMBENCH_PROGRESS", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    with log.configured("bench", verbosity):
        assert progress.enabled() is drawn
        with progress.progress(range(3), desc="x") as bar:
            assert bar.disable is (not drawn)  # (tqdm sets it when the bar closes)
            assert list(bar) == [0, 1, 2]


def test_every_module_the_readme_calls_through_simbench_is_an_attribute():
    """``simbench.testing.assert_matches_pybullet(...)`` after ``import simbench`` (as the README
    writes it) raised AttributeError (walkthrough V). Oracle: the README's own text."""
    readme = (ROOT / "README.md").read_text()
    used = set(re.findall(r"\bsimbench\.([a-z_]+)\.[A-Za-z_]+\(", readme))
    code = "import simbench\n" + "".join(f"simbench.{name}\n" for name in sorted(used))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert {"testing", "sweep", "dynamics", "check"} <= used, used


#: bundled names the docs show on purpose as missing (an error message's example)
SHOWN_MISSING = {"pybullet_data:kuka.urdf"}


def test_every_bundled_file_the_docs_name_exists():
    """The README's two-arm sweep named ``two_arms.toml``, which no folder held (walkthrough V):
    every ``simbench:NAME`` and ``pybullet_data:NAME`` in the README and docs resolves. Oracle:
    the installed files."""
    from simbench.paths import resolve_path

    texts = [(ROOT / "README.md").read_text()] + [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    names = {n for t in texts for n in re.findall(
        r"\b((?:simbench|pybullet_data):[A-Za-z0-9_./-]+\.(?:urdf|toml|xacro))\b", t)} - SHOWN_MISSING
    for name in sorted(names):
        resolve_path(name)   # raises, naming the file, when it is not there
    assert len(names) >= 15 and "simbench:two_arms.toml" in names
