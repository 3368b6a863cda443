"""What PyBullet refuses in a URDF, checked before PyBullet sees the file.

Two kinds of findings, both measured by loading variants of a small URDF with ``p.loadURDF``
(``tests/test_urdf_source.py`` repeats the experiment):

* :func:`check_tree` raises :class:`~simbench.errors.URDFError` for a broken tree: a link or
  joint without a name or defined twice, a joint without a known type, a missing parent or child,
  a link with two parents, more than one root, a cycle. PyBullet refuses some of these and
  *crashes the process* (segmentation fault) on others (a joint without type, a repeated joint
  name, two roots, a cycle), so no file reaches PyBullet without this check. It also raises for a
  shape whose numbers are malformed (:func:`check_geometry_numbers`): PyBullet loads those, but
  with another shape than the file means (a 0x0x0 box), so distances would be silently wrong.
* :func:`check_elements` records :class:`~simbench.issues.ModelIssue` s for constructs that make
  PyBullet refuse the file ("Cannot load URDF file."): a shape without its size, a mesh without
  a filename, a mesh that cannot be found or whose format PyBullet cannot read, an ``<inertial>``
  without ``<mass value>``, ``<inertia>`` or ``ixx``/``iyy``/``izz``, a revolute or prismatic
  joint without ``<limit>``, a ``<robot>`` without a name. It also resolves every mesh and texture
  (:func:`simbench.packages.resolve_uri`).
* :func:`check_names` records an ``unknown_element`` or ``unknown_attribute`` issue for a
  misspelled tag or attribute (both PyBullet and simbench ignore it silently: a joint whose
  ``<orign>`` is misspelled sits at its parent's origin), with a did-you-mean suggestion.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import URDFError, UnknownNameError, closest, likeness, shown, shown_path
from .issues import ModelIssue
from .packages import MESH_FORMATS, PackageMap, Resolution, resolve_uri
#: the leading number of a token, as C's ``atof`` reads it (also :mod:`simbench.urdf_model`'s)
_NUMBER_PREFIX = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: shape element -> attributes PyBullet requires
SHAPES = {"sphere": ("radius",), "box": ("size",), "cylinder": ("radius", "length"),
          "capsule": ("radius", "length"), "mesh": ("filename",), "plane": ("normal",),
          "cdf": ("filename",)}
#: shape element -> attribute -> (how many numbers, what they are, whether they must be >= 0);
#: see :func:`check_geometry_numbers`. A mesh's scale may be negative (a mirrored mesh).
GEOMETRY_NUMBERS: dict[str, dict[str, tuple[int, str, bool]]] = {
    "box": {"size": (3, "x y z in m", True)},
    "sphere": {"radius": (1, "radius in m", True)},
    "cylinder": {"radius": (1, "radius in m", True), "length": (1, "length in m", True)},
    "capsule": {"radius": (1, "radius in m", True), "length": (1, "length in m", True)},
    "mesh": {"scale": (3, "x y z scale factors", False)},
}
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
    check_geometry_numbers(root, source)


def _number_problem(text: str, count: int, nonnegative: bool) -> str | None:
    """Why ``text`` is not ``count`` numbers as PyBullet reads them (None when it is).

    PyBullet splits a vector at spaces and reads each piece's leading number (C's ``atof``:
    ``"0.05,"`` is 0.05, ``"abc"`` is 0); with fewer than 3 pieces it keeps (0, 0, 0) and only
    prints "Couldn't parse vector3". Like :func:`simbench.urdf_model._check_numbers` for
    ``<origin>``, the leading number of a sloppy token and the first ``count`` tokens are
    accepted (PyBullet reads them as meant)."""
    tokens = text.split()
    if len(tokens) < count:
        hint = " (separate numbers with spaces, not commas)" if "," in text else ""
        return f"got {len(tokens)}{hint}"
    for token in tokens[:count]:
        match = _NUMBER_PREFIX.match(token)
        if match is None:
            try:
                value = float(token)  # nan, inf
            except ValueError:
                return f"got {token!r}, not a number"
        else:
            value = float(match.group())
            token = match.group()
        if not math.isfinite(value):
            return f"got {token}, not a finite number"
        if nonnegative and value < 0:
            return f"got {token}, a negative size"
    return None


def _attribute_text(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else f"{text[:18]}...{text[-18:]}"


def check_geometry_numbers(root: Any, source: str) -> None:
    """Raise :class:`URDFError` (one line naming the file, link, element, the text and what was
    expected) unless every shape's numbers (:data:`GEOMETRY_NUMBERS`) are as many finite numbers
    as the shape needs, sizes >= 0.

    PyBullet loads such a file without refusing it, but not as written: ``<box size="0.05 0.3">``
    or ``size="0.05,0.05,0.3"`` is a 0x0x0 box (its only word is "Couldn't parse vector3"),
    ``radius="abc"`` a point, ``size="0.05 -0.05 0.3"`` a box 0.078 m from a ball that is
    0.075 m from the box meant, ``nan`` a shape no distance query finds (no closest points),
    ``<mesh scale="0.05 0.3">`` a mesh scaled by 0.05 in x, y and z (measured with PyBullet
    3.2.7, ``tests/test_urdf_geometry.py``): every distance to it would be silently wrong. A
    missing attribute is left to :func:`check_elements` (PyBullet refuses the file) and an empty
    one to PyBullet (it reads it as 0; ``tests/test_urdf_source.py`` has it load)."""
    for link in root.findall("link"):
        owner = f"link {link.get('name')!r}"
        for tag in ("visual", "collision"):
            elements = link.findall(tag)
            for k, el in enumerate(elements):
                geometry = el.find("geometry")
                shape = _first_element(geometry) if geometry is not None else None
                if shape is None or shape.tag not in GEOMETRY_NUMBERS:
                    continue
                where = f"<{tag}>" + (f" #{k + 1}" if len(elements) > 1 else "")
                for attr, (count, what, nonnegative) in GEOMETRY_NUMBERS[shape.tag].items():
                    text = shape.get(attr)
                    if text is None or not text.strip():
                        continue
                    problem = _number_problem(text, count, nonnegative)
                    if problem and ("$(" in text or "${" in text):
                        problem += ("; unexpanded xacro: expand the file with xacro (simbench loads "
                                    "a .xacro file itself: pip install 'simbench[xacro]')")
                    if problem:
                        numbers = f"{count} number{'s' if count > 1 else ''}"
                        raise URDFError(f"{source}: {owner}: {where}<geometry><{shape.tag} {attr}="
                                        f"\"{_attribute_text(text)}\">: expected {numbers} ({what}), "
                                        f"{problem}")


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
    check_names(root, issues)
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


#: the URDF specification (wiki.ros.org/urdf/XML) and PyBullet's additions: element -> (its
#: attributes, its child elements, strict). An unknown child or attribute is reported when it is
#: close to a known name (a misspelling) or, anywhere, inside a strict element (only the spec's
#: names belong there). ``None`` as children: the contents are not checked (``<geometry>``'s
#: shape is checked by :func:`check_elements`; ``<gazebo>``, ``<transmission>``, ``<sensor>``
#: and other blocks hold anything).
URDF_ELEMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None, bool]] = {
    "robot": (("name", "version"), ("link", "joint", "material", "transmission", "gazebo", "sensor"),
              False),
    "link": (("name",), ("inertial", "visual", "collision", "contact"), False),
    "inertial": ((), ("origin", "mass", "inertia"), True),
    "origin": (("xyz", "rpy"), (), True),
    "mass": (("value",), (), True),
    "inertia": (("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), (), True),
    "visual": (("name",), ("origin", "geometry", "material"), False),
    "collision": (("name",), ("origin", "geometry"), False),
    "geometry": ((), None, False),
    "box": (("size",), (), False),
    "cylinder": (("radius", "length"), (), False),
    "capsule": (("radius", "length"), (), False),
    "sphere": (("radius",), (), False),
    "mesh": (("filename", "scale"), (), False),
    "plane": (("normal",), (), False),
    "cdf": (("filename",), (), False),
    "material": (("name",), ("color", "texture", "specular"), False),
    "color": (("rgba",), (), False),
    "texture": (("filename",), (), False),
    "specular": (("rgb",), (), False),
    "joint": (("name", "type"), ("parent", "child", "origin", "axis", "calibration", "dynamics",
                                 "limit", "mimic", "safety_controller"), False),
    "parent": (("link",), (), False),
    "child": (("link",), (), False),
    # <axis rpy> is no URDF, but common (ROS's husky) and harmless: ignored by PyBullet and ROS
    "axis": (("xyz", "rpy"), (), True),
    # twist: PyBullet's limit of a spherical joint (spherical_joint_limit.urdf)
    "limit": (("lower", "upper", "effort", "velocity", "twist"), (), True),
    "calibration": (("rising", "falling", "reference_position"), (), False),
    "dynamics": (("damping", "friction"), (), False),
    "mimic": (("joint", "multiplier", "offset"), (), False),
    "safety_controller": (("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"), (),
                          False),
    # PyBullet's contact parameters of a link, each <NAME value=...>
    "contact": ((), ("lateral_friction", "rolling_friction", "spinning_friction", "stiffness",
                     "damping", "restitution", "friction_anchor", "inertia_scaling", "contact_cfm",
                     "contact_erp"), False),
}
#: elements under <contact> (each holds a value), and the blocks whose contents are free
_CONTACT_PARAMETER = (("value",), (), False)
_FREE = frozenset({"transmission", "gazebo", "sensor"})
#: how close (difflib's ratio, ignoring case) an unknown name must be to a known one to be taken
#: for its misspelling outside a strict element
MISSPELLING_RATIO = 0.75


def _suggestion(name: str, known: tuple[str, ...]) -> tuple[str | None, bool]:
    """The closest known name (or None), and whether it is close enough to call ``name`` its
    misspelling."""
    (best, *_) = closest(name, known, n=1) or [None]
    if best is None:
        return None, False
    close = best.casefold() == name.casefold() or likeness(name, best) >= MISSPELLING_RATIO
    return best, close


def check_names(root: Any, issues: list[ModelIssue]) -> None:
    """Append an ``unknown_element`` or ``unknown_attribute`` issue for every element or attribute
    that is not in :data:`URDF_ELEMENTS` and is either close to a known name or inside a strict
    element. Namespaced names (``xacro:``, ``{ns}tag``) and the contents of ``<gazebo>``,
    ``<transmission>`` and ``<sensor>`` are never reported."""
    def owner_of(el: Any, owner: str) -> str:
        if el.tag in ("link", "joint") and el.getparent() is root:
            return f"{el.tag} {el.get('name', '?')!r}"
        return owner

    def visit(el: Any, spec: tuple[tuple[str, ...], tuple[str, ...] | None, bool], owner: str) -> None:
        attrs, children, strict = spec
        data = {owner.split(" ", 1)[0]: owner.split(" ", 1)[1].strip("'")} if " " in owner else {}
        for attr in el.attrib:
            if "{" in attr or ":" in attr or attr in attrs:
                continue
            best, close = _suggestion(attr, attrs)
            if strict or close:
                hint = f"; did you mean {best}?" if best and close and len(attrs) > 1 else ""
                expected = f"expected {', '.join(attrs)}" if attrs else "it takes no attributes"
                issues.append(ModelIssue("unknown_attribute", owner, f"<{el.tag} {attr}=...>: "
                                         f"{expected}{hint}", {**data, "tag": el.tag, "attribute": attr,
                                                               "suggestion": best}))
        if children is None:
            return
        for child in el:
            tag = child.tag
            if not isinstance(tag, str) or "{" in tag or ":" in tag or tag in _FREE:
                continue  # a comment, a namespaced element, a free block
            if tag in children:
                sub = _CONTACT_PARAMETER if el.tag == "contact" else URDF_ELEMENTS[tag]
                visit(child, sub, owner_of(child, owner))
                continue
            best, close = _suggestion(tag, children)
            if tag in ("link", "joint"):   # a <link> inside a <link>: dropped by every parser
                issues.append(ModelIssue("unknown_element", owner, f"<{tag} name={child.get('name', '?')!r}> inside "
                                         f"<{el.tag}> is ignored; a <{tag}> belongs directly in <robot>",
                                         {**data, "tag": tag, "parent": el.tag, "suggestion": None}))
            elif strict or close:
                hint = f"; did you mean <{best}>?" if best and close else \
                    (f"; expected {', '.join(f'<{c}>' for c in children)}" if children else
                     f"; <{el.tag}> holds no elements")
                issues.append(ModelIssue("unknown_element", owner, f"<{tag}> is not a URDF element of "
                                         f"<{el.tag}>{hint}", {**data, "tag": tag, "parent": el.tag,
                                                                "suggestion": best}))

    visit(root, URDF_ELEMENTS["robot"], "robot")


__all__ = ["check_tree", "check_elements", "check_names", "check_geometry_numbers", "URDF_ELEMENTS",
           "MeshRef", "MESH_FORMATS", "SHAPES", "GEOMETRY_NUMBERS", "JOINT_TYPES"]
