"""``simbench sweep collision SCENE``: configurations -> distances and in-collision flags of the
scene's named pairs (optionally witness points), on the collision detector.

Robots (``robots=``, ``--robot NAME`` repeated): the bodies whose movable joints ``q`` sets, each
sampled within its own joint limits; default the scene's robot (its ``robot`` key). With several,
``q`` stacks them in the order given and its columns say whose joint: ``q(left/lbr_iiwa_joint_1)``
(the :class:`~simbench.bullet.collision.CollisionDetector`'s ``joint_names``), as must the
columns of a ``configs`` file (N x total dof). Other robots stay at their scene configuration,
and one warning line names the pairs that involve no swept robot (the same in every row).

Rows: ``sample``, the configuration ``q(joint)`` (the swept robots' movable joints, file order),
``distance(A, B)`` per pair (signed, metres, saturating at ``max_distance``),
``in_collision(A, B)`` (distance < ``margin``) and ``any_collision``; with ``witness``,
``point_a(A, B).x/y/z`` and ``point_b(A, B).x/y/z`` (world frame; NaN when nothing lies within
``max_distance``).

Pairs (``pairs=``): ``"world"``, each swept robot (whole) against each other body, one pair per
body, two swept robots once; ``"self"``, each swept robot's default self-collision pairs
(MoveIt-like sampled matrix, see :mod:`simbench.bullet.collision_sampling`); ``"all"`` (default),
both. Or a list of explicit
pairs ``("robot/lbr_iiwa_link_7", "cube1")``: ``body`` is the whole body (every link, the base
included: the pair the collision detector and ``sim.detector`` compute), ``body/link`` one
link, ``body/(base)`` the base link, ``robot/(moving)`` a swept robot's links that move with ``q``
(the whole robot but its base and the links welded to it).

A ``"world"`` pair is ``(robot, body)``, the detector's pair, unless the robot's fixed links
(the base and the links welded to it, which never move with ``q``) are closer to that body than
``margin`` or touch it (:data:`TOUCHING`): then the whole robot would be in collision with it, or
at the same distance, in every configuration (a base resting on the ground), so the pair is
``(robot/(moving), body)``, its columns say so (``distance(robot/(moving), ground)``) and one
warning line gives the fixed links' distance. This holds per swept robot; for two swept robots
whose fixed links touch each other, the pair is ``(a/(moving), b/(moving))``. Pairs and helpers:
:mod:`simbench.sweep.collision_pairs`.

Configurations: uniform within the joint limits (:mod:`simbench.sweep.sampling`; joints without
limits in [-pi, pi] rad or [-1, 1] m), or the rows of a ``.npy``/Parquet file (``configs=``): a
``.npy`` file is memory-mapped (each chunk reads its rows), a Parquet file is read once per
worker (N x dof floats; prefer ``.npy`` for inputs larger than memory). Every worker needs the
file at the same path (it is checked by its SHA-256).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SimbenchError, degrees_hint, shown, shown_path
from ..paths import resolve_path
from .collision_pairs import (MOVING, PAIR_SETS, TOUCHING, bad_pair_set, explicit_pairs, label, moving_notes,
                              nothing_left, parse_object, scene_pairs, still_notes, swept_robots)
from .jobs import Chunk, JobSpec, file_entry, labelled, scalar
from .sampling import check_seed, config_path, file_rows, read_rows, uniform

DEFAULT_CHUNK = 10_000
DEGREES_ROWS = 100_000


def _as_json(obj: Any) -> list:
    return [obj.body, obj.link]


def prepare(targets: list[str], *, samples: Any = None, seed: Any = 0, chunk_size: int | None = None,
            pairs: Any = "all", max_distance: float = 1.0, margin: float = 0.0, witness: bool = False,
            configs: str | None = None, robots: Any = None, **unused: Any) -> JobSpec:
    """The spec of a collision sweep over the scene ``targets[0]`` (see the module docstring)."""
    from .._quiet import import_pybullet
    from ..bullet.collision import CollisionDetector
    from ..bullet.collision_setup import check_distance
    from ..bullet.collision_world import link_limits, turn_limits
    from ..bullet.scene import Scene
    from .jobs import check_count

    p = import_pybullet()
    if len(targets) != 1:
        raise SimbenchError(f"sweep collision takes one SCENE (a scene TOML file or simbench:NAME); got {len(targets)}")
    if unused:
        raise SimbenchError(f"sweep collision does not take {', '.join(sorted(unused))}")
    path = resolve_path(targets[0], what="scene file")
    if path.suffix.lower() in (".urdf", ".xacro"):   # else read as TOML: "not valid TOML"
        raise SimbenchError(f"sweep collision takes a scene (a TOML file); {shown_path(targets[0])} is "
                            f"a URDF (sweep dynamics takes a URDF)")
    scene = Scene.from_toml(path)
    md = check_distance(max_distance, "max_distance", minimum=0.0)
    mg = check_distance(margin, "margin")
    if mg > md:
        raise SimbenchError(f"margin = {mg:g} m exceeds max_distance = {md:g} m (distances saturate there); "
                            "expected margin <= max_distance")
    client = p.connect(p.DIRECT)
    try:
        loaded = scene.load(client, quiet=True)
        swept = swept_robots(loaded, robots, targets[0])
        if isinstance(pairs, str):
            if pairs not in PAIR_SETS:
                raise SimbenchError(bad_pair_set(pairs, loaded, swept))
            chosen, disabled, moving = scene_pairs(loaded, pairs, md, mg, swept)
        else:
            chosen, disabled, moving = explicit_pairs(loaded, pairs, swept)
        det = CollisionDetector(loaded, chosen, disabled=disabled or None, robot=None if robots is None else swept)
        off = det.filtered   # pairs the scene's filters never let touch: a column of max_distance in every row
        if any(off):
            det = CollisionDetector(loaded, [pr for pr, f in zip(det.pairs, off) if not f],
                                    disabled=disabled or None, robot=None if robots is None else swept)
        if not det.pairs:
            why = f": {nothing_left(loaded, pairs, swept)}" if isinstance(pairs, str) else ""
            raise SimbenchError(f"scene {shown_path(targets[0])}: no collision pairs left to check "
                                f"(pairs = {shown(pairs)}){why}")
        if det.robots != swept or det.dof == 0:
            raise SimbenchError(f"scene {shown_path(targets[0])}: expected one robot with movable joints, got {list(det.robots)}")
        joints = list(det.joint_names)
        limits = [link_limits(b) for b in det.robot_bodies]
        low, high = [x for lo, _ in limits for x in lo], [x for _, hi in limits for x in hi]
        turns = tuple(np.concatenate(part) for part in zip(*(turn_limits(b) for b in det.robot_bodies)))
        files = [file_entry("scene", path)] + [file_entry(f"urdf:{b.name}", b.path) for b in scene.bodies]
        kept = [[_as_json(a), _as_json(b)] for a, b in det.pairs]
        kept_disabled = [[_as_json(a), _as_json(b)] for a, b in disabled]
        labels = [label(pr, moving) for pr in det.pairs]
        notes = moving_notes(loaded, moving, det.pairs, mg) + still_notes(loaded, det, labels, robots is not None)
    finally:
        p.disconnect(physicsClientId=client)
    if configs is not None:
        config_file = config_path(configs)
        files.append(file_entry("configs", config_file))
        rows = file_rows(config_file, joints, shown_as=str(configs))
        n = rows if samples is None else check_count(samples, "samples")
        if n > rows:
            raise SimbenchError(f"samples = {n} but configuration file {shown_path(configs)} has {rows} rows")
        sampler: dict[str, Any] = {"kind": "file"}
        notes += _degrees_note(config_file, configs, joints, rows, turns)
        seed_v = None
    else:
        if samples is None:
            raise SimbenchError("samples is missing; expected the number of configurations (--samples N), "
                                "or a configuration file (--configs FILE.npy)")
        n = check_count(samples, "samples")
        seed_v = check_seed(seed)
        sampler = {"kind": "uniform", "low": low, "high": high}
    arrays = [scalar("sample", "int64"), labelled("q", "float64", joints),
              labelled("distance", "float64", labels), labelled("in_collision", "bool", labels),
              scalar("any_collision", "bool")]
    if witness:
        arrays += [labelled("point_a", "float64", labels, "xyz"), labelled("point_b", "float64", labels, "xyz")]
    robot: Any = det.robots[0] if len(det.robots) == 1 else list(det.robots)   # one robot: as before --robot
    options = (("robot", robot), ("joints", joints), ("pairs", kept), ("disabled", kept_disabled),
               ("max_distance", md), ("margin", mg), ("witness", bool(witness)), ("sampler", sampler))
    chunk = check_count(DEFAULT_CHUNK if chunk_size is None else chunk_size, "chunk_size")
    return JobSpec("collision", n, chunk, seed_v, tuple(arrays), tuple(files), options, notes=notes)


def _degrees_note(path: Any, shown_as: Any, joints: list[str], rows: int, turns: tuple) -> tuple[str, ...]:
    """The line saying that a configuration file's angles look like degrees (its first
    DEGREES_ROWS rows judged by :func:`~simbench.errors.degrees_hint`), or nothing."""
    head = min(rows, DEGREES_ROWS)
    hint = degrees_hint(read_rows(path, joints, 0, head), joints, *turns)
    if not hint:
        return ()
    part = f" (its first {head:,} rows checked)" if head < rows else ""
    return (f"configuration file {shown_path(shown_as)}{part}: {hint}; swept as radians",)


class CollisionRunner:
    """The scene loaded into this process's own DIRECT server, once; the detector on it."""

    def __init__(self, spec: JobSpec):
        from .._quiet import import_pybullet
        from ..bullet.collision import CollisionDetector, NamedCollisionObject
        from ..bullet.scene import Scene

        self.spec = spec
        self._p = p = import_pybullet()
        self.client = p.connect(p.DIRECT)
        try:
            loaded = Scene.from_toml(spec.path("scene")).load(self.client, quiet=True)
            obj = lambda o: NamedCollisionObject(o[0], o[1])  # noqa: E731
            pairs = [(obj(a), obj(b)) for a, b in spec.option("pairs")]
            disabled = [(obj(a), obj(b)) for a, b in spec.option("disabled")] or None
            self.det = CollisionDetector(loaded, pairs, robot=spec.option("robot"), disabled=disabled,
                                         check_units=False)   # the driver judged the rows: one line, not one per worker
            if [[_as_json(a), _as_json(b)] for a, b in self.det.pairs] != spec.option("pairs") \
                    or list(self.det.joint_names) != spec.option("joints"):
                raise SimbenchError("the scene resolves to other pairs or joints in this worker than in the driver")
            self.configs = spec.path("configs") if spec.option("sampler")["kind"] == "file" else None
            self._rows: np.ndarray | None = None
        except BaseException:
            self.close()
            raise

    def inputs(self, chunk: Chunk) -> np.ndarray:
        sampler = self.spec.option("sampler")
        if sampler["kind"] == "file":
            if self.configs.suffix == ".npy":  # memory-mapped: only the chunk's rows are read
                return read_rows(self.configs, self.spec.option("joints"), chunk.start, chunk.stop)
            if self._rows is None:  # Parquet: read once per worker (N x dof floats)
                self._rows = read_rows(self.configs, self.spec.option("joints"), 0, None)
            return self._rows[chunk.start:chunk.stop]
        return uniform(self.spec.seed, chunk.start, chunk.stop, sampler["low"], sampler["high"])

    def run(self, chunk: Chunk) -> dict[str, Any]:
        q = self.inputs(chunk)
        md, mg = self.spec.option("max_distance"), self.spec.option("margin")
        out: dict[str, Any] = {"sample": np.arange(chunk.start, chunk.stop), "q": q}
        if self.spec.option("witness"):
            cp = self.det.closest_point_arrays(q, md, workers=1)
            d = cp["distance"]
            out.update(point_a=cp["point_a"], point_b=cp["point_b"])
        else:
            d = self.det.compute_distances(q, md, workers=1)
        flags = d < mg
        out.update(distance=d, in_collision=flags, any_collision=flags.any(axis=1))
        return out

    def close(self) -> None:
        if self.client >= 0 and self._p.isConnected(physicsClientId=self.client):
            self._p.disconnect(physicsClientId=self.client)
        self.client = -1


def summarize(result: dict[str, Any]) -> dict[str, int]:
    return {"in collision": int(np.count_nonzero(result["any_collision"]))}


def open_runner(spec: JobSpec) -> CollisionRunner:
    return CollisionRunner(spec)


__all__ = ["prepare", "open_runner", "CollisionRunner", "parse_object", "PAIR_SETS", "DEFAULT_CHUNK", "MOVING",
           "TOUCHING"]
