"""Every ```python block of the README and of docs/ runs, and shows what it prints.

Each block runs on its own (a fresh namespace: a reader copies one block, not the page), the
blocks of one file in order in one temporary folder, headless (DISPLAY removed). Two
annotations are checked:

* ``expr  # -> OUTPUT``: ``repr(expr)`` must match OUTPUT, numbers compared to the digits shown
  (so ``0.3058`` matches ``0.305794``), other text with spaces ignored, ``...`` matching anything;
* a statement followed by a line ``# raises Error: message``: the statement raises ``Error``
  whose message starts with ``message`` (``...`` again matching anything).

A block that cannot run here is preceded by ``<!-- no-run: reason -->``; keep those rare.
"""
import ast
import logging
import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("**/*.md"))
FILES = [ROOT / "README.md", *DOCS]
BLOCK = re.compile(r"(?P<pre>(?:<!--[^\n]*-->\s*\n)?)```python\n(?P<code>.*?)```", re.S)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, no-run reason or None) of every python block of ``path``."""
    text = path.read_text()
    out = []
    for m in BLOCK.finditer(text):
        skip = re.search(r"<!--\s*no-run:\s*(.*?)\s*-->", m.group("pre"))
        out.append((text[:m.start("code")].count("\n") + 1, m.group("code"), skip.group(1) if skip else None))
    return out


def _close(shown: str, actual: str) -> bool:
    """``actual`` equals ``shown`` to the digits ``shown`` has."""
    mantissa, _, exponent = shown.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    tol = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    return math.isclose(float(shown), float(actual), rel_tol=1e-9, abs_tol=tol * 1.0001)


def matches(shown: str, actual: str) -> bool:
    """Does ``actual`` read as ``shown``: numbers equal to the digits shown, other text equal
    (spaces ignored), ``...`` matching anything?"""
    pattern, wanted = "", []
    for k, part in enumerate(re.sub(r"\s+", "", shown).split("...")):
        pattern += ".*?" if k else ""
        pos = 0
        for m in NUMBER.finditer(part):
            pattern += re.escape(part[pos:m.start()]) + f"({NUMBER.pattern})"
            wanted.append(m.group())
            pos = m.end()
        pattern += re.escape(part[pos:])
    m = re.fullmatch(pattern, re.sub(r"\s+", "", actual), flags=re.S)
    return m is not None and all(map(_close, wanted, m.groups()))


def _annotations(code: str) -> tuple[dict[int, str], dict[int, tuple[str, str]]]:
    outputs, raises = {}, {}
    lines = code.splitlines()
    for i, line in enumerate(lines, start=1):
        m = re.search(r"#\s*->\s*(.*)$", line)
        if m:
            outputs[i] = m.group(1).strip()
        m = re.match(r"\s*#\s*raises\s+(\w+):\s*(.*)$", line)
        if m:
            raises[i - 1] = (m.group(1), m.group(2).strip())
    return outputs, raises


class _Annotate(ast.NodeTransformer):
    """``expr  # -> OUT`` becomes ``__shows__(line, expr)``; a statement followed by
    ``# raises E: msg`` runs inside ``with __raises__(line):`` (at any depth, e.g. in a with)."""

    def __init__(self, outputs: dict[int, str], raises: dict[int, tuple[str, str]]):
        self.outputs, self.raises = outputs, raises

    def visit(self, node: ast.AST) -> ast.AST:
        node = super().visit(node)
        if isinstance(node, ast.Expr) and node.end_lineno in self.outputs:
            call = ast.Call(ast.Name("__shows__", ast.Load()), [ast.Constant(node.end_lineno), node.value], [])
            node = ast.copy_location(ast.Expr(call), node)
        if isinstance(node, ast.stmt) and node.end_lineno in self.raises:
            ctx = ast.withitem(ast.Call(ast.Name("__raises__", ast.Load()), [ast.Constant(node.end_lineno)], []))
            node = ast.copy_location(ast.With([ctx], [node]), node)
        return node


