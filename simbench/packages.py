"""ROS-style ``package://NAME/PATH`` URIs: where package ``NAME`` is on this machine.

A package is looked up, in this order, in

1. the explicit map: ``package_map={"NAME": DIR}`` in the API, ``--package NAME=DIR`` on the
   command line, ``package_map`` in a scene file;
2. ``ROS_PACKAGE_PATH`` (ROS 1): each entry is the package itself or is searched for a
   sub-folder holding a ``package.xml`` whose ``<name>`` is NAME (as ``rospack`` does), or a
   sub-folder named NAME;
3. ``AMENT_PREFIX_PATH`` (ROS 2): ``PREFIX/share/NAME``;
4. the folders above the URDF file: one named NAME or holding a ``package.xml`` naming NAME,
   or a folder NAME beside one of them (which is also what PyBullet tries by itself).

:func:`resolve_uri` turns a mesh filename of a URDF (``package://``, ``file://``, relative or
absolute) into a file and lists the paths it tried; for a file not found, the closest existing
mesh files (in the folder it names and the folders beside it, written as the URI was:
``meshes/bal.obj`` -> ``meshes/ball.obj``), for a package not found the closest known package
names (:func:`known_packages`). The command line sets a default map for the whole command with
:func:`package_defaults`; API calls pass ``package_map=``.
"""
from __future__ import annotations

import contextlib
import contextvars
import difflib
import functools
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import CLOSE_CUTOFF, SimbenchError, closest, likeness, shown, shown_path

logger = logging.getLogger(__name__)

PACKAGE_SCHEME = "package://"
FILE_SCHEME = "file://"
#: folders never entered while searching ROS_PACKAGE_PATH (as rospack skips them)
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "build", "devel", "install", "log", "node_modules"}
_CRAWL_DEPTH = 6
#: mesh formats PyBullet reads (by extension, any case); others make it refuse the file
MESH_FORMATS = (".obj", ".stl", ".dae", ".vtk")
#: a missing file's suggestions look at no more than this many folder entries in all, at most
#: this many folders below where they start, and at this many entries of one folder for packages
_NEAR_ENTRIES = 2000
_NEAR_DEPTH = 4
_NEAR_PACKAGES = 300
#: of the close names, those this much less alike than the closest are not suggested
_NEAR_MARGIN = 0.05

PackageMap = Mapping[str, "str | os.PathLike[str]"]

_default_map: contextvars.ContextVar[dict[str, Path]] = contextvars.ContextVar(
    "simbench_package_map", default={})
#: inside :func:`package_defaults`: every package name looked up (package:// URIs, $(find NAME))
_looked_up: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "simbench_packages_looked_up", default=None)


@dataclass(frozen=True)
class Resolution:
    """Where a URI led: ``path`` (an existing file) or ``None``, and every path tried."""

    uri: str
    path: Path | None
    tried: tuple[str, ...]
    #: the package name of a ``package://`` URI, else ``None``
    package: str | None = None
    #: for a ``package://`` URI: whether a folder of that package was found at all, and where
    #: it was looked for
    package_found: bool = True
    searched: tuple[str, ...] = ()
    #: for a file not found: existing files of nearly its path, written the way ``uri`` is
    near: tuple[str, ...] = ()
    #: for a package not found: the known packages of nearly its name
    near_packages: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.path is not None

    def explain(self) -> str:
        """One line: what was looked for and where."""
        if not self.package_found:
            hint = misspelled_package(self.package or "")
            if not hint and self.near_packages:
                hint = f"; did you mean package {' or '.join(map(repr, self.near_packages))}?"
            return (f"{shown_path(self.uri)} not found: package {shown(self.package)} is in none of "
                    f"{', '.join(self.searched)}; give its folder with --package "
                    f"{self.package}=DIR or ROS_PACKAGE_PATH{hint}")
        hint = f"; did you mean {' or '.join(map(repr, self.near))}?" if self.near else ""
        return f"{shown_path(self.uri)} not found (tried {', '.join(self.tried)}){hint}"


