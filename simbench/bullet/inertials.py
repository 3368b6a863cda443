"""The inertials PyBullet simulates where a URDF's differ from them, read from the file's tree
(cheap: no model is built), so that a loaded body's model (``sim.model``) can follow PyBullet
and one warning line can say so.

Measured with ``getDynamicsInfo`` (PyBullet 3.2.7, ``URDF_USE_INERTIA_FROM_FILE``):

* a link without ``<inertial>``: mass 1 kg, local inertia diagonal (1, 1, 1), inertial frame at
  the link frame (position 0, identity orientation); a fixed base's root gets mass 0 whatever
  the file says (it never moves), a floating root 1 kg like any other link. PyBullet prints
  ``b3Warning[...BulletUrdfImporter.cpp,126]: No inertial data for link...`` on stdout.
* principal moments that break the triangle inequality (:func:`simbench.urdf_model.breaks_triangle`):
  the local inertia diagonal is (0, 0, 0), mass and COM kept (``b3Warning[...,467]: Bad inertia
  tensor properties, setting inertia to zero for link: NAME``).
* a root ``<inertial>`` with a rotation: PyBullet's base frame is the inertial frame; the
  loaded body's model already maps it back to the link frame (gravity for a fixed base,
  :class:`~simbench.dynamics.floating` conventions for a free one), so nothing changes here.

PyBullet ignores a link named ``world`` (it welds the root to the world), so it is not listed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

#: PyBullet's warnings about the inertials above, as its importer prints them on stdout (the
#: link name of the second "No inertial data" line has no line break after it); with a GUI
#: server each line comes as "b3Printf: " + line + a blank line (the first alternative)
B3_INERTIAL_WARNINGS = re.compile(
    r"(?:b3Printf: )+b3Warning\[[^\]\n]*BulletUrdfImporter\.cpp,(?:126|467)\]:\n\n?(?:b3Printf: )+[^\n]*\n\n?"
    r"|b3Warning\[[^\]\n]*BulletUrdfImporter\.cpp,126\]:\n(?:No inertial data for link[^\n]*?inertial frame"
    r"|[^\n]*?(?=b3[A-Z][a-z]+\[|\n|\Z))\n?"
    r"|b3Warning\[[^\]\n]*BulletUrdfImporter\.cpp,467\]:\nBad inertia tensor properties[^\n]*\n?")


@dataclass(frozen=True)
class InertialDefaults:
    """Links whose inertials PyBullet replaces. ``missing``: no ``<inertial>`` (the root
    included, when it has none); ``zeroed``: rotational inertia zeroed; ``root``: the root link."""

    missing: tuple[str, ...] = ()
    zeroed: tuple[str, ...] = ()
    root: str = ""

    def moving(self, floating: bool) -> "InertialDefaults":
        """The links that matter: a fixed root never moves, so its inertial never does."""
        if floating:
            return self
        return InertialDefaults(tuple(n for n in self.missing if n != self.root),
                                tuple(n for n in self.zeroed if n != self.root), self.root)

    def apply(self, model: Any) -> Any:
        """``model`` (a :class:`~simbench.model.RobotModel` of the file) with PyBullet's values:
        1 kg, unit inertia, COM at the link origin for ``missing``; zero rotational inertia for
        ``zeroed``."""
        for name in self.missing:
            model = model.with_link_inertial(name, mass=1.0, com=np.zeros(3), inertia=np.eye(3))
        for name in self.zeroed:
            model = model.with_link_inertial(name, inertia=np.zeros((3, 3)))
        return model  # a link without <inertial> keeps the model's identity inertial frame, as PyBullet

    def warning(self, body: str, label: str) -> str | None:
        """One line naming the links and what PyBullet uses, or None when there are none."""
        parts = []
        if self.missing:
            parts.append(f"{_links(self.missing)} {'have' if len(self.missing) > 1 else 'has'} no "
                         f"<inertial>; PyBullet simulates {'each' if len(self.missing) > 1 else 'it'} "
                         f"as 1 kg with unit inertia, and so does sim.model; give "
                         f"{'them' if len(self.missing) > 1 else 'it'} an <inertial> to choose")
        if self.zeroed:
            many = len(self.zeroed) > 1
            parts.append(f"{_links(self.zeroed)} {'have' if many else 'has'} principal moments of "
                         f"inertia that break the triangle inequality; PyBullet zeroes "
                         f"{'their' if many else 'its'} rotational inertia (keeps mass and COM), and "
                         f"so does sim.model; make each moment at most the sum of the other two")
        if not parts:
            return None
        return f"body {body!r} ({label}): " + "; ".join(parts)


def _links(names: tuple[str, ...]) -> str:
    return ("links " if len(names) > 1 else "link ") + ", ".join(repr(n) for n in names)


def inertial_defaults(root: Any) -> InertialDefaults:
    """The :class:`InertialDefaults` of a URDF tree (``UrdfSource.root``)."""
    from ..urdf_model import breaks_triangle

    links = root.findall("link")
    children = {j.find("child").get("link") for j in root.findall("joint") if j.find("child") is not None}
    roots = [link.get("name") for link in links if link.get("name") not in children]
    missing, zeroed = [], []
    for link in links:
        name = link.get("name")
        inertial = link.find("inertial")
        if inertial is None:
            if name != "world":
                missing.append(name)
            continue
        inertia = _inertia(inertial.find("inertia"))
        if inertia is not None and breaks_triangle(inertia):
            zeroed.append(name)
    return InertialDefaults(tuple(missing), tuple(zeroed), roots[0] if roots else "")


def _inertia(element: Any) -> np.ndarray | None:
    if element is None:
        return None
    try:
        v = {k: float(element.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    except ValueError:
        return None
    return np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                     [v["ixz"], v["iyz"], v["izz"]]])


__all__ = ["InertialDefaults", "inertial_defaults", "B3_INERTIAL_WARNINGS"]