def run_block(code: str, namespace: dict, where: str) -> int:
    """Run one block; return how many shown outputs and errors it compared."""
    outputs, raises = _annotations(code)
    compared = []

    def shows(line: int, value: object) -> None:
        assert matches(outputs[line], repr(value)), f"{where}+{line}: shows {outputs[line]}, got {value!r}"
        compared.append(line)

    class Raises:
        def __init__(self, line: int):
            self.line = line

        def __enter__(self) -> None:
            return None

        def __exit__(self, kind, error, tb) -> bool:
            name, message = raises[self.line]
            assert error is not None, f"{where}+{self.line}: expected {name}, nothing raised"
            assert kind.__name__ == name and matches(message + "...", str(error)), \
                f"{where}+{self.line}: expected {name}: {message}, got {error!r}"
            compared.append(self.line)
            return True

    tree = ast.fix_missing_locations(_Annotate(outputs, raises).visit(ast.parse(code)))
    namespace.update(__shows__=shows, __raises__=Raises)
    exec(compile(tree, where, "exec"), namespace)
    assert sorted(compared) == sorted([*outputs, *raises]), f"{where}: annotations not reached"
    return len(compared)


@pytest.fixture
def logging_restored():
    """The blocks may configure logging (docs/cli.md does): put it back afterwards."""
    root, ours = logging.getLogger(), logging.getLogger("simbench")
    saved = (root.level, root.handlers[:], ours.level, ours.handlers[:])
    yield
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    ours.setLevel(saved[2])
    ours.handlers[:] = saved[3]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_python_blocks_run_and_show_their_output(path, tmp_path, monkeypatch, logging_restored):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    ran = compared = 0
    for line, code, skip in blocks(path):
        if skip:
            continue   # each block in a namespace of its own: a reader copies one block, not the page
        compared += run_block(code, {"__name__": "__readme__"}, f"{path.name}:{line}")
        ran += 1
    if path.name == "README.md":
        assert ran >= 3 and compared >= 8


def test_no_run_blocks_are_rare():
    skipped = [(p.name, line, why) for p in FILES for line, _, why in blocks(p) if why]
    total = sum(len(blocks(p)) for p in FILES)
    assert len(skipped) <= max(2, total // 10), skipped


@pytest.mark.parametrize("shown, actual, ok", [
    ("array([ 0.3058, -0.1469,  1.    ,  1.    ])", "array([ 0.305794  , -0.14693767,  1.        ,  1.        ])", True),
    ("array([0.3058, -0.1470])", "array([ 0.305794  , -0.14693767])", False),
    ("(10000, 7)", "(10000, 7)", True),
    ("(10000, 7)", "(10000, 6)", False),
    ("ClosestPoints(..., distance=-0.1469, point_a=array([0.592, 0.647, 0.359]), ...)",
     "ClosestPoints(a=X(body='robot'), distance=-0.14693767, point_a=array([0.59208724, 0.64693767, 0.35891893]), normal=array([0., -1., 0.]))", True),
    ("ClosestPoints(..., distance=-0.1469, ...)", "ClosestPoints(a=1, distance=-0.2469, b=2)", False),
    ("1.5e-3", "0.00151", True),
])
def test_output_matching_is_tolerant_to_float_formatting_only(shown, actual, ok):
    assert matches(shown, actual) is ok


def test_the_readme_check_example_runs_on_the_bundled_files(tmp_path):
    """The README's ``$ simbench check ...`` block runs as printed, from another folder, on files
    that ship with simbench (a user could not run it when two of its targets were local files):
    each target gets the verdict and the cause the README shows."""
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text()
    block = re.search(r"```\n\$ (simbench check .*?)\n(PASS.*?)\n```", text, re.S)
    command = block.group(1).replace("\\\n", " ").split()
    shown = [line.split() for line in block.group(2).splitlines() if line.split()[0] in ("PASS", "EXPLAINED")]
    assert len(shown) == 5
    proc = subprocess.run([sys.executable, "-m", "simbench", *command[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = {line.split()[1]: line.split() for line in proc.stdout.splitlines()
           if line.split() and line.split()[0] in ("PASS", "EXPLAINED", "FAIL", "ERROR", "SKIPPED")}
    def cause(tokens: list[str]) -> list[str]:   # what follows the M error's "(... rel)"
        return tokens[max(i for i, t in enumerate(tokens) if t.endswith("rel)")) + 1:]

    for line in shown:
        verdict, target = line[0], line[1]
        assert got[target][0] == verdict, (target, got[target])
        assert cause(got[target]) == cause(line), (target, got[target], line)
    assert sum(bool(cause(line)) for line in shown) == 4
