"""mkdocs hooks: the generated parts of the docs, so they cannot drift from the code.

A page holds a marker comment where generated Markdown goes:

* ``<!-- generated: cli -->``: ``simbench --help`` and every subcommand's help, from the parser;
* ``<!-- generated: scene-keys -->``: the scene and body keys, from the scene schema;
* ``<!-- generated: issue-kinds -->``: the kinds of URDF issues, and which PyBullet refuses;
* ``<!-- generated: extras -->``: the optional extras;
* ``<!-- generated: check-causes -->``: the known changes PyBullet makes to a model (``check``);
* ``<!-- generated: readme SECTION -->``: a ``## SECTION`` of the README (the benchmark tables).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!-- generated: ([\w-]+)(?: ([^>]*?))? -->")


def cli_reference() -> str:
    import argparse

    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal width: fix it
    from simbench.cli import build_parser

    parser = build_parser()
    out = ["## simbench", "", "```text", parser.format_help().rstrip(), "```", ""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        out += [f"## simbench {name}", "", "```text", command.format_help().rstrip(), "```", ""]
    return "\n".join(out)


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
    try:  # the check's causes, wherever the check module lives
        from simbench.check import CAUSES
    except ImportError:
        from simbench.bullet.crosscheck import CAUSES

    rows = ["| cause | what PyBullet does |", "|---|---|"]
    rows += [f"| `{k}` | {v} |" for k, v in CAUSES.items()]
    return "\n".join(rows)


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    if m is None:
        raise ValueError(f"README.md has no section '## {title}'")
    return m.group(1).strip()


GENERATORS = {"cli": cli_reference, "scene-keys": scene_keys, "issue-kinds": issue_kinds,
              "extras": extras, "check-causes": check_causes, "readme": readme_section}


def on_page_markdown(markdown: str, **kwargs) -> str:
    def replace(m: re.Match) -> str:
        make = GENERATORS[m.group(1)]
        return make(m.group(2)) if m.group(2) else make()

    return MARKER.sub(replace, markdown)
