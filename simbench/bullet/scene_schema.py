"""The scene file's schema: every key with its type, range and meaning, checked strictly.

Booleans must be TOML booleans (``fixed_base = "no"`` is an error, not True), numbers must be
numbers (booleans are not), vectors have their length, ``scale > 0``, and an unknown key gets
the closest valid one suggested. Adding a key is one :class:`Key` line in :data:`SCENE_KEYS` or
:data:`BODY_KEYS`; the docs' table of scene keys is generated from them.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SceneError, closest, shown

INT32 = (-2 ** 31, 2 ** 31 - 1)


@dataclass(frozen=True)
class Key:
    """One key: ``kind`` is ``bool``, ``int``, ``float``, ``str``, ``vector``, ``table`` (of
    ``item`` values) or ``tables`` (an array of tables); ``lengths`` for vectors."""

    name: str
    kind: str
    doc: str
    required: bool = False
    lengths: tuple[int, ...] = ()
    low: float | None = None          # inclusive unless low_open
    low_open: bool = False
    high: float | None = None
    item: str = "float"               # kind of a table's values
    example: str = ""

    def expected(self) -> str:
        """What the key holds, in words (used in error messages and the docs)."""
        if self.kind == "bool":
            return "a TOML boolean (true or false)"
        if self.kind == "str":
            return "a non-empty string"
        if self.kind == "vector":
            return " or ".join(f"{n} finite numbers" for n in self.lengths)
        if self.kind == "tables":
            return "an array of tables ([[...]])"
        if self.kind == "table":
            return f"a table of name = {_ITEM_WORDS[self.item]}"
        words = "an integer" if self.kind == "int" else "a finite number"
        def num(x: float) -> str:   # an integer bound whole: 2147483647, not 2.14748e+09
            return f"{int(x):d}" if self.kind == "int" else f"{x:g}"

        if self.low is not None and self.high is not None:
            return f"{words} from {num(self.low)} to {num(self.high)}"
        if self.low is not None:
            return f"{words} {'>' if self.low_open else '>='} {num(self.low)}"
        return words


_ITEM_WORDS = {"float": "number", "str": "string", "scalar": "string, number or boolean"}

SCENE_KEYS: dict[str, Key] = {k.name: k for k in (
    Key("gravity", "vector", "gravity in the world frame, m/s^2 (default 0 0 -9.81)", lengths=(3,),
        example="[0, 0, -9.81]"),
    Key("robot", "str", "the body that joint configurations refer to (default: a body named "
        "'robot', else the first with movable joints)", example='"robot"'),
    Key("body", "tables", "the bodies, one [[body]] table each (keys below)", required=True),
    Key("package_map", "table", "where ROS packages are, for package://NAME/... meshes: "
        "NAME = folder (relative to the scene file)", item="str",
        example='{ my_robot_description = "../src/my_robot_description" }'),
)}

BODY_KEYS: dict[str, Key] = {k.name: k for k in (
    Key("name", "str", "the body's name (unique in the scene; no '/' or ':')", required=True, example='"robot"'),
    Key("urdf", "str", "a URDF or xacro file: a path relative to the scene file, "
        "pybullet_data:NAME or simbench:NAME", required=True,
        example='"pybullet_data:kuka_iiwa/model.urdf"'),
    Key("position", "vector", "base position, m (default 0 0 0)", lengths=(3,), example="[0, 0, 0]"),
    Key("orientation", "vector", "base orientation: roll pitch yaw (rad) or a quaternion x y z w "
        "(default upright)", lengths=(3, 4), example="[0, 0, 1.5708]"),
    Key("fixed_base", "bool", "fix the base to the world (default false)", example="true"),
    Key("self_collision", "bool", "contacts between the body's own links "
        "(URDF_USE_SELF_COLLISION; default false)", example="false"),
    Key("scale", "float", "PyBullet's globalScaling (default 1)", low=0.0, low_open=True, example="1.0"),
    Key("joints", "table", "initial joint positions by joint name (rad or m)",
        example="{ lbr_iiwa_joint_2 = 0.5 }"),
    Key("collision_group", "int", "PyBullet collision filter group bits (default: PyBullet's)",
        low=INT32[0], high=INT32[1], example="1"),
    Key("collision_mask", "int", "PyBullet collision filter mask bits (default: PyBullet's)",
        low=INT32[0], high=INT32[1], example="-1"),
    Key("xacro_args", "table", "arguments of a xacro file: name = value", item="scalar",
        example='{ prefix = "left_" }'),
)}


def check_keys(data: Any, keys: Mapping[str, Key], where: str, what: str) -> Mapping[str, Any]:
    """``data`` must be a table holding only ``keys`` (an unknown key gets the closest valid key
    suggested) and every required key."""
    if not isinstance(data, Mapping):
        raise SceneError(f"{where}: expected a table of {what} keys, got {shown(data)}")
    for key in data:
        if key not in keys:
            close = closest(str(key), keys)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SceneError(f"{where}: unknown {what} key {shown(key)}{hint} Valid {what} keys: "
                             f"{', '.join(keys)}")
    for key in keys.values():
        if key.required and key.name not in data:
            if key.kind == "tables":
                raise SceneError(f"{where}: the scene has no [[{key.name}]] entries")
            raise SceneError(f"{where}: missing {key.name!r} ({key.expected()})")
    return data


def value(data: Mapping[str, Any], key: Key, where: str, default: Any = None) -> Any:
    """The checked value of ``key`` in ``data`` (``default`` when absent): Python types
    (bool, int, float, str, tuple of floats, dict)."""
    if key.name not in data:
        return default
    raw = data[key.name]
    check = _CHECKS[key.kind]
    ok, result = check(raw, key)
    if not ok:
        if key.kind == "table" and isinstance(raw, Mapping):
            bad = _bad_item(raw, key)
            if bad is not None:
                name, item, expected = bad
                raise SceneError(f"{where}: {key.name}.{name} = {_show(item)}; expected {expected}")
        raise SceneError(f"{where}: {key.name} = {_show(raw)}; expected {key.expected()}")
    return result


def _bad_item(raw: Mapping[Any, Any], key: Key) -> tuple[str, Any, str] | None:
    """The first entry of a ``table`` key that is not valid: (its name, its value, what was
    expected), so a message names the one bad entry (``joints.j1 = nan``), not the whole table."""
    for name, item in raw.items():
        if not isinstance(name, str):
            return repr(name), item, f"names that are strings ({key.expected()})"
        if not _ITEM_OK[key.item](item):
            return name, item, _ITEM_EXPECTED[key.item]
    return None


def _show(raw: Any) -> str:
    text = repr(raw) if not isinstance(raw, (list, tuple)) else "[" + ", ".join(map(_show, raw)) + "]"
    return text if len(text) < 80 else text[:77] + "..."


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and type(x).__name__ != "bool_"


def _finite(x: Any) -> bool:
    """A finite float64 (an int beyond float64's range is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _in_range(x: float, key: Key) -> bool:
    if not math.isfinite(x):
        return False
    if key.low is not None and (x <= key.low if key.low_open else x < key.low):
        return False
    return key.high is None or x <= key.high


def _bool(raw: Any, key: Key) -> tuple[bool, Any]:
    return (isinstance(raw, bool) or type(raw).__name__ == "bool_"), bool(raw)


def _int(raw: Any, key: Key) -> tuple[bool, Any]:
    if not isinstance(raw, numbers.Integral) or isinstance(raw, bool):
        return False, None
    return _in_range(int(raw), key), int(raw)


def _float(raw: Any, key: Key) -> tuple[bool, Any]:
    if not (_is_number(raw) and _finite(raw)):
        return False, None
    return _in_range(float(raw), key), float(raw)


def _str(raw: Any, key: Key) -> tuple[bool, Any]:
    return isinstance(raw, str) and bool(raw.strip()), raw


def _vector(raw: Any, key: Key) -> tuple[bool, Any]:
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Sequence) and not hasattr(raw, "__array__"):
        return False, None
    items = list(raw)
    if len(items) not in key.lengths or not all(_is_number(x) and _finite(x) for x in items):
        return False, None
    return True, tuple(float(x) for x in items)


