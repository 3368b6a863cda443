"""URDF -> :class:`~simbench.model.RobotModel`: the only module that parses URDF (with yourdfpy).

It takes the tree that :func:`simbench.urdf_source.load_source` read and checked (xacro
expanded, meshes resolved), drops the geometry (PyBullet's business), checks every number, and
numbers links and joints the way PyBullet does for the same file (see :mod:`simbench.model`).
"""
from __future__ import annotations

import io
import math
import signal
import sys
import threading
from typing import Any

import numpy as np

from .errors import URDFError, closest, in_degrees, shown
from .issues import ModelIssue
from .joint_space import _TYPE_CODES, PRISMATIC, REVOLUTE, velocity_starts
from .joint_space import frozen as _frozen
from .model import GRAVITY, TRIANGLE_TOLERANCE, Mimic, RobotModel
from .model_checks import free_root_issues
from .urdf_checks import _NUMBER_PREFIX  # C's atof reading, as for geometry


def _strip_geometry(root: Any) -> Any:
    """Geometry is PyBullet's business (checked by :mod:`simbench.urdf_source`): yourdfpy
    needs neither meshes nor shapes here."""
    for link in root.findall("link"):
        for geom in link.findall("visual") + link.findall("collision"):
            link.remove(geom)
    return root


#: what PyBullet 3.2 makes of a zero <axis>, by joint code (loadURDF, getLinkState and
#: calculateInverseDynamics on such a file)
_ZERO_AXIS_IN_PYBULLET = {PRISMATIC: "the joint never moves its link",
                          REVOLUTE: "puts the link at NaN (its inverse dynamics fail)"}
