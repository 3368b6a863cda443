"""Where files are: plain paths, ``pybullet_data:NAME`` (PyBullet's bundled robots) and
``simbench:NAME`` (the scenes and URDFs shipped inside this package).

``simbench:NAME`` is looked up under the package's ``assets`` folder as ``NAME`` itself, then
under ``urdf/`` and ``scenes/``: ``simbench:planar_2r.urdf``, ``simbench:kuka_cubes.toml`` and
``simbench:urdf/defects/arm.urdf`` all work. The files are package data, found through
:mod:`importlib.resources`, so they are there in a wheel install as in a checkout.
"""
from __future__ import annotations

import errno
import os
from importlib import resources
from pathlib import Path

from .errors import URDFError, closest, likeness, path_text, shown_path

PYBULLET_DATA_PREFIX = "pybullet_data:"
SIMBENCH_PREFIX = "simbench:"
#: sub-folders of the bundled assets searched for a bare ``simbench:NAME``
_SIMBENCH_SUBDIRS = ("", "urdf", "scenes")


def pybullet_data_dir() -> Path:
    """The folder of URDFs bundled with PyBullet (importing it does not start PyBullet)."""
    import pybullet_data

    return Path(pybullet_data.getDataPath())


def assets_dir() -> Path:
    """The folder of simbench's bundled scenes and URDFs (package data)."""
    return Path(str(resources.files("simbench") / "assets"))


def default_scene_path() -> Path:
    """The bundled scene of Adam Heins's "shortest distances with PyBullet" (KUKA iiwa among cubes)."""
    return assets_dir() / "scenes" / "kuka_cubes.toml"


def resolve_path(spec: str | os.PathLike, relative_to: str | os.PathLike | None = None,
                 what: str = "file") -> Path:
    """Turn ``spec`` into an existing file path.

    ``spec`` is a path (relative paths are taken from ``relative_to`` when given),
    ``pybullet_data:kuka_iiwa/model.urdf`` for a model bundled with PyBullet, or
    ``simbench:planar_2r.urdf`` for a file bundled with simbench.
    """
    text = path_text(spec, what, ", pybullet_data:NAME or simbench:NAME")
    tried: list[Path] = []
    if text.startswith(PYBULLET_DATA_PREFIX):
        tried.append(pybullet_data_dir() / text[len(PYBULLET_DATA_PREFIX):])
    elif text.startswith(SIMBENCH_PREFIX):
        name = text[len(SIMBENCH_PREFIX):]
        tried.extend(assets_dir() / sub / name for sub in _SIMBENCH_SUBDIRS)
    else:
        path = Path(text).expanduser()
        if not path.is_absolute() and relative_to is not None:
            path = Path(relative_to) / path
        tried.append(path)
    for path in tried:
        try:
            if path.is_file():
                return path.resolve()
        except OSError as exc:   # a name longer than the system takes, say
            raise URDFError(f"{what} {shown_path(text)} cannot be looked up: {exc.strerror}") from None
    links = [t for t in tried if t.is_symlink()]
    if links:   # a link to nothing: dangling, or a loop of links
        try:
            links[0].resolve(strict=True)
            why = "points to no file"
        except RuntimeError:   # Python 3.11-3.12; an OSError with ELOOP from 3.13
            why = "is a loop of symbolic links"
        except OSError as exc:
            why = "is a loop of symbolic links" if exc.errno == errno.ELOOP else \
                f"points to {shown_path(os.readlink(links[0]))}, which does not exist"
        raise URDFError(f"{what} {shown_path(text)} is a symbolic link that {why}; expected a file")
    folders = [t for t in tried if t.is_dir()]
    if folders:
        raise URDFError(f"{what} {shown_path(text)} is a folder; expected a file"
                        f"{_files_in(text, folders[0], what)}")
    hint = ""
    if text.startswith((PYBULLET_DATA_PREFIX, SIMBENCH_PREFIX)):
        looked = dict.fromkeys(str(t.parent) for t in tried)
        hint = f" (looked in {', '.join(looked)})"
    near = _near(text, tried[0])
    if near:
        hint += f"; did you mean {' or '.join(repr(n) for n in near)}?"
    raise URDFError(f"{what} not found: {shown_path(text)}{hint}")


