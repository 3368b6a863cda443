"""Output paths checked before the work starts, so that an unwritable ``--json`` or ``--out``
fails in one line at once instead of with a traceback after minutes of work.

The checks try for real: the folder is created, and a temporary file is created in it (and
removed) or an existing file is opened for appending (nothing written). Permission bits alone
are not enough: for root every folder passes ``os.access``, yet ``/proc`` refuses new files.
"""
from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from .errors import SimbenchError, shown_path


def writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` as a Path whose folder exists (created) and accepts new files, and which is not
    a folder itself (an existing file must open for writing); a :class:`SimbenchError` naming
    the path otherwise. Nothing is left behind."""
    out = Path(path).expanduser()
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
    """``path`` as an existing (created if needed) folder that accepts new files (a temporary
    file is created in it and removed); a :class:`SimbenchError` naming the path otherwise."""
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise SimbenchError(f"{what} {shown_path(str(path))} is a file; expected a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimbenchError(f"{what} {shown_path(str(path))} cannot be created ({exc.strerror}); "
                            "expected a folder you can write to") from None
    try:
        with tempfile.NamedTemporaryFile(dir=out, prefix=".simbench-write-test-"):  # removed on close
            pass
    except OSError as exc:   # the folder exists: ENOENT here means it takes no new files (/proc)
        why = "it takes no new files" if exc.errno == errno.ENOENT else exc.strerror
        raise SimbenchError(f"{what} {shown_path(str(path))} is not writable ({why}); expected a folder "
                            "you can write to") from None
    return out


__all__ = ["writable_file", "writable_dir"]
