"""The optional extras of simbench: what each installs and enables, and one way to import them.

Each optional dependency is imported only where it is used, through :func:`require`, so a missing
one gives one line naming the extra (``pip install 'simbench[plot]'``) instead of an ImportError.
The table below is the single source of the README's table of extras (a test compares them with
``pyproject.toml``).
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import NamedTuple

from .errors import MissingExtraError


class Extra(NamedTuple):
    name: str
    modules: tuple[str, ...]   # import names it provides
    enables: str
    planned: bool = False      # added by a feature still under way


EXTRAS: tuple[Extra, ...] = (
    Extra("symbolic", ("sympy",), "`simbench.dynamics.symbolic`: M, C, g as sympy expressions, "
          "`lambdify()`, generated C"),
    Extra("plot", ("matplotlib",), "plots of `simbench check --plot` and of the scenario scripts"),
    Extra("video", ("PIL", "imageio_ffmpeg"), "`--record` / `sim.record()` to GIF (Pillow) or MP4 (ffmpeg)"),
    Extra("xacro", ("xacro",), "loading `.xacro` / `.urdf.xacro` files (`--xacro-arg name:=value`)"),
    Extra("docs", ("mkdocs", "mkdocstrings"), "building the documentation site (`mkdocs build --strict`)"),
    Extra("test", ("pytest", "pinocchio"), "the test suite (Pinocchio, hypothesis, sympy, matplotlib, "
          "Pillow, ffmpeg, xacro, ray, pyarrow, jax)"),
    Extra("sweep", ("ray", "pyarrow"), "`simbench sweep --engine ray` on a Ray cluster; reading sweep "
          "output with pyarrow (writing needs no extra)"),
    Extra("autodiff", ("jax",), "`simbench.dynamics.autodiff`: derivatives of the dynamics with jax"),
)


def install_hint(extra: str) -> str:
    """How to install ``extra``, in the words of every missing-extra message.

    >>> install_hint("video")
    "install the 'video' extra: pip install 'simbench[video]'"
    """
    return f"install the '{extra}' extra: pip install 'simbench[{extra}]'"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`~simbench.errors.MissingExtraError` naming ``extra``.

    >>> require("math", "none", "arithmetic").sqrt(4.0)
    2.0
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(module.split(".")[0], extra, purpose) from None


__all__ = ["Extra", "EXTRAS", "require", "install_hint"]
