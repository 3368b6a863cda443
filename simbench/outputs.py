"""Output paths checked before the work starts, so that an unwritable ``--json`` or ``--out``
fails in one line at once instead of with a traceback after minutes of work."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import SimbenchError


def writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` as a Path whose folder exists (created) and is writable, and which is not a
    folder itself; a :class:`SimbenchError` naming the path otherwise. Nothing is written."""
    out = Path(path).expanduser()
    if out.is_dir():
        raise SimbenchError(f"{what} {str(path)!r} is a folder; expected a file path")
    writable_dir(out.parent if str(out.parent) else Path("."), f"folder of the {what}")
    if out.exists() and not os.access(out, os.W_OK):
        raise SimbenchError(f"{what} {str(path)!r} is not writable; expected a path you can write to")
    return out


def writable_dir(path: str | os.PathLike, what: str = "output folder") -> Path:
    """``path`` as an existing (created if needed) writable folder; a :class:`SimbenchError`
    naming the path otherwise."""
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise SimbenchError(f"{what} {str(path)!r} is a file; expected a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SimbenchError(f"{what} {str(path)!r} cannot be created ({exc.strerror}); "
                            "expected a folder you can write to") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise SimbenchError(f"{what} {str(path)!r} is not writable; expected a folder you can write to")
    return out


__all__ = ["writable_file", "writable_dir"]
