"""Output paths checked before the work starts, so that an unwritable ``--json`` or ``--out``
fails in one line at once instead of with a traceback after minutes of work.

The checks create nothing: a folder that does not exist yet is judged by its nearest existing
ancestor, which must be a folder (no part of the path a file) in which a new folder can be made
(a temporary one is made and removed); an existing folder must take a new file (a temporary
file is made and removed), an existing file must open for appending (nothing written). Permission
bits alone are not enough: for root every folder passes ``os.access``, yet ``/proc`` refuses new
files. The folders are made by :func:`parent_made` / :func:`folder_made` when the output is
written, so a command that stops with a usage error leaves no folder behind.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from .errors import SimbenchError, path_text, shown_path

#: the only picture format written (:func:`simbench.imaging.write_png`)
PICTURE_SUFFIX = ".png"


def _path(path: object, what: str) -> Path:
    """``path`` (a str or os.PathLike) as a Path, or one line naming what came instead."""
    return Path(path_text(path, what)).expanduser()


def distinct_outputs(folders: tuple[str, ...] = (), **given: str | os.PathLike | None) -> None:
    """Refuse two options naming one path (``--json r.json --markdown r.json``: the second
    report overwrote the first, exit 0; ``--json x.json --plot x.json`` made a folder the JSON
    could then not be written to), or a path under a file option's path. Keywords are option
    names without dashes (None left out); ``folders`` names those that are folders unless they
    end in ``.png`` (a report may go inside one)."""
    paths = {name: Path(os.path.abspath(os.path.expanduser(os.fspath(p)))) for name, p in given.items()
             if p is not None}
    names = list(paths)
    folder = {n: n in folders and paths[n].suffix.lower() != PICTURE_SUFFIX for n in names}
    for i, a in enumerate(names):
        for b in names[i + 1:]:   # one path, or a file where the other puts a folder (or a file under it)
            if paths[a] == paths[b]:
                raise SimbenchError(f"--{a} and --{b} both name {shown_path(os.fspath(given[b]))}; expected a "
                                    f"path of its own for each (e.g. --{b} {_other_name(given[b], b)})")
            for inner, outer in ((a, b), (b, a)):
                if not folder[outer] and paths[outer] in paths[inner].parents:
                    raise SimbenchError(f"--{inner} {shown_path(os.fspath(given[inner]))} is inside the --{outer} "
                                        f"file {shown_path(os.fspath(given[outer]))}; expected a path of its own")


def _other_name(path: object, option: str) -> str:
    """A path beside ``path`` for option ``option``: report.json -> report.md for --markdown."""
    p = Path(os.fspath(path))
    if option == "plot":   # torques.png for one robot's picture, else a folder
        return str(p.with_name(p.stem + ("_plot.png" if p.suffix.lower() == PICTURE_SUFFIX else "_plots")))
    return str(p.with_name(p.stem + {"markdown": ".md", "json": ".json"}.get(option, p.suffix)))


def writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` as a Path whose folder exists or can be made and takes new files, and which is
    not a folder itself (an existing file must open for writing); a :class:`SimbenchError`
    naming the path otherwise. Nothing is created or changed."""
    out = _path(path, what)
    if out.is_dir():
        raise SimbenchError(f"{what} {shown_path(str(path))} is a folder; expected a file path")
    writable_dir(out.parent if str(out.parent) else Path("."), f"folder of the {what}")
    if out.exists():
        try:
            with open(out, "ab"):  # appends nothing: the file is unchanged
                pass
        except OSError as exc:
            raise SimbenchError(f"{what} {shown_path(str(path))} is not writable ({exc.strerror}); expected a path "
                                "you can write to") from None
    return out


def writable_dir(path: str | os.PathLike, what: str = "output folder") -> Path:
    """``path`` as a Path of a folder that takes new files, or that does not exist yet and can
    be made (see the module docstring); a :class:`SimbenchError` naming the path otherwise.
    Nothing is created."""
    out = _path(path, what)
    if out.exists() and not out.is_dir():
        raise SimbenchError(f"{what} {shown_path(str(path))} is a file; expected a folder")
    if not out.is_dir():
        _can_be_made(out, path, what)
        return out
    try:
        with tempfile.NamedTemporaryFile(dir=out, prefix=".simbench-write-test-"):  # removed on close
            pass
    except OSError as exc:   # the folder exists: ENOENT here means it takes no new files (/proc)
        why = "it takes no new files" if exc.errno == errno.ENOENT else exc.strerror
        raise SimbenchError(f"{what} {shown_path(str(path))} is not writable ({why}); expected a folder "
                            "you can write to") from None
    return out


def _can_be_made(out: Path, given: str | os.PathLike, what: str) -> None:
    """Check that the missing folder ``out`` can be made, making nothing that stays: its nearest
    existing ancestor must be a folder in which a (temporary) folder can be made."""
    def refuse(why: str) -> SimbenchError:
        return SimbenchError(f"{what} {shown_path(str(given))} cannot be created ({why}); expected a folder "
                             "you can write to")

    base = out.absolute()
    while not base.exists():
        if base.is_symlink():   # a link to nothing: mkdir would find the name taken
            raise refuse(f"{shown_path(str(base))} is a broken symbolic link")
        base = base.parent
    if not base.is_dir():        # a part of the path is a file
        raise refuse(os.strerror(errno.ENOTDIR))
    try:
        os.rmdir(tempfile.mkdtemp(dir=base, prefix=".simbench-write-test-"))
    except OSError as exc:
        why = "it takes no new folders" if exc.errno == errno.ENOENT else exc.strerror
        raise refuse(why) from None


def png_file(path: str | os.PathLike, option: str, what: str) -> Path:
    """:func:`writable_file` for a picture written as PNG: another extension (``shot.jpg``, whose
    content would be PNG all the same) is a :class:`SimbenchError` naming the PNG name to give."""
    out = Path(path)
    if out.suffix.lower() != PICTURE_SUFFIX:
        good = str(out.with_suffix(PICTURE_SUFFIX)) if out.stem and not out.name.endswith(".") else str(path) + "png"
        raise SimbenchError(f"{option} {shown_path(str(path))}: expected a {PICTURE_SUFFIX} file name, as pictures "
                            f"are written as PNG only (closest valid: {option} {shown_path(good)})")
    return writable_file(path, what)


def parent_made(path: str | os.PathLike) -> Path:
    """``path`` as a Path, its folder made (with its parents) if missing: called when the
    output is written, not when it is checked."""
    out = Path(path).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def folder_made(path: str | os.PathLike) -> Path:
    """The folder ``path`` as a Path, made (with its parents) if missing, when it is written."""
    out = Path(path).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    return out


__all__ = ["writable_file", "writable_dir", "png_file", "parent_made", "folder_made", "PICTURE_SUFFIX"]
