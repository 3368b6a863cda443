"""A URDF as simbench and PyBullet both read it: the one place that finds the file, expands
xacro, resolves mesh URIs, and decides what PyBullet is given to load.

Every loader calls :func:`load_source` (the model, scenes, ``simbench check``, ``simbench info``)::

    src = load_source("my_robot.urdf.xacro", package_map={"my_robot": "~/ws/src/my_robot"},
                      xacro_args={"arm": "left"})
    src.issues            # missing meshes (with the paths tried), constructs PyBullet refuses
    src.check_loadable()  # URDFError in one line naming the file and element, if PyBullet would refuse
    p.loadURDF(str(src.pybullet_path()), ...)

:meth:`UrdfSource.pybullet_path` is the file itself when PyBullet can read it as it is, else a
resolved copy (xacro expanded, ``package://`` and ``file://`` URIs replaced by absolute paths)
in a cache folder, named after its content (PyBullet caches a URDF path per connection, so a
changed file gets a new name).
"""
from __future__ import annotations

import contextlib
import contextvars
import copy
import hashlib
import io
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import SimbenchError, UnknownNameError, URDFError, closest, shown, shown_path
from .issues import ModelIssue
from .packages import (FILE_SCHEME, PACKAGE_SCHEME, PackageMap, find_package, misspelled_package,
                       package_defaults, parse_package_map)
from .paths import resolve_urdf
from .urdf_checks import MESH_FORMATS, MeshRef, check_elements, check_tree

logger = logging.getLogger(__name__)

XACRO_NS = "http://www.ros.org/wiki/xacro"
XacroArgs = Mapping[str, Any] | Sequence[str]

_default_xacro_args: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar(
    "simbench_xacro_args", default={})
#: inside :func:`loading_defaults`: the files loaded with its xacro arguments, xacro or not
_xacro_use: contextvars.ContextVar[dict[Path, bool] | None] = contextvars.ContextVar(
    "simbench_xacro_use", default=None)


@dataclass(frozen=True)
class UrdfSource:
    """A URDF file read and checked; see the module docstring."""

    #: what the user named (a path, ``pybullet_data:...``, ``simbench:...``)
    spec: str
    #: the file on disk (for xacro input, the .xacro file)
    path: Path | None
    #: the URDF text (expanded when the input was xacro)
    xml: bytes
    #: the parsed tree (geometry included); use :meth:`tree` for a private copy
    root: Any = field(repr=False)
    issues: tuple[ModelIssue, ...] = ()
    meshes: tuple[MeshRef, ...] = ()
    #: ``None`` for plain URDF, else the arguments xacro was given
    xacro_args: Mapping[str, str] | None = None

    @property
    def label(self) -> str:
        """How error messages name the file."""
        return str(self.path) if self.path is not None else self.spec

    @property
    def refusals(self) -> tuple[ModelIssue, ...]:
        """The issues that make PyBullet refuse the file."""
        return tuple(i for i in self.issues if i.refused_by_pybullet)

    def tree(self) -> Any:
        """A deep copy of the parsed tree (callers may change it)."""
        return copy.deepcopy(self.root)

    def check_loadable(self) -> None:
        """Raise :class:`URDFError` (one line naming the file and the element) if PyBullet would
        refuse the file."""
        refused = self.refusals
        if refused:
            more = f" (and {len(refused) - 1} more; see simbench info)" if len(refused) > 1 else ""
            message = refused[0].message  # "...; did you mean 'meshes/ball.obj'? PyBullet ..."
            joint = " " if message.endswith("?") else "; "
            raise URDFError(f"{self.label}: {refused[0].element}: {message}{joint}"
                            f"PyBullet cannot load this file{more}")

    def needs_copy(self) -> bool:
        """True when PyBullet cannot be given the file itself (xacro, or a URI it would not
        resolve the way we do)."""
        if self.path is None or self.xacro_args is not None:
            return True
        base = self.path.parent
        for mesh in self.meshes:
            uri, res = mesh.resolution.uri, mesh.resolution
            if uri.startswith((PACKAGE_SCHEME, FILE_SCHEME)):
                return True
            if res.path is not None and not Path(uri).is_absolute() and not (base / uri).is_file():
                return True
        return False

    def pybullet_path(self) -> Path:
        """A path to give ``pybullet.loadURDF``: the file itself, or a resolved copy. Raises
        :class:`URDFError` when PyBullet would refuse the file (see :meth:`check_loadable`)."""
        self.check_loadable()
        if not self.needs_copy():
            assert self.path is not None
            return self.path
        return _write_copy(self)