_FLOATS = {"origin": {"xyz": 3, "rpy": 3}, "axis": {"xyz": 3}, "mass": {"value": 1},
           "inertia": {a: 1 for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
           "limit": {a: 1 for a in ("lower", "upper", "effort", "velocity")},
           "dynamics": {"damping": 1, "friction": 1}}


#: what marks xacro left unexpanded in a number: ``$(arg x)``, ``$(optenv X 0 0 1)``, ``${pi/2}``
_XACRO_MARKS = ("$(", "${")
#: how to expand a file (``unexpanded_xacro`` and its errors)
_XACRO_FIX = ("expand the file with xacro (simbench loads a .xacro file itself: pip install "
              "'simbench[xacro]')")


def _atof(text: str) -> float:
    """C's ``atof``: the leading number after blanks, 0 when there is none."""
    match = _NUMBER_PREFIX.match(text.lstrip())
    return float(match.group()) if match else 0.0


def _pybullet_reading(text: str, count: int) -> list[float] | None:
    """The numbers PyBullet 3.2 reads from an attribute (UrdfParser.cpp, measured by
    ``tests/test_urdf_xacro_leftovers.py``): a scalar is ``atof`` of the text; a vector is split
    at spaces and each piece read by ``atof``, the first 3 kept. None when a vector has fewer
    than 3 pieces ("Couldn't parse vector3": an ``<origin>`` keeps 0 0 0, an ``<axis>`` makes
    PyBullet refuse the file)."""
    if count == 1:
        return [_atof(text)]
    pieces = [piece for piece in text.split(" ") if piece]
    return [_atof(piece) for piece in pieces[:count]] if len(pieces) >= count else None


def _unexpanded_xacro(child: Any, attr: str, text: str, count: int, owner: str, source: str,
                      issues: list[ModelIssue]) -> None:
    """Read a number holding unexpanded xacro as PyBullet does, and record it (an
    ``<axis>`` PyBullet cannot read is an error: PyBullet refuses the file)."""
    read = _pybullet_reading(text, count)
    where = f"<{child.tag} {attr}={shown(text)}>"
    if read is None and child.tag == "axis":
        raise URDFError(f"{source}: {owner} {where}: unexpanded xacro; expected 3 numbers, got "
                        f"{len(text.split())} space-separated pieces and PyBullet refuses the file "
                        f"(\"Malformed axis element\"); {_XACRO_FIX}")
    how = "fewer than 3 pieces: PyBullet keeps" if read is None else "PyBullet reads"
    read = read or [0.0] * count
    if not all(math.isfinite(x) for x in read):
        raise URDFError(f"{source}: {owner} {where}: expected {count} finite number"
                        f"{'s' if count > 1 else ''}; {_XACRO_FIX}")
    numbers = " ".join(f"{x:.17g}" for x in read)
    child.set(attr, numbers)
    shown_numbers = " ".join(f"{x:g}" for x in read)
    issues.append(ModelIssue("unexpanded_xacro", owner, f"{where}: unexpanded xacro; {how} "
                             f"{shown_numbers} (C's atof of each piece), and so does simbench; "
                             f"{_XACRO_FIX}",
                             {"tag": child.tag, "attribute": attr, "value": text, "read": read}))


def _check_numbers(el: Any, owner: str, source: str, issues: list[ModelIssue]) -> None:
    """Every numeric attribute must hold enough finite numbers. Like PyBullet's parser we
    read the leading number of a sloppy token (``"0.07,"``, ``"-1.57."``) and only the first
    ``count`` tokens; each such liberty is recorded in ``issues``. A number holding unexpanded
    xacro (``$(...)``, ``${...}``) is read exactly as PyBullet reads it (see
    :func:`_pybullet_reading`) and recorded as ``unexpanded_xacro``."""
    for child in el.iter(*_FLOATS):
        for attr, count in _FLOATS[child.tag].items():
            text = child.get(attr)
            if text is None:
                continue
            if any(mark in text for mark in _XACRO_MARKS):
                _unexpanded_xacro(child, attr, text, count, owner, source, issues)
                continue
            tokens = text.split()
            matches = [_NUMBER_PREFIX.match(t) for t in tokens[:count]]
            if len(tokens) < count or not all(matches) or not all(
                    math.isfinite(float(m.group())) for m in matches):
                raise URDFError(f"{source}: {owner} <{child.tag} {attr}={shown(text)}>: expected "
                                f"{count} finite number{'s' if count > 1 else ''}")
            numbers = [m.group() for m in matches]
            if numbers != tokens:
                child.set(attr, " ".join(numbers))
                issues.append(ModelIssue("sloppy_number", owner, f"<{child.tag} {attr}={shown(text)}> read "
                                         f"as {shown(' '.join(numbers))}, as PyBullet reads it",
                                         {"attribute": attr, "value": text, "read": numbers}))


def _validate_tree(root: Any, source: str, issues: list[ModelIssue]) -> None:
    """Every numeric attribute (the tree itself is checked by
    :func:`simbench.urdf_checks.check_tree` when the file is read)."""
    for tag in ("link", "joint"):
        for el in root.findall(tag):
            _check_numbers(el, f"{tag} {el.get('name')!r}", source, issues)


def _import_yourdfpy() -> Any:
    """yourdfpy, imported with Ctrl-C (and SIGTERM) held back until the import is done.

    yourdfpy imports trimesh, which wraps its optional imports in ``except BaseException`` (54
    of its modules), so a ``KeyboardInterrupt`` raised during the 0.6-1.4 s import was swallowed
    and the command ran on: ``simbench check --corpus`` interrupted 0.7 s after its start
    finished with exit status 0 (a user walkthrough). In the main thread the signals' handlers
    are replaced for the import by one that only records; the first recorded signal then goes
    to the handler it was meant for."""
    if "yourdfpy" in sys.modules or threading.current_thread() is not threading.main_thread():
        import yourdfpy

        return yourdfpy
    held: list[tuple[int, Any]] = []

    def hold(signum: int, frame: Any) -> None:
        held.append((signum, frame))

    olds = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        if callable(signal.getsignal(sig)):   # a Python handler (SIG_DFL / SIG_IGN stay as they are)
            olds[sig] = signal.signal(sig, hold)
    try:
        import yourdfpy
    finally:
        for sig, old in olds.items():
            signal.signal(sig, old)
    for signum, frame in held[:1]:
        olds[signum](signum, frame)           # e.g. raises KeyboardInterrupt, now in our code
    return yourdfpy


def build(root: Any, source: str, issues: list[ModelIssue]) -> RobotModel:
    """The model from a parsed URDF tree (changed here: geometry removed, numbers cleaned)."""
    yourdfpy = _import_yourdfpy()

    _strip_geometry(root)
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
    root, root_pose = _floating_root(roots[0], links, children, parent_joint, issues)
    order: list[str] = []
    stack = [root]
    while stack:  # depth first, children in file order (PyBullet's numbering)
        name = stack.pop()
        order.append(name)
        kids = children[name]
        stack.extend(j.child for j in reversed(kids))
    if len(order) != len(links):
        lost = sorted(set(links) - set(order))
        raise URDFError(f"{source}: links {lost} are not reachable from the root "
                        f"{root!r}: their joints form a cycle")
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
        if m > 0 and principal[0] < -1e-9 * np.abs(principal).max():   # a point mass (zeros) is fine
            issues.append(ModelIssue("inertia_not_positive_definite", where,
                                     f"principal moments {principal.tolist()}",
                                     {"link": name, "principal": principal.tolist()}))
        if breaks_triangle(Ic):
            a, b, c = principal
            issues.append(ModelIssue("inertia_triangle_inequality", where,
                                     f"principal moments {principal.tolist()}: {c:.6g} > {a:.6g} + "
                                     f"{b:.6g}; PyBullet zeroes this link's rotational inertia",
                                     {"link": name, "principal": principal.tolist()}))

    types, codes, origins, axes = [], [], np.zeros((nj, 4, 4)), np.zeros((nj, 3))
    limits = np.zeros((4, nj))
    damping, friction = np.zeros(nj), np.zeros(nj)
    mimic: list[Mimic | None] = []
    for j, jt in enumerate(joint_of):
        where = f"joint {jt.name!r}"
        if jt.type in ("floating", "planar"):
            raise URDFError(_unsupported_joint(source, where, jt, order[0], links, children))
        types.append(jt.type)
        code = _TYPE_CODES[jt.type]
        codes.append(code)
        origins[j] = jt.origin if jt.origin is not None else np.eye(4)
        axis = np.asarray(jt.axis if jt.axis is not None else [1.0, 0, 0], dtype=float)
        norm = float(np.linalg.norm(axis))
        if code in (REVOLUTE, PRISMATIC):
            if norm == 0:
                xyz = " ".join(f"{v:g}" for v in axis)
                leftover = [i.data["value"] for i in issues if i.kind == "unexpanded_xacro" and
                            i.element == where and i.data["tag"] == "axis"]
                text, fix = f"\"{xyz}\"", ""
                if leftover:   # e.g. $(optenv AXIS 0 0 1), which PyBullet reads as 0 0 0
                    text = f"{shown(leftover[0])}"
                    fix = f"; unexpanded xacro, read as {xyz} as PyBullet reads it: {_XACRO_FIX}"
                raise URDFError(f"{source}: {where} <axis xyz={text}/>: a zero axis; expected a "
                                f"non-zero direction, e.g. <axis xyz=\"0 0 1\"/> (URDF's default, "
                                f"without <axis>, is 1 0 0); PyBullet loads it without a warning and "
                                f"{_ZERO_AXIS_IN_PYBULLET[code]}{fix}")
            if abs(norm - 1) > 1e-9:
                issues.append(ModelIssue("axis_not_unit", where, f"axis {axis.tolist()} has length "
                                         f"{norm:.6g}; normalised", {"joint": jt.name, "axis": axis.tolist()}))
        axes[j] = axis / norm if norm > 0 else axis
        lim = jt.limit
        lo, hi, eff, vel = (getattr(lim, a, None) if lim is not None else None
                            for a in ("lower", "upper", "effort", "velocity"))
        if jt.type == "continuous":
            lo, hi = None, None
        _limit_issues(jt, lo, hi, where, issues)
        limits[:, j] = [-math.inf if lo is None else lo, math.inf if hi is None else hi,
                        math.inf if eff is None else eff, math.inf if vel is None else vel]
        dyn = jt.dynamics
        damping[j] = float(dyn.damping) if dyn is not None and dyn.damping is not None else 0.0
        friction[j] = float(dyn.friction) if dyn is not None and dyn.friction is not None else 0.0
        mm = None
        if jt.mimic is not None:
            mm = Mimic(jt.mimic.joint, float(jt.mimic.multiplier), float(jt.mimic.offset))
            names = [x.name for x in joint_of]
            near = closest(mm.joint, names, n=1)
            missing = "" if mm.joint in names else (
                f" (a joint the file does not have{f'; did you mean {near[0]!r}?' if near else ''})")
            issues.append(ModelIssue("mimic_joint", where, f"mimics {mm.joint!r}{missing} (x{mm.multiplier:g} "
                                     f"+ {mm.offset:g}); PyBullet and simbench treat it as an "
                                     f"independent joint", {"joint": jt.name, "mimic": mm.joint}))
        mimic.append(mm)

    model = RobotModel(
        name=robot.name, source=source, link_names=tuple(order),
        link_parent=_frozen(parent, int), link_mass=_frozen(mass), link_com=_frozen(com),
        link_inertia=_frozen(inertia), link_inertial_origin=_frozen(inertial_origin),
        link_has_inertial=_frozen(has_inertial, bool),
        joint_all_names=tuple(j.name for j in joint_of), joint_type=tuple(types),
        joint_type_code=_frozen(codes, int), joint_origin=_frozen(origins),
        joint_axis=_frozen(axes), joint_lower=_frozen(limits[0]), joint_upper=_frozen(limits[1]),
        joint_effort=_frozen(limits[2]), joint_velocity=_frozen(limits[3]),
        joint_damping=_frozen(damping), joint_friction=_frozen(friction),
        joint_mimic=tuple(mimic), joint_v_index=_frozen(velocity_starts(codes), int), issues=tuple(issues),
        root_pose=None if root_pose is None else _frozen(root_pose),
        gravity=GRAVITY if root_pose is None else tuple(float(g) for g in root_pose[:3, :3].T @ GRAVITY))
    return model.replace(issues=model.issues + free_root_issues(model))


def _mass(link: Any) -> float:
    """A link's ``<inertial><mass>`` in kg, 0 without one."""
    inertial = link.inertial
    return float(inertial.mass or 0) if inertial is not None else 0.0


def _floating_root(root: str, links: dict[str, Any], children: dict[str, list[Any]],
                   parent_joint: dict[str, Any], issues: list[ModelIssue]) -> tuple[str, np.ndarray | None]:
    """The root of the model, and the world pose of a welded root (None: the origin).

    A massless root link (ROS's ``world``) whose one joint is ``<joint type="floating">`` is
    dropped with that joint (removed from ``links``, ``children``, ``parent_joint``): the joint's
    child is the root, welded where the joint's ``<origin>`` puts it, as PyBullet welds it
    (measured: PyBullet loads the file with that root as its base, massless and static, and the
    floating joint as a fixed joint), and with ``floating_base=True`` the joint is the free-flyer
    (``tests/test_urdf_floating_joint.py``)."""
    kids = children[root]
    if len(kids) != 1 or kids[0].type != "floating":
        return root, None
    if _mass(links[root]) != 0:
        return root, None   # PyBullet moves a root with mass: the floating joint is an error
    jt = kids[0]
    T = np.asarray(jt.origin, dtype=float) if jt.origin is not None else np.eye(4)
    del links[root], children[root], parent_joint[jt.child]
    at = "" if np.array_equal(T, np.eye(4)) else (
        f" at its <origin> (xyz {' '.join(f'{x:g}' for x in T[:3, 3])}, rpy "
        f"{' '.join(f'{x + 0.0:g}' for x in _rpy_of(T[:3, :3]))})")
    issues.append(ModelIssue(
        "floating_root_joint", f"joint {jt.name!r}",
        f"a floating joint from the massless root link {root!r} to {jt.child!r}: simbench drops "
        f"both, so {jt.child!r} is the root; with floating_base=True (simbench info --floating) "
        f"the joint is the free-flyer, else {jt.child!r} is welded to the world{at}, as in PyBullet "
        f"(which keeps {root!r} as its base link and makes the joint fixed, so its link indices "
        f"are one more than simbench's)",
        {"joint": jt.name, "world": root, "root": jt.child, "origin": T.tolist()}))
    return jt.child, None if np.array_equal(T, np.eye(4)) else T


def _unsupported_joint(source: str, where: str, jt: Any, root: str, links: dict[str, Any],
                       children: dict[str, list[Any]]) -> str:
    """The error for a floating or planar joint inside the tree (a floating joint that is the
    one joint of a massless root is read by :func:`_floating_root`): what makes it unreadable."""
    head = (f"{source}: {where} has type {jt.type!r}, which simbench does not model there (PyBullet "
            f"turns it into a fixed joint); ")
    if jt.type != "floating":
        return head + "replace it by two prismatic joints and a revolute joint through massless links"
    if jt.parent != root:
        why = f"its parent link {jt.parent!r} is not the root link {root!r}"
    elif _mass(links[root]) != 0:
        why = f"the root link {root!r} has mass {_mass(links[root]):g} kg (PyBullet moves it with the robot)"
    else:
        others = [k.name for k in children[root] if k is not jt]
        why = f"the root link {root!r} also has joint{'s' if len(others) > 1 else ''} {others}"
    return (head + f"simbench reads a floating joint only as the one joint of a massless root link "
            f"(ROS's world link), which it then drops, but {why}; expected e.g. <link name=\"world\"/> "
            f"with this joint alone, or neither (RobotModel.from_urdf(path, floating_base=True) "
            f"floats the robot's root)")


def _limit_issues(jt: Any, lo: float | None, hi: float | None, where: str,
                  issues: list[ModelIssue]) -> None:
    """Reversed limits, and revolute limits beyond a turn, likely degrees (a missing
    ``<limit>`` is found by :mod:`simbench.urdf_source`)."""
    if jt.type in ("revolute", "prismatic") and lo is not None and hi is not None and lo > hi:
        issues.append(ModelIssue("reversed_limits", where, f"lower limit {lo:g} > upper limit {hi:g}; "
                                 "PyBullet treats the joint as unlimited (swap them?)",
                                 {"joint": jt.name, "lower": lo, "upper": hi}))
    elif jt.type == "revolute" and lo is not None and hi is not None and \
            max(abs(lo), abs(hi)) > 2 * math.pi * (1 + 1e-4):
        far = hi if abs(hi) >= abs(lo) else lo
        issues.append(ModelIssue("limit_beyond_a_turn", where, f"limits [{lo:g}, {hi:g}] rad: more than "
                                 f"a turn; degrees? ({in_degrees(far)})",
                                 {"joint": jt.name, "lower": lo, "upper": hi}))


def _rpy_of(R: np.ndarray) -> list[float]:
    """Roll-pitch-yaw (URDF convention, R = Rz(y) Ry(p) Rx(r))."""
    pitch = math.asin(-max(-1.0, min(1.0, R[2, 0])))
    roll = math.atan2(R[2, 1], R[2, 2])
    yaw = math.atan2(R[1, 0], R[0, 0])
    return [roll, pitch, yaw]


__all__ = ["build"]


def breaks_triangle(inertia: np.ndarray) -> bool:
    """True when PyBullet zeroes this rotational inertia (about the COM, any axes): its principal
    moments ``a <= b <= c`` are not all zero and ``c > TRIANGLE_TOLERANCE (a + b)``."""
    principal = np.linalg.eigvalsh(0.5 * (inertia + np.asarray(inertia).T))
    a, b, c = principal
    return bool(np.any(principal != 0) and c > TRIANGLE_TOLERANCE * (a + b))