#: the kinds of file a misspelled name is matched against when it has no suffix of its own
_SUFFIXES = (".urdf", ".xacro", ".toml")
#: other suffixes a misspelled name is matched by (a script's)
_OTHER_SUFFIXES = (".py",)


def _near(text: str, first: Path) -> list[str]:
    """Up to three existing files whose names are close to the missing ``text``, written the way
    it was (with its ``pybullet_data:`` or ``simbench:`` prefix): files of the same kind under the
    prefix's folder, or in the folder of a plain path, then (for a plain path) up to two bundled
    files of nearly that name (``kuka_cube.toml`` -> ``simbench:kuka_cubes.toml``)."""
    suffixes = (first.suffix,) if first.suffix in _SUFFIXES + _OTHER_SUFFIXES else _SUFFIXES
    if text.startswith((PYBULLET_DATA_PREFIX, SIMBENCH_PREFIX)):
        prefix, _, name = text.partition(":")
        names, short = _bundled(prefix + ":", suffixes)
        found = dict.fromkeys(names[n] for n in closest(name, names, n=6))
        return [f"{prefix}:{short[p]}" for p in found][:3]
    if first.suffix in _OTHER_SUFFIXES:   # a script: none is bundled; the checkout's scripts/
        return _near_script(text, first)      # folder is looked in too
    near: list[str] = []
    folder = first.parent
    try:
        if folder.is_dir():
            local = {p.name: p for s in suffixes for p in folder.glob(f"*{s}")}
            near = [str(Path(text).parent / n) if Path(text).parent != Path(".") else n
                    for n in closest(first.name, local)]
    except OSError:
        pass
    local = [(_likeness(first.name, Path(n).name), n) for n in near]
    best = max((score for score, _ in local), default=0.0)
    # a bundled file only when it is more alike than every local one ('modle.urdf' beside a
    # local model.urdf means that file), and then first
    bundled = [(score, n) for score, n in _near_bundled(first, suffixes)[:2] if score > best]
    ranked = sorted(local + bundled, key=lambda pair: -pair[0])
    return [n for _, n in ranked][:3]


def _near_script(text: str, first: Path) -> list[str]:
    """Scripts named nearly ``text``: those beside it and in a ``scripts/`` folder there (run from
    a checkout, ``scenario_free_body.py`` is ``scripts/scenario_free_body.py``), by the likeness
    of their names without '.py' (on whole names, any two scripts were alike: 'script.py' was
    offered for 'scenario_computed_torque.py')."""
    candidates: list[str] = []
    base = Path(text).parent
    for sub in ("", "scripts"):
        try:
            if (first.parent / sub).is_dir():
                candidates += [str(base / sub / p.name) if base != Path(".") else str(Path(sub) / p.name)
                               for p in (first.parent / sub).glob("*.py")]
        except OSError:
            pass
    scored = sorted(((_likeness(first.name, Path(c).name), c) for c in candidates), key=lambda x: -x[0])
    return [c for score, c in scored if score >= SCRIPT_LIKENESS][:3]


#: how alike (0 to 1, names without '.py') a script must be to be suggested: 'scenario_free_bdy'
#: is 0.97 like 'scenario_free_body', 'myscrpt' 0.93 like 'myscript'; 'script' is 0.4 like
#: 'scenario_computed_torque'
SCRIPT_LIKENESS = 0.6


def _likeness(name: str, other: str) -> float:
    """How alike two file names are without their suffixes (0 to 1, case ignored)."""
    def stem(n: str) -> str:
        return n.rsplit("/", 1)[-1].split(".", 1)[0]

    return likeness(stem(name), stem(other))