def parse_package_map(items: Sequence[str] | PackageMap | None,
                      relative_to: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """``{"NAME": DIR}`` from a mapping or from ``"NAME=DIR"`` strings (the CLI's form).

    Folders must exist; relative folders are taken from ``relative_to`` (default: the
    current folder).
    """
    if not items:
        return {}
    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), os.fspath(v)) for k, v in items.items()]
    else:
        for item in items:
            name, sep, folder = str(item).partition("=")
            if not sep or not name.strip() or not folder.strip():
                raise SimbenchError(f"package mapping {shown(item)}: expected NAME=DIR, e.g. "
                                    f"my_robot_description=./src/my_robot_description")
            pairs.append((name.strip(), folder.strip()))
    out: dict[str, Path] = {}
    for name, folder in pairs:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise SimbenchError(f"package name {shown(name)}: expected letters, digits, '_', '-' or '.'")
        path = Path(folder).expanduser()
        if not path.is_absolute() and relative_to is not None:
            path = Path(relative_to) / path
        if not path.is_dir():
            raise SimbenchError(f"package {name!r}: folder {shown_path(folder)} does not exist; expected "
                                f"the folder that holds the package (its package.xml){_near_folder(path)}")
        out[name] = path.resolve()
    return out


@contextlib.contextmanager
def package_defaults(package_map: Sequence[str] | PackageMap | None) -> Iterator[dict[str, Path]]:
    """Inside the block, lookups without an explicit map use ``package_map`` (the CLI's
    ``--package`` options)."""
    resolved = parse_package_map(package_map)
    token = _default_map.set(resolved)
    looked_up = _looked_up.set(set())
    try:
        yield resolved
        _warn_unused(resolved, _looked_up.get() or set())
    finally:
        _looked_up.reset(looked_up)
        _default_map.reset(token)


