"""The generated sections of docs/*.md are what ``scripts/gen_docs.py`` writes now.

Oracle: the script's generators run on the code as it is (the argument parser, the scene schema,
the issue kinds, the extras, the check's causes, the README's benchmark section). The sections
are committed Markdown, so GitHub and the checkout show them; this test keeps them current.
The CLI reference is argparse's help text, whose layout follows the Python version (3.13 changed
it): generate with a Python the project supports (3.11, 3.12).
"""
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
gen_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen_docs)

#: every generated section the docs are known to have, by page (a missing one is a lost marker)
EXPECTED = {"benchmarks.md": ["readme Benchmarks"], "check.md": ["check-causes"], "cli.md": ["cli"],
            "index.md": ["extras"], "loading.md": ["issue-kinds"], "scenes.md": ["scene-keys"]}


def sections(text: str) -> dict[str, str]:
    """'NAME [ARG]' -> the text between its start and end markers."""
    pattern = r"^<!-- generated: ([^>]*?) -->\n(.*?)^<!-- end generated: \1 -->$"
    return {m.group(1): m.group(2) for m in re.finditer(pattern, text, flags=re.M | re.S)}


def test_every_generated_section_is_current():
    stale = []
    for page in gen_docs.pages():
        text = page.read_text()
        new = gen_docs.render(text, str(page.relative_to(ROOT)))
        if new != text:
            old_s, new_s = sections(text), sections(new)
            names = [n for n in new_s if old_s.get(n) != new_s[n]] or ["(markers)"]
            stale.append(f"{page.relative_to(ROOT)}: {', '.join(names)}")
    assert stale == [], ("generated docs sections are stale: " + "; ".join(stale)
                         + f". Regenerate them: {gen_docs.COMMAND} (then commit the docs)")


def test_every_section_has_both_markers_and_is_where_it_was():
    found = {page.name: list(sections(page.read_text())) for page in gen_docs.pages()}
    assert found == EXPECTED
    for page in gen_docs.pages():
        text = page.read_text()
        starts = [m.group(0) for m in gen_docs.START.finditer(text)]
        assert len(starts) == len(sections(text)), f"{page.name}: a start marker without its end marker"


def test_the_generated_tables_render_as_markdown():
    """Every table row of a section has its header's number of cells (an unescaped '|' in a
    cell, even in a code span, splits it on GitHub), and no URDF tag is left as raw HTML."""
    for page in gen_docs.pages():
        for name, body in sections(page.read_text()).items():
            if name.startswith("readme"):
                continue  # the README's own text, rendered by GitHub as it is
            header = None
            for line in body.splitlines():
                if not line.startswith("|"):
                    header = None
                    continue
                cells = len(re.findall(r"(?<!\\)\|", line))
                header = header or cells
                assert cells == header, f"{page.name} [{name}]: a row with another cell count: {line}"
            outside_code = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", body, flags=re.S))
            raw = re.findall(r"<(?!!--)[A-Za-z/][^>]*>", outside_code)
            assert raw == [], f"{page.name} [{name}]: raw HTML tags {raw}"


def test_a_stale_section_is_found_and_rewritten(tmp_path, monkeypatch):
    """The check itself: a section edited by hand, a new start marker, and the script's answer."""
    page = ROOT / "docs" / "loading.md"
    text = page.read_text()
    old = sections(text)["issue-kinds"]
    edited = text.replace("| `missing_limit` |", "| `missing_limits` |")
    assert edited != text
    assert gen_docs.render(edited) == text
    assert gen_docs.render(text.replace(old, "\n")) == text  # an emptied section is filled again
    fresh = "# A page\n\n<!-- generated: extras -->\n\nText after it.\n"
    written = gen_docs.render(fresh)
    assert written.startswith("# A page\n\n<!-- generated: extras -->\n<!-- Written by")
    assert written.endswith("<!-- end generated: extras -->\n\nText after it.\n")
    assert gen_docs.render(written) == written
    monkeypatch.setattr(gen_docs, "DOCS", tmp_path)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path.parent)
    (tmp_path / "loading.md").write_text(edited)
    assert gen_docs.main(["--check"]) == 1
    assert (tmp_path / "loading.md").read_text() == edited
    assert gen_docs.main([]) == 0
    assert (tmp_path / "loading.md").read_text() == text
    assert gen_docs.main(["--check"]) == 0