def load_source(spec: str | os.PathLike[str], *, package_map: PackageMap | Sequence[str] | None = None,
                xacro_args: XacroArgs | None = None,
                relative_to: str | os.PathLike[str] | None = None) -> UrdfSource:
    """Find, read (expanding xacro) and check a URDF file; see :class:`UrdfSource`.

    ``spec``: a path (relative to ``relative_to`` when given), ``pybullet_data:NAME`` or
    ``simbench:NAME``. ``package_map``: ``{"NAME": DIR}`` (or ``["NAME=DIR"]``) for
    ``package://NAME/...``. ``xacro_args``: ``{"name": value}`` (or ``["name:=value"]``) for a
    xacro file's ``$(arg name)``.
    """
    path = resolve_urdf(spec, relative_to)
    if path.suffix.lower() == ".toml":
        raise URDFError(_scene_not_urdf(os.fspath(spec), path))
    if path.suffix.lower() in (".yaml", ".yml", ".json"):   # read as XML it was "malformed XML"
        raise URDFError(f"{shown_path(os.fspath(spec))} is a {path.suffix[1:].upper()} file; expected a URDF (XML) file, "
                        f"or a scene as a TOML file ([[body]] tables, see docs/scenes.md)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise URDFError(f"cannot read URDF {shown_path(str(path))}: {exc.strerror}") from None
    args = None
    issues: list[ModelIssue] = []
    xacro = is_xacro(path, raw)
    if xacro_args is None and (use := _xacro_use.get()) is not None:
        use[path] = xacro
    if xacro:
        args = parse_xacro_args(xacro_args) if xacro_args is not None else dict(_default_xacro_args.get())
        raw = expand_xacro(path, args, package_map)
        issues.append(ModelIssue("xacro_input", "robot", f"xacro file, expanded with the xacro "
                                 f"package ({_shown(args) or 'no arguments'}); PyBullet is given "
                                 "the expanded copy",
                                 {"args": dict(args)}))
    elif xacro_args:
        raise URDFError(f"{path}: xacro arguments {_shown(xacro_args)} given, but the file is plain "
                        f"URDF, not xacro (.xacro, or <xacro:...> elements)")
    return source_from_string(raw, base_dir=path.parent, spec=os.fspath(spec), path=path,
                              package_map=package_map, xacro_args=args, issues=issues)


def _scene_not_urdf(spec: str, path: Path) -> str:
    """The line for a scene file given where a URDF is expected: how to get its robot's model,
    and the robot's URDF when the scene names one."""
    import tomllib

    robot = ""
    try:
        data = tomllib.loads(path.read_text())
        bodies = [b for b in data.get("body", []) if isinstance(b, Mapping)]
        name = data.get("robot") or next((b.get("name") for b in bodies if b.get("name") == "robot"), None)
        body = next((b for b in bodies if b.get("name") == name), bodies[0] if bodies else None)
        if body is not None and isinstance(body.get("urdf"), str):
            robot = f"; the URDF of its body {body.get('name')!r} is {body['urdf']!r}"
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError, TypeError):
        pass
    return (f"{shown_path(spec)} is a scene file, not a URDF; the model of its robot as PyBullet simulates "
            f"it is simbench.Simulation({spec!r}, gui=False).model{robot}")


@contextlib.contextmanager
def loading_defaults(package_map: PackageMap | Sequence[str] | None = None,
                     xacro_args: XacroArgs | None = None) -> Iterator[None]:
    """Inside the block, :func:`load_source` calls without ``package_map=`` / ``xacro_args=``
    use these (the command line's ``--package`` and ``--xacro-arg`` options)."""
    with package_defaults(package_map):
        token = _default_xacro_args.set(parse_xacro_args(xacro_args))
        use = _xacro_use.set({})
        try:
            yield
            _warn_unused_xacro_args()
        finally:
            _xacro_use.reset(use)
            _default_xacro_args.reset(token)


def _warn_unused_xacro_args() -> None:
    """One warning line when the command line gave xacro arguments and every file the command
    loaded was plain URDF (a scene may mix plain and xacro robots: then they were used)."""
    use, given = _xacro_use.get(), _default_xacro_args.get()
    if given and use and not any(use.values()):
        options = " ".join(f"--xacro-arg {k}:={v}" for k, v in given.items())
        names = ", ".join(p.name for p in use)
        logger.warning("%s ignored: %s %s plain URDF, not xacro (.xacro, or <xacro:...> elements)",
                       options, names, "is" if len(use) == 1 else "are")