def _table(raw: Any, key: Key) -> tuple[bool, Any]:
    if not isinstance(raw, Mapping):
        return False, None
    item_ok = _ITEM_OK[key.item]
    if not all(isinstance(k, str) and item_ok(v) for k, v in raw.items()):
        return False, None
    return True, {k: (float(v) if key.item == "float" else v) for k, v in raw.items()}


_ITEM_OK: dict[str, Callable[[Any], bool]] = {
    "float": lambda v: _is_number(v) and _finite(v),
    "str": lambda v: isinstance(v, str) and bool(v.strip()),
    "scalar": lambda v: isinstance(v, (str, bool)) or _is_number(v),
}
_ITEM_EXPECTED = {"float": "a finite number", "str": "a non-empty string",
                  "scalar": "a string, number or boolean"}


def _tables(raw: Any, key: Key) -> tuple[bool, Any]:
    ok = isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)) and len(raw) > 0
    return ok, list(raw) if ok else None


_CHECKS: dict[str, Callable[[Any, Key], tuple[bool, Any]]] = {
    "bool": _bool, "int": _int, "float": _float, "str": _str, "vector": _vector,
    "table": _table, "tables": _tables}


def check_joint_values(root: Any, joints: Mapping[str, float], scale: float, where: str) -> None:
    """A body's ``joints`` table checked against its URDF tree (``UrdfSource.root``), before any
    server opens: every name is a joint of the file (else the closest names), and a revolute or
    prismatic joint's value lies within its ``<limit>`` (finite, lower < upper; prismatic limits
    times ``scale``, as PyBullet reports them), else one line with the closest valid value, as
    ``simbench view --q`` says it. Continuous joints have no limits."""
    from ..errors import UnknownNameError, degrees_note, outside_limits

    found = {j.get("name"): j for j in root.findall("joint")}
    for name, value in joints.items():
        if name not in found:
            raise SceneError(f"{where}: {UnknownNameError('joint', name, found)}")
        joint, limit = found[name], found[name].find("limit")
        kind = joint.get("type")
        if kind not in ("revolute", "prismatic") or limit is None:
            continue
        try:
            lo, hi = float(limit.get("lower")), float(limit.get("upper"))
        except (TypeError, ValueError):   # no numbers: no limits to check against
            continue
        if kind == "prismatic":
            lo, hi = lo * scale, hi * scale
        if math.isfinite(lo) and math.isfinite(hi) and lo < hi and not lo <= value <= hi:
            unit = "m" if kind == "prismatic" else "rad"
            given = f"joint {name} = {value:g}{degrees_note(value, unit)}"
            raise SceneError(f"{where}: {outside_limits(given, value, lo, hi, unit)}")


