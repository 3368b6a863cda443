"""SRDF ``<disable_collisions link1=... link2=... reason=.../>`` lists: read and write.

Only these elements are read (the rest of an SRDF file, groups, poses, ..., is ignored), as
MoveIt's setup assistant writes them::

    <robot name="iiwa">
      <disable_collisions link1="lbr_iiwa_link_0" link2="lbr_iiwa_link_1" reason="Adjacent"/>
    </robot>
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple
from xml.sax.saxutils import quoteattr

from ..errors import SRDFError, shown_path


class DisabledPair(NamedTuple):
    link1: str
    link2: str
    reason: str = ""


def read_srdf_disabled(path: str | os.PathLike) -> list[DisabledPair]:
    """The ``<disable_collisions>`` entries of an SRDF file (or an SRDF XML string)."""
    text = os.fspath(path)
    if text.lstrip().startswith("<"):
        source, data = "<string>", text
    else:
        source = text
        try:
            data = Path(text).read_text()
        except OSError as exc:
            raise SRDFError(f"cannot read SRDF file {shown_path(text)}: {exc}") from None
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise SRDFError(f"{source}: malformed XML: {exc}") from None
    out = []
    for el in root.iter("disable_collisions"):
        a, b = el.get("link1"), el.get("link2")
        if not a or not b:
            raise SRDFError(f"{source}: <disable_collisions> needs link1 and link2, got {el.attrib}")
        out.append(DisabledPair(a, b, el.get("reason", "")))
    return out


def srdf_disabled_xml(pairs: Iterable, robot_name: str = "robot") -> str:
    """SRDF text with one ``<disable_collisions>`` per pair ((link1, link2[, reason]))."""
    lines = ['<?xml version="1.0"?>', f"<robot name={quoteattr(robot_name)}>"]
    for entry in pairs:
        e = DisabledPair(*entry)
        lines.append(f"  <disable_collisions link1={quoteattr(e.link1)} link2={quoteattr(e.link2)} "
                     f"reason={quoteattr(e.reason)}/>")
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def write_srdf_disabled(path: str | os.PathLike, pairs: Iterable, robot_name: str = "robot") -> None:
    Path(path).write_text(srdf_disabled_xml(pairs, robot_name))


__all__ = ["DisabledPair", "SRDFError", "read_srdf_disabled", "srdf_disabled_xml", "write_srdf_disabled"]