def source_from_string(xml: str | bytes, *, base_dir: str | os.PathLike[str] | None = None,
                       spec: str | None = None, path: Path | None = None,
                       package_map: PackageMap | Sequence[str] | None = None,
                       xacro_args: Mapping[str, str] | None = None,
                       issues: list[ModelIssue] | None = None) -> UrdfSource:
    """:func:`load_source` for URDF text; relative mesh paths are taken from ``base_dir``
    (default: the current folder)."""
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    label = str(path) if path is not None else (spec or f"<string in {base}>")
    issues = list(issues or [])
    text = xml if isinstance(xml, bytes) else xml.encode()
    root = parse_xml(text, label, issues)
    package_map = parse_package_map(package_map)  # checked (folders exist) even when unused
    check_tree(root, label)
    meshes = check_elements(root, base, path, package_map, issues)
    logger.debug("%s: %d links, %d mesh and texture files (%d not found), %d issues", label,
                 len(root.findall("link")), len(meshes), sum(m.resolution.path is None for m in meshes),
                 len(issues))
    return UrdfSource(spec=spec or label, path=path, xml=text, root=root, issues=tuple(issues),
                      meshes=tuple(meshes), xacro_args=xacro_args)


# ---------------------------------------------------------------------- XML
def parse_xml(xml: bytes, source: str, issues: list[ModelIssue]) -> Any:
    """Strict XML parsing, with the two liberties PyBullet's tinyxml takes (recorded as issues):
    XML declarations anywhere or with a bad version are ignored, and text after the closing
    ``</robot>`` is dropped."""
    from lxml import etree

    text = xml.decode("utf-8", errors="replace")
    text = re.sub(r"<\?xml[^>]*\?>", "", text)
    end = text.find("</robot>")
    if end >= 0 and text[end + 8:].strip():
        issues.append(ModelIssue("trailing_content", "robot", "text after </robot> is ignored "
                                 "(as PyBullet does)", {"chars": len(text[end + 8:].strip())}))
        text = text[:end + 8]
    try:
        root = etree.fromstring(text.encode(), parser=etree.XMLParser(remove_blank_text=True,
                                                                         huge_tree=True))
    except etree.XMLSyntaxError as exc:
        raise URDFError(f"{source}: malformed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"{source}: the root element is <{root.tag}>, expected <robot>")
    return root


# ---------------------------------------------------------------------- the resolved copy
def cache_dir() -> Path:
    """Where resolved copies are written (a per-user folder under the temporary folder)."""
    import getpass

    uid = os.getuid() if hasattr(os, "getuid") else getpass.getuser()
    return Path(tempfile.gettempdir()) / f"simbench-{uid}" / "urdf"


def _write_copy(src: UrdfSource) -> Path:
    from lxml import etree

    root = src.tree()
    by_uri = {m.resolution.uri: m.resolution.path for m in src.meshes if m.resolution.path is not None}
    for el in root.iter("mesh", "texture"):
        target = by_uri.get(el.get("filename", ""))
        if target is not None:
            el.set("filename", str(target))
    # one element per line: PyBullet's XML reader fails on long lines (measured: a 19 kB one-line
    # copy of pybullet_data's racecar_differential.urdf is refused, the same text with line breaks loads)
    text = etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)
    stem = src.path.name.split(".")[0] if src.path is not None else "urdf"
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / f"{stem}-{hashlib.sha256(text).hexdigest()[:16]}.urdf"
        if not out.is_file():
            tmp = out.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(text)
            os.replace(tmp, out)
    except OSError as exc:
        raise URDFError(f"{src.label}: cannot write the resolved copy for PyBullet in "
                        f"{str(folder)!r}: {exc.strerror}") from None
    logger.debug("%s: PyBullet loads the resolved copy %s", src.label, out)
    return out


# ---------------------------------------------------------------------- xacro
def is_xacro(path: Path, raw: bytes) -> bool:
    """A ``.xacro`` file, or a file that uses xacro elements (``<xacro:...>``; a bare
    ``xmlns:xacro`` declaration, left in many generated URDFs, does not count)."""
    if path.suffix == ".xacro":
        return True
    if XACRO_NS.encode() not in raw:
        return False
    from lxml import etree

    try:
        root = etree.fromstring(raw, parser=etree.XMLParser(huge_tree=True))
    except etree.XMLSyntaxError:
        return False  # reported when the file is parsed as URDF
    prefix = "{" + XACRO_NS + "}"
    return any(isinstance(el.tag, str) and el.tag.startswith(prefix) for el in root.iter())


def parse_xacro_args(args: XacroArgs | None) -> dict[str, str]:
    """``{"name": "value"}`` from a mapping or from ``"name:=value"`` strings (the CLI's form)."""
    if not args:
        return {}
    if isinstance(args, Mapping):
        return {str(k): _xacro_value(v) for k, v in args.items()}
    if isinstance(args, str):   # one "NAME:=VALUE"
        args = [args]
    if not isinstance(args, Iterable):   # a number
        raise SimbenchError(f"xacro_args = {shown(args)}; expected a mapping {{name: value}} or a list of "
                            f"NAME:=VALUE strings, e.g. {{'prefix': 'left_'}}")
    out = {}
    for item in args:
        name, sep, value = str(item).partition(":=")
        if not sep or not name.strip():
            raise SimbenchError(f"xacro argument {shown(item)}: expected NAME:=VALUE, e.g. prefix:=left_")
        out[name.strip()] = value
    return out


