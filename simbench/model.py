"""URDF -> immutable kinematic tree. The only module that parses URDF (with yourdfpy).

Indexing convention, the same as PyBullet's for the same file:

* links are numbered depth first from the root, children in the order their joints appear
  in the file; link 0 is the root (PyBullet's base, index -1 there), link ``k`` is PyBullet
  link ``k - 1``;
* joint ``j`` is the joint whose child is link ``j + 1`` (so PyBullet joint index ``j``);
* the movable joints (revolute, continuous, prismatic, spherical) in that order give the
  configuration vector: ``model.joint_names``, ``model.dof``.

Spatial quantities use the [angular; linear] ordering of the seed slides (twist
``V = (w, v)``, wrench ``F = (m, f)``).
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ShapeError, UnknownNameError, URDFError, lookup
from .paths import resolve_urdf

#: Joint type codes used in :attr:`RobotModel.joint_type_code` (and by the numba kernels).
FIXED, REVOLUTE, PRISMATIC, SPHERICAL = 0, 1, 2, 3
_TYPE_CODES = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE,
               "prismatic": PRISMATIC, "spherical": SPHERICAL}
_NV = {FIXED: 0, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 3}
_KNOWN_TYPES = set(_TYPE_CODES) | {"floating", "planar"}

#: Standard gravity (m/s^2) in a z-up world frame: the one default of the whole project.
GRAVITY: tuple[float, float, float] = (0.0, 0.0, -9.81)

# PyBullet drops the rotational inertia of a link whose principal moments break the
# triangle inequality by more than this factor (URDF2Bullet.cpp).
TRIANGLE_TOLERANCE = 1.00001


@dataclass(frozen=True)
class ModelIssue:
    """Something questionable about the file itself (not an error: the model still loads).

    ``kind`` is one of: ``inertia_not_positive_definite``, ``inertia_triangle_inequality``,
    ``missing_inertial``, ``nonpositive_mass``, ``axis_not_unit``, ``zero_axis``,
    ``mimic_joint``, ``missing_limit``, ``root_inertial_rotation``, ``trailing_content``,
    ``sloppy_number``.
    ``element`` is ``"link NAME"`` or ``"joint NAME"``; ``data`` holds the numbers.
    """

    kind: str
    element: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.kind}: {self.element}: {self.message}"


@dataclass(frozen=True)
class Mimic:
    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia about the frame origin, [angular; linear] ordering.

    ``G = [[I_c + m [c]^T [c], m [c]], [m [c]^T, m 1]]`` with ``I_c`` about the centre of
    mass ``c``, both expressed in the link frame.
    """
    c = np.asarray(com, dtype=float)
    cx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    G = np.zeros((6, 6))
    G[:3, :3] = inertia_com + mass * cx.T @ cx
    G[:3, 3:] = mass * cx
    G[3:, :3] = mass * cx.T
    G[3:, 3:] = mass * np.eye(3)
    return G


