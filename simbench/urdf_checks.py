"""What PyBullet refuses in a URDF, checked before PyBullet sees the file.

Two kinds of findings, both measured by loading variants of a small URDF with ``p.loadURDF``
(``tests/test_urdf_source.py`` repeats the experiment):

* :func:`check_tree` raises :class:`~simbench.errors.URDFError` for a broken tree: a link or
  joint without a name or defined twice, a joint without a known type, a missing parent or child,
  a link with two parents, more than one root, a cycle. PyBullet refuses some of these and
  *crashes the process* (segmentation fault) on others (a joint without type, a repeated joint
  name, two roots, a cycle), so no file reaches PyBullet without this check.
* :func:`check_elements` records :class:`~simbench.issues.ModelIssue` s for constructs that make
  PyBullet refuse the file ("Cannot load URDF file."): a shape without its size, a mesh without
  a filename, a mesh that cannot be found or whose format PyBullet cannot read, an ``<inertial>``
  without ``<mass value>``, ``<inertia>`` or ``ixx``/``iyy``/``izz``, a revolute or prismatic
  joint without ``<limit>``, a ``<robot>`` without a name. It also resolves every mesh and texture
  (:func:`simbench.packages.resolve_uri`).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import URDFError, UnknownNameError, shown, shown_path
from .issues import ModelIssue
from .packages import PackageMap, Resolution, resolve_uri

#: mesh formats PyBullet reads (by extension, any case); others make it refuse the file
MESH_FORMATS = (".obj", ".stl", ".dae", ".vtk")
#: shape element -> attributes PyBullet requires
SHAPES = {"sphere": ("radius",), "box": ("size",), "cylinder": ("radius", "length"),
          "capsule": ("radius", "length"), "mesh": ("filename",), "plane": ("normal",),
          "cdf": ("filename",)}
#: joint types PyBullet's URDF parser knows
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")


@dataclass(frozen=True)
class MeshRef:
    """A file named by the URDF: ``where`` is e.g. ``"link 'arm' <collision>"``."""

    link: str
    where: str
    resolution: Resolution


def _named(root: Any, tag: str, source: str) -> Iterator[tuple[str, Any]]:
    """(name, element) for every ``<tag>`` child of ``root``; names must exist and be unique."""
    seen: set[str] = set()
    for el in root.findall(tag):
        name = el.get("name")
        if not name:
            raise URDFError(f"{source}: a <{tag}> element (line {el.sourceline}) has no name")
        if name in seen:
            raise URDFError(f"{source}: {tag} {name!r} is defined twice")
        seen.add(name)
        yield name, el


def check_tree(root: Any, source: str) -> None:
    """Raise :class:`URDFError` (naming the file and element) unless the links and joints form
    one tree PyBullet can read; see the module docstring."""
    links = [name for name, _ in _named(root, "link", source)]
    if not links:
        raise URDFError(f"{source}: the robot has no <link>")
    known = set(links)
    child_of: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    for name, el in _named(root, "joint", source):
        jtype = el.get("type")
        if jtype not in JOINT_TYPES:
            raise URDFError(f"{source}: joint {name!r} has type {shown(jtype)}; expected one of "
                            f"{', '.join(JOINT_TYPES)}")
        ends = {}
        for tag in ("parent", "child"):
            sub = el.find(tag)
            if sub is None or not sub.get("link"):
                raise URDFError(f"{source}: joint {name!r} has no <{tag} link=...>")
            if sub.get("link") not in known:
                err = UnknownNameError("link", sub.get("link"), known)
                raise URDFError(f"{source}: joint {name!r} <{tag}>: {err}") from None
            ends[tag] = sub.get("link")
        child = ends["child"]
        if child in child_of:
            raise URDFError(f"{source}: link {child!r} is the child of two joints, "
                            f"{child_of[child]!r} and {name!r} (a URDF must be a tree)")
        child_of[child] = name
        children.setdefault(ends["parent"], []).append(child)
    roots = [name for name in links if name not in child_of]
    if not roots:
        raise URDFError(f"{source}: every link has a parent joint, so the joints form a cycle; "
                        f"a URDF needs exactly one root link")
    if len(roots) > 1:
        raise URDFError(f"{source}: {len(roots)} root links {roots[:10]}; a URDF needs exactly one "
                        f"(connect them with joints)")
    seen, stack = set(), [roots[0]]
    while stack:
        link = stack.pop()
        seen.add(link)
        stack.extend(children.get(link, []))
    if len(seen) != len(links):
        lost = sorted(known - seen)
        raise URDFError(f"{source}: links {lost[:10]} are not reachable from the root "
                        f"{roots[0]!r}: their joints form a cycle")


def _first_element(el: Any) -> Any:
    for child in el:
        if isinstance(child.tag, str):
            return child
    return None


def check_elements(root: Any, base: Path, path: Path | None, package_map: PackageMap | None,
                    issues: list[ModelIssue]) -> list[MeshRef]:
    """Append an issue to ``issues`` for every construct PyBullet refuses; return every mesh
    and texture file the URDF names, resolved (relative to ``base``; ``path`` is the URDF file,
    whose ancestors are searched for packages)."""
    meshes: list[MeshRef] = []
    if root.get("name") is None:
        issues.append(ModelIssue("unnamed_robot", "robot", "<robot> has no name attribute", {}))

    missing: dict[tuple[str, str], ModelIssue] = {}

    def refuse(kind: str, element: str, message: str, **data: Any) -> None:
        if kind == "missing_mesh":  # one issue per link and file, naming every element
            key = (element, data["uri"])
            if key in missing:
                old = missing[key]
                where = f"{old.data['where']}, {data['where']}"
                missing[key] = ModelIssue(kind, element, f"{where} {message}", {**old.data, "where": where})
                issues[issues.index(old)] = missing[key]
                return
            missing[key] = ModelIssue(kind, element, f"{data['where']} {message}", data)
            issues.append(missing[key])
            return
        issues.append(ModelIssue(kind, element, message, data))

    def resolve(link: str, where: str, uri: str) -> Resolution:
        res = resolve_uri(uri, base_dir=base, package_map=package_map, urdf=path)
        meshes.append(MeshRef(link, where, res))
        return res

    for link in root.iter("link"):
        name = link.get("name", "?")
        owner = f"link {name!r}"
        for tag in ("visual", "collision"):
            for k, el in enumerate(link.findall(tag)):
                where = f"<{tag}>" + (f" #{k + 1}" if len(link.findall(tag)) > 1 else "")
                _check_geometry(el, name, owner, where, refuse, resolve)
        inertial = link.find("inertial")
        if inertial is not None:
            mass, inertia = inertial.find("mass"), inertial.find("inertia")
            if mass is None or mass.get("value") is None:
                refuse("incomplete_inertial", owner, "<inertial> without <mass value=...>", link=name)
            if inertia is None:
                refuse("incomplete_inertial", owner, "<inertial> without <inertia>", link=name)
            else:
                lacking = [a for a in ("ixx", "iyy", "izz") if inertia.get(a) is None]
                if lacking:
                    refuse("incomplete_inertial", owner, f"<inertia> without {', '.join(lacking)}",
                           link=name)
    for texture in root.iter("texture"):
        uri = texture.get("filename")
        if uri:
            resolve("", "<texture>", uri)  # a missing texture is no issue: PyBullet skips it
    for joint in root.iter("joint"):
        if joint.get("type") in ("revolute", "prismatic") and joint.find("limit") is None:
            jname = joint.get("name", "?")
            refuse("missing_limit", f"joint {jname!r}", f"a {joint.get('type')} joint needs <limit "
                   "lower upper effort velocity>", joint=jname)
    return meshes


def _check_geometry(el: Any, link: str, owner: str, where: str, refuse: Any, resolve: Any) -> None:
    geometry = el.find("geometry")
    if geometry is None:
        refuse("incomplete_geometry", owner, f"{where} has no <geometry>", link=link)
        return
    shape = _first_element(geometry)
    if shape is None:
        refuse("incomplete_geometry", owner, f"{where} <geometry> is empty; expected one of "
               f"{', '.join(f'<{s}>' for s in SHAPES)}", link=link)
        return
    if shape.tag not in SHAPES:
        refuse("incomplete_geometry", owner, f"{where} <geometry> holds <{shape.tag}>; expected "
               f"one of {', '.join(f'<{s}>' for s in SHAPES)}", link=link)
        return
    # an empty radius or size is read as 0 by PyBullet; an empty filename is refused
    lacking = [a for a in SHAPES[shape.tag] if shape.get(a) is None or (a == "filename" and not shape.get(a))]
    if lacking:
        refuse("incomplete_geometry", owner, f"{where} <{shape.tag}> without "
               f"{' and '.join(lacking)}", link=link)
        return
    if shape.tag in ("mesh", "cdf"):  # cdf: PyBullet's signed-distance-field file
        uri = shape.get("filename")
        res = resolve(link, f"{owner} {where}", uri)
        if res.path is None:
            refuse("missing_mesh", owner, f"mesh {res.explain()}", link=link, uri=uri,
                   tried=list(res.tried), where=where)
        elif shape.tag == "mesh" and res.path.suffix.lower() not in MESH_FORMATS:
            kind = f"{res.path.suffix} file" if res.path.suffix else "file without extension"
            refuse("unsupported_mesh", owner, f"{where} mesh {shown_path(uri)} is a {kind}; PyBullet reads "
                   f"{', '.join(MESH_FORMATS)}", link=link, uri=uri)


__all__ = ["check_tree", "check_elements", "MeshRef", "MESH_FORMATS", "SHAPES", "JOINT_TYPES"]
