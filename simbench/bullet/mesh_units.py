"""Meshes in millimetres: a CAD export written in mm makes a 0.4 m link 400 m long, and nothing
else says so (the dynamics read the URDF's inertials, not the meshes; a headless collision query
just answers for the giant). A link of a robot (a body with movable joints) or of a free body whose
collision meshes span more than :data:`LARGEST_LINK` is said once per body when the scene loads,
with the length a ``scale="0.001 0.001 0.001"`` would give. Fixed bodies without joints (terrain,
buildings) are not judged. Read off PyBullet after loading: ``getCollisionShapeData`` for the
mesh and its scale, ``getAABB`` for the extent (the link's collision shapes in the world)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pybullet as p

logger = logging.getLogger("simbench")

#: a robot link longer than this (metres) is most likely a mesh in millimetres
LARGEST_LINK = 10.0


def oversized_links(body: int, client: int) -> list[tuple[str, str, float]]:
    """(link name, mesh file name, extent in metres) of each link whose collision shapes include
    a mesh and span more than :data:`LARGEST_LINK` along some axis."""
    found = []
    for link in range(-1, p.getNumJoints(body, physicsClientId=client)):
        meshes = [s for s in p.getCollisionShapeData(body, link, physicsClientId=client) if s[2] == p.GEOM_MESH]
        if not meshes:
            continue
        lo, hi = p.getAABB(body, link, physicsClientId=client)
        extent = max(h - l for l, h in zip(lo, hi))
        if extent > LARGEST_LINK:
            name = (p.getBodyInfo(body, physicsClientId=client)[0] if link < 0
                    else p.getJointInfo(body, link, physicsClientId=client)[12]).decode()
            found.append((name, Path(meshes[0][4].decode()).name, extent))
    return found


def warn_mesh_units(spec: Any, body: int, client: int) -> None:
    """Log one line, once per scene body ``spec``, when its loaded body ``body`` has links of
    more than :data:`LARGEST_LINK` made of meshes (see the module docstring)."""
    if spec.__dict__.get("_warned_units"):
        return
    object.__setattr__(spec, "_warned_units", True)
    name, fixed_base = spec.name, spec.fixed_base
    movable = any(p.getJointInfo(body, j, physicsClientId=client)[2] != p.JOINT_FIXED
                  for j in range(p.getNumJoints(body, physicsClientId=client)))
    if fixed_base and not movable:
        return
    big = oversized_links(body, client)
    if not big:
        return
    link, mesh, extent = max(big, key=lambda b: b[2])
    more = f" (and {len(big) - 1} more links)" if len(big) > 1 else ""
    logger.warning("body %r: link %r spans %.4g m (collision mesh %r)%s; a mesh in millimetres? "
                   "scale=\"0.001 0.001 0.001\" on its <mesh> makes it %.4g m", name, link, extent, mesh,
                   more, extent / 1000)