def _frozen(a: Any, dtype: Any = float) -> np.ndarray:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class RobotModel:
    """An immutable kinematic tree read from a URDF. See the module docstring for indexing."""

    name: str
    source: str
    link_names: tuple[str, ...]
    link_parent: np.ndarray          # (nl,) parent link index, -1 for the root
    link_mass: np.ndarray            # (nl,)
    link_com: np.ndarray             # (nl, 3) centre of mass in the link frame
    link_inertia: np.ndarray         # (nl, 3, 3) about the COM, link-frame axes
    link_inertial_origin: np.ndarray  # (nl, 4, 4) the file's <inertial><origin>
    link_has_inertial: np.ndarray    # (nl,) bool
    joint_all_names: tuple[str, ...]  # (nl-1,) joint j has child link j+1
    joint_type: tuple[str, ...]
    joint_type_code: np.ndarray      # FIXED / REVOLUTE / PRISMATIC / SPHERICAL
    joint_origin: np.ndarray         # (nj, 4, 4) parent link frame -> joint frame at q = 0
    joint_axis: np.ndarray           # (nj, 3) unit axis in the joint frame
    joint_lower: np.ndarray          # (nj,) as in the file (-inf/inf when absent)
    joint_upper: np.ndarray
    joint_effort: np.ndarray
    joint_velocity: np.ndarray
    joint_damping: np.ndarray
    joint_friction: np.ndarray
    joint_mimic: tuple[Mimic | None, ...]
    joint_v_index: np.ndarray        # (nj,) first index into q/qd, -1 for fixed joints
    issues: tuple[ModelIssue, ...] = ()
    #: gravity (m/s^2) expressed in the root link's frame; the dynamics use it when no
    #: ``gravity=`` is given. A body mounted with a rotation R carries ``R^T g_world``.
    gravity: tuple[float, float, float] = GRAVITY
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_urdf(cls, path: str | os.PathLike) -> "RobotModel":
        """Load a URDF file (a path, or ``pybullet_data:NAME``)."""
        resolved = resolve_urdf(path)
        try:
            text = resolved.read_bytes()
        except OSError as exc:
            raise URDFError(f"cannot read URDF {str(resolved)!r}: {exc}") from None
        return cls.from_urdf_string(text, base_dir=resolved.parent, source=str(resolved))

    @classmethod
    def from_urdf_string(cls, xml: str | bytes, base_dir: str | os.PathLike | None = None,
                         source: str | None = None) -> "RobotModel":
        """Parse URDF text. ``base_dir`` is where relative mesh paths would be resolved."""
        source = source or (f"<string in {base_dir}>" if base_dir else "<string>")
        return _build(xml, source)

    # ------------------------------------------------------------------ derived views
    @property
    def nlinks(self) -> int:
        return len(self.link_names)

    @property
    def movable(self) -> np.ndarray:
        """Indices (into the all-joints arrays) of the movable joints, in q order."""
        return self._cached("movable", lambda: _frozen(np.flatnonzero(self.joint_v_index >= 0), int))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Movable joint names in q order (PyBullet's order for the same file)."""
        return tuple(self.joint_all_names[j] for j in self.movable)

    @property
    def dof(self) -> int:
        return int(sum(_NV[int(c)] for c in self.joint_type_code))

    @property
    def lower(self) -> np.ndarray:
        """(dof,) lower limits; a spherical joint's three entries are -inf."""
        return self._per_dof("lower", self.joint_lower)

    @property
    def upper(self) -> np.ndarray:
        """(dof,) upper limits; a spherical joint's three entries are +inf."""
        return self._per_dof("upper", self.joint_upper)

    @property
    def dof_joint(self) -> np.ndarray:
        """(dof,) index (into the all-joints arrays) of the joint each q entry belongs to."""
        return self._cached("dof_joint", lambda: _frozen(
            [j for j in self.movable for _ in range(_NV[int(self.joint_type_code[j])])], int))

    def _per_dof(self, key: str, per_joint: np.ndarray) -> np.ndarray:
        def make() -> np.ndarray:
            values = per_joint[self.dof_joint].copy()
            values[self.joint_type_code[self.dof_joint] == SPHERICAL] = (
                -math.inf if key == "lower" else math.inf)
            return _frozen(values)
        return self._cached(key, make)

    @property
    def link_spatial_inertia(self) -> np.ndarray:
        """(nl, 6, 6) spatial inertia of each link about its own origin, link frame."""
        return self._cached("G", lambda: _frozen(
            [spatial_inertia(m, c, I) for m, c, I in zip(self.link_mass, self.link_com, self.link_inertia)]))

    @property
    def total_mass(self) -> float:
        return float(self.link_mass.sum())

    def _cached(self, key: str, make: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    # ------------------------------------------------------------------ name lookups
    def joint_index(self, name: str) -> int:
        """Position of movable joint ``name`` in q."""
        table = self._cached("jidx", lambda: {n: i for i, n in enumerate(self.joint_names)})
        return lookup(table, name, "movable joint", self.name)

    def link_index(self, name: str) -> int:
        """Index of link ``name`` (0 is the root; PyBullet's index is one less)."""
        table = self._cached("lidx", lambda: {n: i for i, n in enumerate(self.link_names)})
        return lookup(table, name, "link", self.name)

    # ------------------------------------------------------------------ configurations
    def neutral(self) -> np.ndarray:
        """The zero configuration, clipped into the joint limits."""
        q = np.zeros(self.dof)
        ok = self.lower <= self.upper  # PyBullet treats lower > upper as unlimited
        q[ok] = np.clip(0.0, self.lower[ok], self.upper[ok])
        return q

    def random_configuration(self, rng: np.random.Generator | int | None = None,
                             n: int | None = None) -> np.ndarray:
        """Uniform samples within the limits, shape (dof,) or (n, dof).

        Continuous joints (and joints whose lower limit is above the upper one, which
        PyBullet treats as unlimited) are drawn from [-pi, pi]; unlimited prismatic
        joints from [-1, 1] m.
        """
        rng = np.random.default_rng(rng)
        lo, hi = self.lower.copy(), self.upper.copy()
        codes = self.joint_type_code[self.dof_joint]
        bad = ~(np.isfinite(lo) & np.isfinite(hi) & (lo <= hi))
        span = np.where(codes == PRISMATIC, 1.0, math.pi)
        lo[bad], hi[bad] = -span[bad], span[bad]
        size = (self.dof,) if n is None else (n, self.dof)
        return rng.uniform(lo, hi, size=size)

    def check_q(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as a float array of shape (..., dof); a clear error otherwise."""
        return as_joint_array(self, q, name)

    # ------------------------------------------------------------------ modified copies
    def with_link_inertial(self, link: str, *, mass: float | None = None,
                           com: Sequence[float] | None = None,
                           inertia: np.ndarray | None = None) -> "RobotModel":
        """A copy with one link's mass, COM (link frame) or COM inertia (link axes) changed."""
        k = self.link_index(link)
        masses, coms, inertias = (np.array(self.link_mass), np.array(self.link_com),
                                  np.array(self.link_inertia))
        if mass is not None:
            masses[k] = mass
        if com is not None:
            coms[k] = com
        if inertia is not None:
            inertias[k] = inertia
        return dataclasses.replace(self, link_mass=_frozen(masses), link_com=_frozen(coms),
                                   link_inertia=_frozen(inertias), _cache={})

    def replace(self, **changes: Any) -> "RobotModel":
        """``dataclasses.replace`` that also drops cached derived arrays."""
        frozen = {k: (_frozen(v, np.asarray(v).dtype) if isinstance(v, np.ndarray) else v)
                  for k, v in changes.items()}
        return dataclasses.replace(self, **frozen, _cache={})

    def scaled(self, s: float) -> "RobotModel":
        """The robot as PyBullet loads it with ``globalScaling=s``. Measured on the iiwa and
        the cart-pole of pybullet_data (PyBullet 3.2.7) at s = 2: joint origins, inertial
        origins (COM) and collision geometry scale by ``s``; masses and the inertia tensors
        about the COM are *unchanged* (not ``s^2 I``: PyBullet scales the geometry, not the
        inertia); revolute limits are unchanged; prismatic limits are reported times ``s``
        while a prismatic joint still moves ``q`` metres (its travel is not scaled). So this
        scales every length of the model and the prismatic limits, and keeps masses and
        inertias. ``s`` must be finite and positive."""
        from .errors import SimbenchError

        given = s
        try:
            s = float(s)
        except (TypeError, ValueError):
            s = math.nan
        if not (math.isfinite(s) and s > 0):
            raise SimbenchError(f"scale = {given!r}; expected a finite positive number (PyBullet's globalScaling)")
        if s == 1.0:
            return self
        origins, inertial = np.array(self.joint_origin), np.array(self.link_inertial_origin)
        origins[:, :3, 3] *= s
        inertial[:, :3, 3] *= s
        prismatic = np.array([t == "prismatic" for t in self.joint_type], dtype=bool)
        lower, upper = np.array(self.joint_lower), np.array(self.joint_upper)
        lower[prismatic] *= s
        upper[prismatic] *= s
        return self.replace(joint_origin=origins, link_inertial_origin=inertial,
                            link_com=np.array(self.link_com) * s, joint_lower=lower, joint_upper=upper)

    def summary(self) -> str:
        """A human-readable description: the tree, joints with limits, issues."""
        lines = [f"robot {self.name!r} from {self.source}",
                 f"  links: {self.nlinks}, joints: {len(self.joint_all_names)}, dof: {self.dof}, "
                 f"total mass: {self.total_mass:.6g} kg"]
        children: dict[int, list[int]] = {}
        for k in range(1, self.nlinks):
            children.setdefault(int(self.link_parent[k]), []).append(k)

        def walk(k: int, depth: int) -> None:
            pad = "  " * depth
            if k == 0:
                lines.append(f"  {self.link_names[0]}  (root, {self.link_mass[0]:.4g} kg)")
            else:
                j = k - 1
                t = self.joint_type[j]
                lim = ""
                if t in ("revolute", "prismatic"):
                    lim = f" [{self.joint_lower[j]:.4g}, {self.joint_upper[j]:.4g}]"
                ax = "" if t == "fixed" else " axis " + np.array2string(self.joint_axis[j], precision=3)
                lines.append(f"  {pad}-- {self.joint_all_names[j]} ({t}{lim}{ax}) --> "
                             f"{self.link_names[k]}  ({self.link_mass[k]:.4g} kg)")
            for c in children.get(k, []):
                walk(c, depth + 1)

        walk(0, 0)
        lines.append("  movable joints (q order):")
        for i, j in enumerate(self.movable):
            lines.append(f"    {i:2d} {self.joint_all_names[j]:<28s} {self.joint_type[j]:<10s} "
                         f"lower {self.joint_lower[j]: .4g}  upper {self.joint_upper[j]: .4g}  "
                         f"effort {self.joint_effort[j]:.4g}  velocity {self.joint_velocity[j]:.4g}")
        lines.append(f"  issues: {len(self.issues) or 'none'}")
        lines.extend(f"    - {issue}" for issue in self.issues)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"RobotModel({self.name!r}, links={self.nlinks}, dof={self.dof}, source={self.source!r})"


def as_joint_array(model: RobotModel, value: Any, name: str = "q") -> np.ndarray:
    """Validate an array of joint values: shape (..., dof), finite floats.

    A mapping from joint name to value is accepted too (every movable joint must be named).
    """
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in model.joint_names]
        if unknown:
            model.joint_index(unknown[0])  # raises with close matches
        missing = [n for n in model.joint_names if n not in value]
        if missing:
            raise ShapeError(f"{name} is missing joints {missing}; expected every joint of "
                             f"{list(model.joint_names)}")
        value = [value[n] for n in model.joint_names]
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name} must be numbers, got {value!r} ({exc})") from None
    if arr.ndim == 0 or arr.shape[-1] != model.dof:
        raise ShapeError(
            f"{name} has shape {arr.shape}; expected (..., {model.dof}) with joints in order "
            f"{list(model.joint_names)}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ShapeError(f"{name} holds a non-finite value {arr[tuple(bad)]} at index "
                         f"{tuple(int(i) for i in bad)} (joint {model.joint_all_names[model.dof_joint[bad[-1]]]!r})")
    return arr


# ---------------------------------------------------------------------- parsing
def _parse_xml(xml: str | bytes, source: str, issues: list[ModelIssue]) -> Any:
    """Strict XML parsing, with the two liberties PyBullet's tinyxml takes (recorded as issues):
    XML declarations anywhere or with a bad version are ignored, and text after the
    closing ``</robot>`` is dropped."""
    from lxml import etree

    text = xml.decode("utf-8", errors="replace") if isinstance(xml, bytes) else xml
    text, ndecl = re.subn(r"<\?xml[^>]*\?>", "", text)
    end = text.find("</robot>")
    if end >= 0 and text[end + 8:].strip():
        issues.append(ModelIssue("trailing_content", "robot", "text after </robot> is ignored "
                                 "(as PyBullet does)", {"chars": len(text[end + 8:].strip())}))
        text = text[:end + 8]
    try:
        root = etree.fromstring(text.encode(), parser=etree.XMLParser(remove_blank_text=True))
    except etree.XMLSyntaxError as exc:
        raise URDFError(f"{source}: malformed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"{source}: the root element is <{root.tag}>, expected <robot>")
    # geometry is PyBullet's business: yourdfpy needs neither meshes nor shapes here
    for link in root.findall("link"):
        for geom in link.findall("visual") + link.findall("collision"):
            link.remove(geom)
    return root


_FLOATS = {"origin": {"xyz": 3, "rpy": 3}, "axis": {"xyz": 3}, "mass": {"value": 1},
           "inertia": {a: 1 for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
           "limit": {a: 1 for a in ("lower", "upper", "effort", "velocity")},
           "dynamics": {"damping": 1, "friction": 1}}


_NUMBER_PREFIX = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _check_numbers(el: Any, owner: str, source: str, issues: list[ModelIssue]) -> None:
    """Every numeric attribute must hold enough finite numbers. Like PyBullet's parser we
    read the leading number of a sloppy token (``"0.07,"``, ``"-1.57."``) and only the first
    ``count`` tokens; each such liberty is recorded in ``issues``."""
    for child in el.iter(*_FLOATS):
        for attr, count in _FLOATS[child.tag].items():
            text = child.get(attr)
            if text is None:
                continue
            tokens = text.split()
            matches = [_NUMBER_PREFIX.match(t) for t in tokens[:count]]
            if len(tokens) < count or not all(matches) or not all(
                    math.isfinite(float(m.group())) for m in matches):
                raise URDFError(f"{source}: {owner} <{child.tag} {attr}={text!r}>: expected "
                                f"{count} finite number{'s' if count > 1 else ''}")
            numbers = [m.group() for m in matches]
            if numbers != tokens:
                child.set(attr, " ".join(numbers))
                issues.append(ModelIssue("sloppy_number", owner, f"<{child.tag} {attr}={text!r}> read "
                                         f"as {' '.join(numbers)!r}, as PyBullet reads it",
                                         {"attribute": attr, "value": text, "read": numbers}))


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


def _validate_tree(root: Any, source: str, issues: list[ModelIssue]) -> None:
    """Checks whose failure would otherwise surface as a KeyError inside the parser."""
    links: set[str] = set()
    for name, el in _named(root, "link", source):
        links.add(name)
        _check_numbers(el, f"link {name!r}", source, issues)
    if not links:
        raise URDFError(f"{source}: the robot has no <link>")
    child_of: dict[str, str] = {}
    for name, el in _named(root, "joint", source):
        jtype = el.get("type")
        if jtype not in _KNOWN_TYPES:
            raise URDFError(f"{source}: joint {name!r} has type {jtype!r}; expected one of "
                            f"{sorted(_KNOWN_TYPES)}")
        for tag in ("parent", "child"):
            sub = el.find(tag)
            if sub is None or not sub.get("link"):
                raise URDFError(f"{source}: joint {name!r} has no <{tag} link=...>")
            if sub.get("link") not in links:
                err = UnknownNameError("link", sub.get("link"), links)
                raise URDFError(f"{source}: joint {name!r} <{tag}>: {err}") from None
        child = el.find("child").get("link")
        if child in child_of:
            raise URDFError(f"{source}: link {child!r} is the child of two joints, "
                            f"{child_of[child]!r} and {name!r} (a URDF must be a tree)")
        child_of[child] = name
        _check_numbers(el, f"joint {name!r}", source, issues)


def _build(xml: str | bytes, source: str) -> RobotModel:
    import yourdfpy

    issues: list[ModelIssue] = []
    root = _parse_xml(xml, source, issues)
    _validate_tree(root, source, issues)
    from lxml import etree

    try:
        urdf = yourdfpy.URDF.load(io.BytesIO(etree.tostring(root)), build_scene_graph=False,
                                  load_meshes=False, load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises many kinds; name the file
        raise URDFError(f"{source}: yourdfpy could not read the URDF: {exc}") from None
    robot = urdf.robot
    links = {l.name: l for l in robot.links}
    children: dict[str, list[Any]] = {name: [] for name in links}
    parent_joint: dict[str, Any] = {}
    for j in robot.joints:
        children[j.parent].append(j)
        parent_joint[j.child] = j
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        if not roots:
            raise URDFError(f"{source}: every link has a parent joint, so the joints form a "
                            f"cycle; a URDF needs exactly one root link")
        raise URDFError(f"{source}: {len(roots)} root links {roots}; a URDF needs exactly one "
                        f"(connect them with joints)")
    order: list[str] = []
    stack = [roots[0]]
    while stack:  # depth first, children in file order (PyBullet's numbering)
        name = stack.pop()
        order.append(name)
        kids = children[name]
        stack.extend(j.child for j in reversed(kids))
    if len(order) != len(links):
        lost = sorted(set(links) - set(order))
        raise URDFError(f"{source}: links {lost} are not reachable from the root "
                        f"{roots[0]!r}: their joints form a cycle")
    index = {name: k for k, name in enumerate(order)}
    joint_of = [parent_joint[name] for name in order[1:]]

    nl, nj = len(order), len(joint_of)
    parent = np.array([-1] + [index[j.parent] for j in joint_of], dtype=int)
    mass, com = np.zeros(nl), np.zeros((nl, 3))
    inertia, inertial_origin = np.zeros((nl, 3, 3)), np.tile(np.eye(4), (nl, 1, 1))
    has_inertial = np.zeros(nl, dtype=bool)
    for k, name in enumerate(order):
        inertial = links[name].inertial
        where = f"link {name!r}"
        if inertial is None:
            if k > 0:  # a fixed root's inertia never matters
                issues.append(ModelIssue("missing_inertial", where,
                                         "no <inertial>: massless here; PyBullet gives it 1 kg and "
                                         "unit inertia" + (" (PyBullet ignores it for a link named "
                                                           "'world')" if name == "world" else ""),
                                         {"link": name}))
            continue
        has_inertial[k] = True
        T = inertial.origin if inertial.origin is not None else np.eye(4)
        inertial_origin[k] = T
        m = float(inertial.mass) if inertial.mass is not None else 0.0
        Ic = np.asarray(inertial.inertia, dtype=float) if inertial.inertia is not None else np.zeros((3, 3))
        R = T[:3, :3]
        mass[k], com[k], inertia[k] = m, T[:3, 3], R @ Ic @ R.T
        if m <= 0:
            issues.append(ModelIssue("nonpositive_mass", where, f"mass {m:g} kg", {"link": name, "mass": m}))
        if k == 0 and not np.allclose(R, np.eye(3)):
            rpy = _rpy_of(R)
            issues.append(ModelIssue("root_inertial_rotation", where,
                                     f"root <inertial><origin rpy={rpy}>: PyBullet tilts gravity by "
                                     f"this rotation in inverse dynamics", {"link": name, "rpy": rpy}))
        principal = np.linalg.eigvalsh(0.5 * (Ic + Ic.T))
        if m > 0 and principal[0] <= 0:
            issues.append(ModelIssue("inertia_not_positive_definite", where,
                                     f"principal moments {principal.tolist()}",
                                     {"link": name, "principal": principal.tolist()}))
        a, b, c = principal
        if np.any(principal != 0) and c > TRIANGLE_TOLERANCE * (a + b):
            issues.append(ModelIssue("inertia_triangle_inequality", where,
                                     f"principal moments {principal.tolist()}: {c:.6g} > {a:.6g} + "
                                     f"{b:.6g}; PyBullet zeroes this link's rotational inertia",
                                     {"link": name, "principal": principal.tolist()}))

    types, codes, origins, axes = [], [], np.zeros((nj, 4, 4)), np.zeros((nj, 3))
    limits = np.zeros((4, nj))
    damping, friction = np.zeros(nj), np.zeros(nj)
    mimic: list[Mimic | None] = []
    v_index = np.full(nj, -1, dtype=int)
    nv = 0
    for j, jt in enumerate(joint_of):
        where = f"joint {jt.name!r}"
        if jt.type in ("floating", "planar"):
            raise URDFError(f"{source}: {where} has type {jt.type!r}, which simbench does not "
                            f"support yet (PyBullet turns it into a fixed joint)")
        types.append(jt.type)
        code = _TYPE_CODES[jt.type]
        codes.append(code)
        origins[j] = jt.origin if jt.origin is not None else np.eye(4)
        axis = np.asarray(jt.axis if jt.axis is not None else [1.0, 0, 0], dtype=float)
        norm = float(np.linalg.norm(axis))
        if code in (REVOLUTE, PRISMATIC):
            if norm == 0:
                raise URDFError(f"{source}: {where} <axis xyz={axis.tolist()}>: a zero axis")
            if abs(norm - 1) > 1e-9:
                issues.append(ModelIssue("axis_not_unit", where, f"axis {axis.tolist()} has length "
                                         f"{norm:.6g}; normalised", {"joint": jt.name, "axis": axis.tolist()}))
        axes[j] = axis / norm if norm > 0 else axis
        lim = jt.limit
        lo, hi, eff, vel = (getattr(lim, a, None) if lim is not None else None
                            for a in ("lower", "upper", "effort", "velocity"))
        if jt.type == "continuous":
            lo, hi = None, None
        elif jt.type in ("revolute", "prismatic") and (lo is None or hi is None):
            if lim is None:
                issues.append(ModelIssue("missing_limit", where, "no <limit>: treated as unlimited",
                                         {"joint": jt.name}))
        limits[:, j] = [-math.inf if lo is None else lo, math.inf if hi is None else hi,
                        math.inf if eff is None else eff, math.inf if vel is None else vel]
        dyn = jt.dynamics
        damping[j] = float(dyn.damping) if dyn is not None and dyn.damping is not None else 0.0
        friction[j] = float(dyn.friction) if dyn is not None and dyn.friction is not None else 0.0
        mm = None
        if jt.mimic is not None:
            mm = Mimic(jt.mimic.joint, float(jt.mimic.multiplier), float(jt.mimic.offset))
            issues.append(ModelIssue("mimic_joint", where, f"mimics {mm.joint!r} (x{mm.multiplier:g} "
                                     f"+ {mm.offset:g}); PyBullet and simbench treat it as an "
                                     f"independent joint", {"joint": jt.name, "mimic": mm.joint}))
        mimic.append(mm)
        if _NV[code]:
            v_index[j] = nv
            nv += _NV[code]

    return RobotModel(
        name=robot.name, source=source, link_names=tuple(order),
        link_parent=_frozen(parent, int), link_mass=_frozen(mass), link_com=_frozen(com),
        link_inertia=_frozen(inertia), link_inertial_origin=_frozen(inertial_origin),
        link_has_inertial=_frozen(has_inertial, bool),
        joint_all_names=tuple(j.name for j in joint_of), joint_type=tuple(types),
        joint_type_code=_frozen(codes, int), joint_origin=_frozen(origins),
        joint_axis=_frozen(axes), joint_lower=_frozen(limits[0]), joint_upper=_frozen(limits[1]),
        joint_effort=_frozen(limits[2]), joint_velocity=_frozen(limits[3]),
        joint_damping=_frozen(damping), joint_friction=_frozen(friction),
        joint_mimic=tuple(mimic), joint_v_index=_frozen(v_index, int), issues=tuple(issues))


def _rpy_of(R: np.ndarray) -> list[float]:
    """Roll-pitch-yaw (URDF convention, R = Rz(y) Ry(p) Rx(r))."""
    pitch = math.asin(-max(-1.0, min(1.0, R[2, 0])))
    roll = math.atan2(R[2, 1], R[2, 2])
    yaw = math.atan2(R[1, 0], R[0, 0])
    return [roll, pitch, yaw]


def load(path: str | os.PathLike) -> RobotModel:
    """Shorthand for :meth:`RobotModel.from_urdf`."""
    return RobotModel.from_urdf(path)


__all__ = ["RobotModel", "ModelIssue", "Mimic", "spatial_inertia", "as_joint_array", "load",
           "FIXED", "REVOLUTE", "PRISMATIC", "SPHERICAL"]