def _shown(args: XacroArgs) -> str:
    return ", ".join(f"{k}:={v}" for k, v in parse_xacro_args(args).items())


def _xacro_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@contextlib.contextmanager
def _find_through_us(xacro: Any, path: Path,
                     package_map: PackageMap | Sequence[str] | None) -> Iterator[list[SimbenchError]]:
    """Make xacro's ``$(find NAME)`` use our package lookup (it would need ROS 2's
    ament_index_python); the list yielded holds the error of a package not found (xacro wraps
    it in its own message when the ``$(find)`` is in a property)."""
    import importlib

    subs = importlib.import_module("xacro.substitution_args")
    mapping = parse_package_map(package_map)
    failed: list[SimbenchError] = []

    def find(name: str) -> str:
        roots, where = find_package(name, package_map=mapping, near=path)
        if not roots:
            failed.append(SimbenchError(f"$(find {name}): package {shown(name)} not found in "
                                        f"{', '.join(where)}; pass --package {name}=DIR"
                                        f"{misspelled_package(name)}"))
            raise failed[-1]
        return str(roots[0])

    saved = getattr(subs, "_eval_find", None)
    subs._eval_find = find
    try:
        yield failed
    finally:
        subs._eval_find = saved


def expand_xacro(path: Path, args: Mapping[str, str],
                 package_map: PackageMap | Sequence[str] | None = None) -> bytes:
    """The URDF text of xacro file ``path`` (the ``xacro`` package from PyPI: the ``xacro`` extra)."""
    from .extras import require

    xacro = require("xacro", "xacro", f"{path.name} is a xacro file; expanding it")
    captured = io.StringIO()
    mappings = _SeenArgs(args)
    failed: list[SimbenchError] = []
    try:
        with _find_through_us(xacro, path, package_map) as failed, \
                contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
            doc = xacro.process_file(str(path), mappings=mappings)
    except SimbenchError as exc:
        raise URDFError(f"{path}: {exc}") from None
    except Exception as exc:  # xacro raises XacroException, NameError, KeyError, ...
        if failed:
            raise URDFError(f"{path}: {failed[0]}") from None
        msg = " ".join(str(exc).split()) or type(exc).__name__
        hint = "; give it with --xacro-arg NAME:=VALUE" if "arg" in msg.lower() else ""
        raise URDFError(f"{path}: xacro cannot expand the file: {msg}{hint}"
                        f"{_misspelled(args, mappings.seen)}") from None
    for line in captured.getvalue().splitlines():
        if line.strip():
            logger.warning("%s: xacro: %s", path.name, line.strip())
    _check_declared(path, args, mappings.seen)
    return doc.toxml(encoding="utf-8")


class _SeenArgs(dict):
    """xacro's table of arguments, noting every name the file declares (``<xacro:arg>``, which
    xacro tests with ``in``) or reads (``$(arg NAME)``, ``xacro.arg(NAME)``)."""

    def __init__(self, given: Mapping[str, str]):
        super().__init__(given)
        self.seen: set[str] = set()

    def __contains__(self, name: object) -> bool:
        self.seen.add(str(name))
        return super().__contains__(name)

    def __getitem__(self, name: str) -> str:
        self.seen.add(str(name))
        return super().__getitem__(name)


def _check_declared(path: Path, args: Mapping[str, str], seen: set[str]) -> None:
    """:class:`UnknownNameError` for the first given argument the file neither declares nor
    reads (xacro itself ignores it: a misspelled name would leave the default in place)."""
    unknown = [name for name in args if name not in seen]
    if unknown:
        raise UnknownNameError("xacro argument", unknown[0], seen, where=str(path))


def _misspelled(args: Mapping[str, str], seen: set[str]) -> str:
    """``" (--xacro-arg 'prefx' given: did you mean 'prefix'?)"`` when a given argument the file
    has not used is close to one it has, else ``""``."""
    for name in args:
        close = closest(name, seen - set(args), n=1) if name not in seen else []
        if close:
            return f" (xacro argument {shown(name)} given: did you mean {close[0]!r}?)"
    return ""


__all__ = ["UrdfSource", "MeshRef", "load_source", "loading_defaults", "source_from_string",
           "parse_xml", "is_xacro", "parse_xacro_args", "expand_xacro", "cache_dir", "MESH_FORMATS"]