def _bundled(prefix: str, suffixes: tuple[str, ...],
             folders: bool = True) -> tuple[dict[str, Path], dict[Path, str]]:
    """The bundled files under ``prefix`` (``simbench:`` or ``pybullet_data:``) with a suffix of
    ``suffixes``: {a name to match -> the file} (its path under the prefix, and for a file in a
    sub-folder, the folder's name: 'kuka_iiwa.urdf' is kuka_iiwa/model.urdf), and {the file -> its
    shortest name under the prefix}. ``folders=False``: no folder names."""
    roots = [pybullet_data_dir()] if prefix == PYBULLET_DATA_PREFIX else \
        [assets_dir() / sub for sub in _SIMBENCH_SUBDIRS]
    names: dict[str, Path] = {}
    short: dict[Path, str] = {}
    for root in roots:
        for s in suffixes:
            for p in sorted(root.rglob(f"*{s}")) if root.is_dir() else ():
                rel = p.relative_to(root).as_posix()
                names.setdefault(rel, p)
                if folders and p.parent != root:
                    names.setdefault(p.parent.name + p.suffix, p)
                if p not in short or len(rel) < len(short[p]):
                    short[p] = rel
    return names, short


def _near_bundled(first: Path, suffixes: tuple[str, ...]) -> list[tuple[float, str]]:
    """Bundled files (``simbench:`` ones first) whose name, without its suffix, is nearly the
    plain path's, with their likeness, best first: ``kuka_cube.toml`` ->
    ``simbench:kuka_cubes.toml``, ``kuka_iiwa.urdf`` -> ``pybullet_data:kuka_iiwa/model.urdf``."""
    scored: dict[str, float] = {}
    for prefix in (SIMBENCH_PREFIX, PYBULLET_DATA_PREFIX):
        # a folder names a robot in pybullet_data (kuka_iiwa/model.urdf), a kind of file in
        # simbench's assets (scenes/, urdf/): 'scen.toml' is not 'simbench:scenes/chain_fixed.toml'
        names, short = _bundled(prefix, suffixes, folders=prefix == PYBULLET_DATA_PREFIX)
        for name, p in names.items():
            if first.suffix in suffixes and Path(name).suffix != first.suffix:
                continue
            score = _likeness(first.name, name)
            given, other = (n.rsplit("/", 1)[-1].split(".", 1)[0].lower() for n in (first.name, name))
            if len(given) >= 3 and other.startswith(given + "_"):   # 'kuka.urdf': kuka_iiwa/model.urdf
                score = max(score, 0.8)
            spelled = f"{prefix}{short[p]}"
            if score >= 0.8 and score > scored.get(spelled, 0.0):
                scored[spelled] = score
    return sorted(((v, k) for k, v in scored.items()), key=lambda pair: -pair[0])


def _files_in(text: str, folder: Path, what: str) -> str:
    """``", e.g. 'simbench:planar_2r.urdf', ..."``: three files of the kind ``what`` names
    (URDF, scene, else any of :data:`_SUFFIXES`) in ``folder``, written the way ``text`` was."""
    kind = {"URDF file": (".urdf", ".xacro"), "scene file": (".toml",), "script": (".py",)}.get(what, _SUFFIXES)
    try:
        files = sorted((p for s in kind for p in folder.rglob(f"*{s}")),
                       key=lambda p: (len(p.relative_to(folder).parts), str(p)))[:3]
    except OSError:
        return ""
    head = text if text.endswith((":", "/")) or not text else text + "/"
    shown_files = [head + p.relative_to(folder).as_posix() for p in files]
    return f", e.g. {', '.join(map(repr, shown_files))}" if shown_files else ""


def resolve_urdf(spec: str | os.PathLike, relative_to: str | os.PathLike | None = None) -> Path:
    """:func:`resolve_path` for a URDF file."""
    return resolve_path(spec, relative_to, "URDF file")