def _warn_unused(mapping: Mapping[str, Path], looked_up: set[str]) -> None:
    """A warning line for each ``--package NAME=DIR`` no loaded file referred to (a misspelled
    NAME), with the closest name the files did refer to."""
    for name in mapping:
        if name in looked_up:
            continue
        close = closest(name, looked_up, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        used = ", ".join(sorted(looked_up)) or "none"
        logger.warning("--package %s=DIR unused: no file loaded refers to package %r%s (packages "
                       "referred to: %s)", name, name, hint, used)


def misspelled_package(name: str) -> str:
    """``" (--package my_robt=DIR was given, close to 'my_robot': a misspelling, in the option or
    in the file?)"`` when a name in the command line's package map is close to the package
    ``name`` that was not found, else ``""`` (either spelling may be the wrong one)."""
    close = closest(name, [n for n in _default_map.get() if n != name], n=1)
    return (f" (--package {close[0]}=DIR was given, close to {name!r}: a misspelling, in the option or in "
            f"the file?)") if close else ""


def _near_folder(path: Path) -> str:
    """``"; did you mean '/ws/src/my_robot'?"`` for a folder close to the missing ``path``."""
    try:
        parent = path.absolute().parent
        names = [p.name for p in parent.iterdir() if p.is_dir()] if parent.is_dir() else []
    except OSError:
        return ""
    close = closest(path.name, names, n=1)
    return f"; did you mean {str(parent / close[0])!r}?" if close else ""


def effective_map(package_map: Sequence[str] | PackageMap | None = None) -> dict[str, Path]:
    """The command-line defaults updated with ``package_map``."""
    merged = dict(_default_map.get())
    merged.update(parse_package_map(package_map))
    return merged


def find_package(name: str, *, package_map: PackageMap | None = None,
                 near: str | os.PathLike[str] | None = None) -> tuple[list[Path], list[str]]:
    """Candidate folders for package ``name``, best first, and a description of where else it
    was looked for. ``near`` is the URDF (or xacro) file whose ancestors are searched."""
    found: list[Path] = []
    where: list[str] = []
    looked_up = _looked_up.get()
    if looked_up is not None:
        looked_up.add(name)
    mapping = effective_map(package_map)
    if name in mapping:
        found.append(mapping[name])
    where.append("the package map")
    ros = os.environ.get("ROS_PACKAGE_PATH", "")
    for entry in _split(ros):
        found.extend(_crawl(entry).get(name, []))
    where.append(f"ROS_PACKAGE_PATH={ros!r}" if ros else "ROS_PACKAGE_PATH (unset)")
    ament = os.environ.get("AMENT_PREFIX_PATH", "")
    for prefix in _split(ament):
        share = Path(prefix) / "share" / name
        if share.is_dir():
            found.append(share)
    where.append(f"AMENT_PREFIX_PATH={ament!r}" if ament else "AMENT_PREFIX_PATH (unset)")
    if near is not None:
        found.extend(_ancestor_packages(Path(near).resolve().parent, name))
        where.append(f"the folders above {shown_path(str(near))}")
    return list(dict.fromkeys(found)), where


def resolve_uri(uri: str, *, base_dir: str | os.PathLike[str], package_map: PackageMap | None = None,
                urdf: str | os.PathLike[str] | None = None) -> Resolution:
    """The file a URDF's ``filename=`` points to: ``package://NAME/PATH`` (see the module
    docstring), ``file:///abs/path``, an absolute path, or a path relative to ``base_dir`` (the
    URDF's folder; PyBullet also tries the folders above it, and so do we)."""
    base = Path(base_dir)
    tried: list[Path] = []
    package, package_found, searched = None, True, []
    # where a close file is looked for when none is found: (the folder the path is relative to,
    # the path, whether folders beside the missing one are looked in); how the URI writes a path
    near: list[tuple[Path, str, bool]] = []
    prefix = ""
    if uri.startswith(PACKAGE_SCHEME):
        rest = uri[len(PACKAGE_SCHEME):]
        package, _, rel = rest.partition("/")
        roots, searched = find_package(package, package_map=package_map, near=urdf or base / "_")
        package_found = bool(roots)
        tried.extend(root / rel for root in roots)
        near.extend((root, rel, True) for root in roots)
        prefix = f"{PACKAGE_SCHEME}{package}/"
    elif uri.startswith(FILE_SCHEME) or Path(uri).expanduser().is_absolute():
        path = Path(uri[len(FILE_SCHEME):] if uri.startswith(FILE_SCHEME) else uri).expanduser()
        tried.append(path)
        near.append((path.parent.parent, path.relative_to(path.parent.parent).as_posix(), True))
        prefix = (FILE_SCHEME if uri.startswith(FILE_SCHEME) else "") + \
            path.parent.parent.as_posix().rstrip("/") + "/"
    else:
        tried.append(base / uri)
        tried.extend(anc / uri for anc in _ancestors(base.parent))
        # the URDF's folder and the one above: beside the missing folder too; further up (where
        # PyBullet also looks), only in the folder named
        near.extend((anc, uri, i < 2) for i, anc in enumerate(_ancestors(base)))
    tried = list(dict.fromkeys(tried))
    for path in tried:
        if path.is_file():
            return Resolution(uri, path.resolve(), tuple(map(str, tried)), package, package_found,
                              tuple(searched))
    shown = tuple(map(str, tried[:6])) + ((f"... {len(tried) - 6} more",) if len(tried) > 6 else ())
    close = tuple(prefix + n for n in _near_files(near)) if package_found else ()
    close_packages = () if package_found else tuple(_best(package or "", known_packages(
        package_map=package_map, near=urdf or base / "_")))
    return Resolution(uri, None, shown, package, package_found, tuple(searched), close, close_packages)


def known_packages(*, package_map: PackageMap | None = None,
                   near: str | os.PathLike[str] | None = None) -> set[str]:
    """The names of the packages :func:`find_package` would find: those of the package map,
    ``ROS_PACKAGE_PATH`` and ``AMENT_PREFIX_PATH``, and above ``near`` the ``package.xml`` names
    of its folders and of the folders beside them (a workspace's other packages)."""
    names = set(effective_map(package_map))
    for entry in _split(os.environ.get("ROS_PACKAGE_PATH", "")):
        names.update(_crawl(entry))
    folders = [Path(prefix) / "share" for prefix in _split(os.environ.get("AMENT_PREFIX_PATH", ""))]
    names.update(p.name for share in folders for p in _subfolders(share))
    if near is not None:
        for folder in _ancestors(Path(near).parent):
            for candidate in [folder, *_subfolders(folder)]:
                name = _package_name(candidate)
                if name:
                    names.add(name)
    return names


def _subfolders(folder: Path) -> list[Path]:
    """The first :data:`_NEAR_PACKAGES` folders in ``folder`` (not hidden), or none."""
    out: list[Path] = []
    try:
        with os.scandir(folder) as entries:
            for i, entry in enumerate(entries):
                if i >= _NEAR_PACKAGES:
                    break
                if not entry.name.startswith(".") and entry.is_dir():
                    out.append(Path(entry.path))
    except OSError:
        pass
    return out


#: how alike a package name must be: a misspelling (my_robt is 0.93 like my_robot), not a
#: workspace's other package of the same prefix (simbench_tool is 0.58 like
#: simbench_demo_description, the package that refers to it)
_PACKAGE_CUTOFF = 0.75


def _best(name: str, valid: Iterable[str], cutoff: float = _PACKAGE_CUTOFF) -> list[str]:
    """Of the names :func:`closest` finds for ``name``, the most alike, if at least ``cutoff``,
    and those within :data:`_NEAR_MARGIN` of it."""
    scored = sorted(((likeness(name, c), c) for c in closest(name, valid, n=10)), key=lambda sc: -sc[0])
    best = scored[0][0] if scored else 1.0
    return [c for score, c in scored if score >= max(cutoff, best - _NEAR_MARGIN)][:3]


def _best_file(want: str, found: Iterable[str]) -> list[str]:
    """Of the paths ``found``, those nearest ``want``, as :func:`closest` has it but part by part:
    the same path but for case, else those whose file name (without its suffix) and folder are
    each alike enough, the most alike name first and then the most alike folder, each within
    :data:`_NEAR_MARGIN` of the best: ``meshes/link_3.stl`` -> ``meshes/link3.stl`` (not
    ``meshes/link.stl`` too), ``mesh/link3.stl`` -> ``meshes/link3.stl``."""
    found = sorted(set(found))
    same = [f for f in found if f.casefold() == want.casefold()]
    if same:
        return same[:3]

    def parts(path: str) -> tuple[str, str]:
        folder, _, name = path.rpartition("/")
        return folder, name.rsplit(".", 1)[0] if "." in name.strip(".") else name

    folder, stem = parts(want)
    matcher = difflib.SequenceMatcher()   # as get_close_matches: the quick bounds first
    matcher.set_seq2(stem.casefold())
    folders: dict[str, float] = {}
    scored = []
    for f in found:
        other_folder, other = parts(f)
        matcher.set_seq1(other.casefold())
        if matcher.real_quick_ratio() < CLOSE_CUTOFF or matcher.quick_ratio() < CLOSE_CUTOFF:
            continue
        alike = matcher.ratio()
        if other_folder not in folders:
            folders[other_folder] = likeness(folder, other_folder)
        if alike >= CLOSE_CUTOFF and folders[other_folder] >= CLOSE_CUTOFF:   # closest's cutoff, part by part
            scored.append((alike, folders[other_folder], f))
    for i in (0, 1):
        best = max((s[i] for s in scored), default=0.0)
        scored = [s for s in scored if s[i] >= best - _NEAR_MARGIN]
    return sorted((s[2] for s in scored), key=lambda f: (-likeness(want, f), f))[:3]


def _near_files(places: Sequence[tuple[Path, str, bool]]) -> list[str]:
    """Existing files of nearly the missing path, each as a path from its place's folder: for
    each place (a folder, the path from it, ``beside``), the files in the folder the path names,
    and with ``beside`` in the folders next to it too (``mesh/link.stl`` -> ``meshes/link.stl``);
    mesh files and files of the path's suffix only. At most :data:`_NEAR_ENTRIES` folder entries
    are looked at in all."""
    budget = [_NEAR_ENTRIES]
    found: set[str] = set()
    want = ""
    for anchor, rel, beside in places:
        target = Path(os.path.normpath(anchor / rel))
        top = Path(os.path.commonpath([os.path.normpath(anchor), target.parent]))
        scope = target.parent.parent if beside else target.parent
        if not scope.is_relative_to(top):
            scope = top
        while beside and not scope.is_dir() and scope != top:
            scope = scope.parent
        if not scope.is_dir():
            continue
        suffixes = set(MESH_FORMATS) | {target.suffix.lower()}
        depth = min(len(target.relative_to(scope).parts), _NEAR_DEPTH)
        want = want or os.path.relpath(target, anchor).replace(os.sep, "/")
        head = os.path.relpath(scope, anchor).replace(os.sep, "/") + "/"
        head = "" if head == "./" else head
        found.update(head + file for file in _files_below(scope, depth, suffixes, budget))
    return _best_file(want, found)


def _files_below(folder: Path, depth: int, suffixes: set[str], budget: list[int]) -> list[str]:
    """The files with a suffix of ``suffixes`` (any case) at most ``depth`` levels into
    ``folder`` (1: in it), as paths from it ('meshes/link.stl'), breadth first, while
    ``budget[0]`` (folder entries) lasts."""
    out: list[str] = []
    level = [(str(folder), "")]
    for _ in range(depth):
        below: list[tuple[str, str]] = []
        for current, rel in level:
            if budget[0] <= 0:
                return out
            try:
                with os.scandir(current) as entries:
                    for entry in entries:
                        if budget[0] <= 0:
                            return out
                        budget[0] -= 1
                        if entry.name.startswith(".") or entry.name in _SKIP_DIRS:
                            continue
                        if entry.is_dir():
                            below.append((entry.path, f"{rel}{entry.name}/"))
                        elif os.path.splitext(entry.name)[1].lower() in suffixes:
                            out.append(rel + entry.name)
            except OSError:
                continue
        level = below
    return out


# ---------------------------------------------------------------------- helpers
def _split(value: str) -> list[str]:
    return [v for v in value.split(os.pathsep) if v]


def _ancestors(folder: Path) -> list[Path]:
    folder = folder.resolve()
    return [folder, *folder.parents]


def _package_name(folder: Path) -> str | None:
    """The ``<name>`` in ``folder/package.xml``, if there is one."""
    manifest = folder / "package.xml"
    try:
        text = manifest.read_text(errors="replace")
    except OSError:
        return None
    match = re.search(r"<name>\s*([^<\s]+)\s*</name>", text)
    return match.group(1) if match else None


def _ancestor_packages(start: Path, name: str) -> list[Path]:
    out = []
    for folder in _ancestors(start):
        if folder.name == name or _package_name(folder) == name:
            out.append(folder)
        sibling = folder / name
        if sibling.is_dir():
            out.append(sibling)
    return out


@functools.lru_cache(maxsize=64)
def _crawl_cached(entry: str, stamp: float) -> dict[str, tuple[Path, ...]]:
    found: dict[str, list[Path]] = {}
    root = Path(entry).expanduser()

    def visit(folder: Path, depth: int) -> None:
        name = _package_name(folder)
        if name is not None:
            found.setdefault(name, []).append(folder.resolve())
            return  # packages do not nest
        if depth >= _CRAWL_DEPTH or (folder / "CATKIN_IGNORE").exists():
            return
        try:
            subs = sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in _SKIP_DIRS
                          and not p.name.startswith("."))
        except OSError:
            return
        for sub in subs:
            if depth == 0 and _package_name(sub) is None:
                found.setdefault(sub.name, []).append(sub.resolve())  # a plain folder NAME
            visit(sub, depth + 1)

    if root.is_dir():
        visit(root, 0)
    return {k: tuple(v) for k, v in found.items()}


def _crawl(entry: str) -> dict[str, tuple[Path, ...]]:
    """Packages below one ROS_PACKAGE_PATH entry (cached while the folder is unchanged)."""
    try:
        stamp = Path(entry).expanduser().stat().st_mtime
    except OSError:
        return {}
    return _crawl_cached(entry, stamp)


__all__ = ["Resolution", "PackageMap", "parse_package_map", "package_defaults", "effective_map",
           "find_package", "known_packages", "misspelled_package", "resolve_uri", "MESH_FORMATS",
           "PACKAGE_SCHEME", "FILE_SCHEME"]
