"""Where URDF files are: plain paths and ``pybullet_data:NAME`` references."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import URDFError

PYBULLET_DATA_PREFIX = "pybullet_data:"


def pybullet_data_dir() -> Path:
    """The folder of URDFs bundled with PyBullet (importing it does not start PyBullet)."""
    import pybullet_data

    return Path(pybullet_data.getDataPath())


def resolve_urdf(spec: str | os.PathLike, relative_to: str | os.PathLike | None = None) -> Path:
    """Turn ``spec`` into an existing file path.

    ``spec`` is a path (relative paths are taken from ``relative_to`` when given) or
    ``pybullet_data:kuka_iiwa/model.urdf`` for a model bundled with PyBullet.
    """
    text = os.fspath(spec)
    if text.startswith(PYBULLET_DATA_PREFIX):
        path = pybullet_data_dir() / text[len(PYBULLET_DATA_PREFIX):]
    else:
        path = Path(text).expanduser()
        if not path.is_absolute() and relative_to is not None:
            path = Path(relative_to) / path
    if not path.is_file():
        hint = ""
        if text.startswith(PYBULLET_DATA_PREFIX):
            hint = f" (looked in {pybullet_data_dir()})"
        raise URDFError(f"URDF file not found: {text!r}{hint}")
    return path.resolve()
