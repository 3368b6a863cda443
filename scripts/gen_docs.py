"""Write the generated sections of the docs, so they cannot drift from the code.

Run it after changing the CLI, the scene schema, the issue kinds, the extras, the check's causes
or the README's benchmark tables::

    python scripts/gen_docs.py           # rewrite every stale section of docs/*.md
    python scripts/gen_docs.py --check   # only list the stale files (exit status 1 if any)

A page holds a generated section between two marker comments; the Markdown between them is
committed, so it reads the same on GitHub, in the checkout and on the mkdocs site::

    <!-- generated: NAME [ARGUMENT] -->
    ... written by this script, never by hand ...
    <!-- end generated: NAME [ARGUMENT] -->

NAME is one of ``GENERATORS``:

* ``cli``: ``simbench --help`` and every subcommand's help, from the parser;
* ``scene-keys``: the scene and body keys, from the scene schema;
* ``issue-kinds``: the kinds of URDF issues, and which PyBullet refuses;
* ``extras``: the optional extras;
* ``check-causes``: the known changes PyBullet makes to a model (``simbench check``);
* ``readme SECTION``: a ``## SECTION`` of the README (the benchmark tables).

To add a section, write its start marker alone on a line and run the script: it inserts the
Markdown and the end marker. ``tests/test_docs_generated.py`` fails when a committed section
differs from what this script writes now.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMMAND = "python scripts/gen_docs.py"
START = re.compile(r"^<!-- generated: (?P<name>[\w-]+)(?: (?P<arg>[^>]*?))? -->$", re.M)
TAG = re.compile(r"</?[A-Za-z][\w-]*(?: [^<>`|\n]*)?/?>")


def end_marker(name: str, arg: str | None) -> str:
    return f"<!-- end generated: {name}{' ' + arg if arg else ''} -->"


def code_tags(markdown: str) -> str:
    """URDF tags in text (``<inertial>``, ``</robot>``) as code: raw, GitHub and mkdocs would take
    them for HTML and show nothing. Code spans are left as they are."""
    parts = re.split(r"(`[^`\n]*`)", markdown)
    return "".join(p if p.startswith("`") else TAG.sub(lambda m: f"`{m.group()}`", p) for p in parts)


def cli_reference() -> str:
    """``simbench --help`` and every subcommand's help, at a fixed width of 100 columns."""
    from simbench.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands = [("simbench", parser)] + [(f"simbench {name}", p) for name, p in sub.choices.items()]
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal width: fix it
    try:
        out = []
        for title, command in commands:
            out += [f"## {title}", "", "```text", command.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(out).rstrip()


def scene_keys() -> str:
    from simbench.bullet.scene_schema import BODY_KEYS, SCENE_KEYS, markdown_table

    return "\n".join(["Top-level keys:", "", markdown_table(SCENE_KEYS), "",
                      "Keys of each `[[body]]`:", "", markdown_table(BODY_KEYS)])


def issue_kinds() -> str:
    from simbench.issues import KINDS, REFUSED_BY_PYBULLET

    rows = ["| kind | meaning | PyBullet refuses the file |", "|---|---|---|"]
    rows += [f"| `{k}` | {v} | {'yes' if k in REFUSED_BY_PYBULLET else ''} |" for k, v in KINDS.items()]
    return "\n".join(rows)


def extras() -> str:
    from simbench.extras import EXTRAS

    rows = ["| extra | enables |", "|---|---|"]
    rows += [f"| `{e.name}` | {'(planned) ' if e.planned else ''}{e.enables} |" for e in EXTRAS]
    return "\n".join(rows)


def check_causes() -> str:
    from simbench.check import CAUSES

    rows = ["| cause | what PyBullet does |", "|---|---|"]
    rows += [f"| `{k}` | {v} |" for k, v in CAUSES.items()]
    return "\n".join(rows)


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if m is None:
        raise ValueError(f"README.md has no section '## {title}'")
    return m.group(1).strip()


#: name -> (the generator, where its content comes from: said in the section's first line)
GENERATORS: dict[str, tuple[Callable[..., str], str]] = {
    "cli": (cli_reference, "the argument parser (simbench.cli.build_parser)"),
    "scene-keys": (scene_keys, "simbench/bullet/scene_schema.py"),
    "issue-kinds": (issue_kinds, "simbench/issues.py"),
    "extras": (extras, "simbench/extras.py"),
    "check-causes": (check_causes, "simbench/check/causes.py"),
    "readme": (readme_section, "the README's section"),
}


def section(name: str, arg: str | None) -> str:
    """The Markdown between the markers of ``name`` (with ``arg``), blank lines around it."""
    if name not in GENERATORS:
        raise ValueError(f"unknown generated section {name!r}; known: {', '.join(GENERATORS)}")
    make, source = GENERATORS[name]
    body = make(arg) if arg else make()
    body = body if name in ("cli", "readme") else code_tags(body)  # the CLI's help is in code blocks
    note = (f"<!-- Written by {COMMAND} from {source}{' ' + repr(arg) if arg else ''}; "
            f"edit the source, not this section, then run the script. -->")
    return f"\n{note}\n\n{body}\n\n"


def render(text: str, where: str = "the page") -> str:
    """``text`` with every generated section as the script writes it now."""
    out, pos = [], 0
    for m in START.finditer(text):
        if m.start() < pos:
            raise ValueError(f"{where}: the marker {m.group()!r} is inside another generated section")
        name, arg = m.group("name"), m.group("arg")
        end = end_marker(name, arg)
        following = START.search(text, m.end())
        stop = text.find(end, m.end(), following.start() if following else len(text))
        out += [text[pos:m.end()], section(name, arg), end]
        if stop < 0:  # a new section: insert it, keep the text after the start marker
            pos = m.end() + 1 if text.startswith("\n", m.end()) else m.end()
            out.append("\n")
        else:
            pos = stop + len(end)
    out.append(text[pos:])
    return "".join(out)


def pages() -> list[Path]:
    """The docs pages that hold a generated section."""
    return sorted(p for p in DOCS.glob("**/*.md") if START.search(p.read_text()))


def stale() -> dict[Path, str]:
    """Every page whose generated sections differ from what the script writes, with its new text."""
    out = {}
    for page in pages():
        text = page.read_text()
        new = render(text, str(page.relative_to(ROOT)))
        if new != text:
            out[page] = new
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only list the stale pages; exit 1 if any")
    args = parser.parse_args(argv)
    changed = stale()
    for page, new in changed.items():
        if not args.check:
            page.write_text(new)
        print(f"{'stale' if args.check else 'wrote'}: {page.relative_to(ROOT)}")
    if args.check and changed:
        print(f"run: {COMMAND}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
