"""The README's layout table matches the tree, and files stay small.

Oracle: the files of the package on disk (``simbench/**/*.py``).
"""
import re
import subprocess
import sys
from pathlib import Path

from _dyn_helpers import require

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "simbench"
#: files allowed over MAX_LINES, each with the reason (one concept that needs the room)
LONG = {
    "dynamics/symbolic.py": "derive(): one derivation (poses, Jacobians, M, Christoffel symbols, g) "
                            "and its record; the numeric halves are in symbolic_codegen.py",
}
MAX_LINES = 500


def layout_rows() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## Layout\n(.*?)(?=^## )", text, flags=re.M | re.S).group(1)
    return [tuple(cell.strip() for cell in line.strip().strip("|").split("|", 1))
            for line in section.splitlines() if line.startswith("| `")]


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "assets" not in p.parts and p.name != "__init__.py")


def test_every_module_is_in_the_layout_table_and_every_listed_path_exists():
    rows = layout_rows()
    names = {name for path, what in rows for name in re.findall(r"`([^`]+)`", path + " " + what)}
    missing = [str(m.relative_to(ROOT)) for m in modules()
               if not {m.stem, m.name, str(m.relative_to(ROOT)), str(m.relative_to(PACKAGE))} & names
               and not (m.name.startswith("collision") and m.parent.name == "bullet" and m.stem in names)]
    assert missing == [], f"modules not in the README's layout table: {missing}"
    checked = 0
    for path, what in rows:
        first, *rest = re.findall(r"`([^`]+)`", path)
        base = ROOT / first if first.startswith(("simbench", "docs", "scripts", "tests")) else ROOT
        folder = (ROOT / first.rstrip("/")).parent  # the other paths of a row are its siblings
        for item in [first, *rest]:
            if "*" in item:
                assert list(ROOT.glob(item)), item
            else:
                target = ROOT / item if item.startswith(("simbench/", "docs/", "scripts/", "tests/")) else folder / item
                assert target.exists(), f"the layout table lists {item!r}, which is not at {target}"
            checked += 1
        if first.endswith("/") and (base / "__init__.py").exists() and not rest:  # a package's row
            for name in re.findall(r"`([a-z_][a-z0-9_]*)`", what):
                assert (base / f"{name}.py").exists(), f"{first}: the layout table lists {name!r}, not in the tree"
                checked += 1
    assert checked > 60


def test_files_stay_under_500_lines_or_say_why():
    long = {str(m.relative_to(PACKAGE)): sum(1 for _ in m.open()) for m in modules()}
    over = {name: n for name, n in long.items() if n > MAX_LINES}
    assert set(over) <= set(LONG), f"over {MAX_LINES} lines without a reason: {set(over) - set(LONG)}"
    assert all(n < 600 for n in over.values()), over  # "about 500"
    assert set(LONG) <= set(over), f"a reason kept for a file no longer long: {set(LONG) - set(over)}"


def test_no_unused_imports_or_undefined_names():
    """ruff's pyflakes rules (F: unused imports and variables, undefined names, shadowed imports,
    f-strings without fields) find nothing in the package, the tests and the scripts. ruff is a
    declared test dependency: missing, this fails in CI and is skipped elsewhere."""
    require("ruff")
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F",
                           "--output-format", "concise", "simbench", "tests", "scripts"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_lazy_names_are_visible_to_type_checkers():
    """`simbench.RobotModel` and the other lazily loaded names are also imported under
    TYPE_CHECKING, so that mypy and editors see their types (through `__getattr__` they were
    `Any`: a walkthrough's `model.nv` and `coriolis_matrix(...)` typed as Any)."""
    import ast

    import simbench

    tree = ast.parse(open(simbench.__file__).read())
    guarded = set()
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            guarded |= {a.asname for stmt in node.body for a in stmt.names if a.asname == a.name}
    assert guarded == set(simbench._LAZY), set(simbench._LAZY) ^ guarded
    assert len(guarded) == 21   # testing: simbench.testing.assert_matches_pybullet, as the README writes it
