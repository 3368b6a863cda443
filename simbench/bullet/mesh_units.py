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

from .._quiet import quiet_fds

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


def mesh_units_line(name: str, body: int, client: int, fixed_base: bool) -> str | None:
    """The one line about body ``name`` (loaded as ``body``) when it has links of more than
    :data:`LARGEST_LINK` made of meshes, else None (see the module docstring)."""
    movable = any(p.getJointInfo(body, j, physicsClientId=client)[2] != p.JOINT_FIXED
                  for j in range(p.getNumJoints(body, physicsClientId=client)))
    if fixed_base and not movable:
        return None
    big = oversized_links(body, client)
    if not big:
        return None
    link, mesh, extent = max(big, key=lambda b: b[2])
    more = f" (and {len(big) - 1} more links)" if len(big) > 1 else ""
    return (f"{name}: link {link!r} spans {extent:.4g} m (collision mesh {mesh!r}){more}; a mesh in "
            f"millimetres? scale=\"0.001 0.001 0.001\" on its <mesh> makes it {extent / 1000:.4g} m")


def warn_mesh_units(spec: Any, body: int, client: int) -> None:
    """Log :func:`mesh_units_line` once per scene body ``spec``, loaded as ``body``."""
    if spec.__dict__.get("_warned_units"):
        return
    object.__setattr__(spec, "_warned_units", True)
    line = mesh_units_line(f"body {spec.name!r}", body, client, spec.fixed_base)
    if line:
        logger.warning("%s", line)


def check_file(spec: str, **loading: Any) -> None:
    """Log :func:`mesh_units_line` for a URDF file PyBullet can load (``spec`` as the user named
    it; ``loading``: :func:`~simbench.urdf_source.load_source`'s package map and xacro
    arguments), read again quietly (its loading was said once) and loaded with a fixed base on a
    DIRECT server of its own."""
    from ..urdf_source import load_source

    said = logging.getLogger("simbench.urdf_source")
    level, label = said.level, str(spec)
    said.setLevel(logging.ERROR)
    try:
        path = str(load_source(spec, **loading).pybullet_path())
    finally:
        said.setLevel(level)
    client = p.connect(p.DIRECT)
    try:
        with quiet_fds(1, 2):   # PyBullet's own warnings about the file: info has its issues
            body = p.loadURDF(path, useFixedBase=True, physicsClientId=client)
        line = mesh_units_line(label, body, client, False)
    except p.error:
        return
    finally:
        p.disconnect(physicsClientId=client)
    if line:
        logger.warning("%s", line)