def markdown_table(keys: Mapping[str, Key]) -> str:
    """The keys as a Markdown table (for the docs)."""
    rows = ["| key | expected | meaning | example |", "|---|---|---|---|"]
    for key in keys.values():
        req = " (required)" if key.required else ""
        example = f"`{key.name} = {key.example}`" if key.example else ""
        rows.append(f"| `{key.name}`{req} | {key.expected()} | {key.doc} | {example} |")
    return "\n".join(rows)


__all__ = ["Key", "SCENE_KEYS", "BODY_KEYS", "check_keys", "value", "check_joint_values", "markdown_table"]


def toml_hint(path: Any, exc: Exception) -> str:
    """The line a TOML error points at, and what TOML wants there: its booleans are lowercase
    (``True`` is an error) and its text is quoted (``name = robot`` is one)."""
    import re

    if Path(path).suffix.lower() in (".yaml", ".yml", ".json", ".urdf", ".xml"):   # another format's file
        kind = "URDF" if Path(path).suffix.lower() in (".urdf", ".xml") else Path(path).suffix[1:].upper()
        return (f"; scene files are TOML ([[body]] tables, see docs/scenes.md), not {kind}" +
                ("; a URDF alone opens as it is: simbench view ROBOT.urdf" if kind == "URDF" else ""))
    found = re.search(r"at line (\d+), column (\d+)", str(exc))
    if not found:
        return ""
    try:
        line = Path(path).read_text().splitlines()[int(found.group(1)) - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return ""
    value = line[int(found.group(2)) - 1:].strip()
    if not value:
        return ""
    if value in ("True", "False"):
        return f": {line.strip()!r}; expected a TOML boolean, {value.lower()}"
    if re.fullmatch(r"[A-Za-z_][\w./:-]*", value):
        return f": {line.strip()!r}; expected text in quotes, \"{value}\""
    return f": {line.strip()!r}"
