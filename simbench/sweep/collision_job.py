"""``simbench sweep collision SCENE``: configurations -> distances and in-collision flags of the
scene's named pairs (optionally witness points), on the collision detector.

Rows: ``sample``, the configuration ``q(joint)`` (the robot's movable joints, file order),
``distance(A, B)`` per pair (signed, metres, saturating at ``max_distance``),
``in_collision(A, B)`` (distance < ``margin``) and ``any_collision``; with ``witness``,
``point_a(A, B).x/y/z`` and ``point_b(A, B).x/y/z`` (world frame; NaN when nothing lies within
``max_distance``).

Pairs (``pairs=``): ``"world"``, the whole robot against each other body, one pair per body;
``"self"``, the robot's default self-collision pairs (MoveIt-like sampled matrix, see
:mod:`simbench.bullet.collision_sampling`); ``"all"`` (default), both. Or a list of explicit
pairs ``("robot/lbr_iiwa_link_7", "cube1")``: ``body`` is the whole body (every link, the base
included: the pair the collision detector and ``sim.detector`` compute), ``body/link`` one
link, ``body/(base)`` the base link, ``robot/(moving)`` the robot's links that move with ``q``
(the whole robot but its base and the links welded to it).

A ``"world"`` pair is ``(robot, body)``, the detector's pair, unless the robot's fixed links
(the base and the links welded to it, which never move with ``q``) are closer to that body than
``margin`` or touch it (:data:`TOUCHING`): then the whole robot would be in collision with it, or
at the same distance, in every configuration (a base resting on the ground), so the pair is ``(robot/(moving), body)``, its columns say so
(``distance(robot/(moving), ground)``) and one warning line gives the fixed links' distance.

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
from .jobs import Chunk, JobSpec, file_entry, labelled, scalar
from .sampling import check_seed, config_path, file_rows, read_rows, uniform

DEFAULT_CHUNK = 10_000
PAIR_SETS = ("all", "world", "self")


#: fixed links this close to a body (m) touch it: their distance, the same in every row, would
#: make the whole robot's column constant (a base resting exactly on the ground: 2.2e-16 m)
TOUCHING = 1e-6
#: ``robot/(moving)``: the robot's links that move with ``q`` (not its base, nor links welded to it)
MOVING = "(moving)"


def parse_object(text: str) -> tuple[str, str | None]:
    """``body`` -> (body, "*") (whole body); ``body/link`` -> (body, link); ``body/(base)`` ->
    (body, None); ``robot/(moving)`` -> (robot, :data:`MOVING`)."""
    from ..bullet.collision_names import ALL_LINKS

    body, sep, link = str(text).partition("/")
    if not body or (sep and not link):
        raise SimbenchError(f"collision object {shown(text)}: expected BODY (the whole body), BODY/LINK, "
                            f"BODY/(base) or ROBOT/(moving)")
    if not sep:
        return body, ALL_LINKS
    return body, (None if link == "(base)" else link)


def _fixed_links(loaded: Any, robot: str) -> list[str]:
    """The robot's links with geometry that never move with q: the base and the links welded to it."""
    from ..bullet.collision_world import facts

    f = facts(loaded.body(robot))
    return [f.names[i] for i in sorted(f.geometry) if f.group[i] == -1]


def _fixed_distance(loaded: Any, robot: str, fixed: list[str], other: Any, md: float) -> float:
    """Distance (saturating at ``md``) of the robot's fixed links to ``other`` (an object), the same
    in every configuration; ``md`` if the scene's filters leave no such pair to check."""
    from ..bullet.collision import CollisionDetector, NamedCollisionObject

    with CollisionDetector(loaded, [(NamedCollisionObject(robot, s), other) for s in fixed], robot=robot) as det:
        return float(det.compute_distances(None, md).min()) if det.pairs else md


def _scene_pairs(loaded: Any, which: str, md: float, margin: float) -> tuple[list, list, dict]:
    """(pairs, disabled, moving) for a pair set: the whole robot vs each other body, and/or the
    self pairs. ``moving``: {pair: the fixed links' distance} for the world pairs whose fixed
    links are closer than ``margin`` to the other body; they are left out of those pairs only
    (``robot/(moving)``), see the module docstring."""
    from ..bullet.collision import NamedCollisionObject, self_collision_pairs

    robot = loaded.robot_name
    pairs, disabled, moving = [], [], {}
    if which in ("all", "world"):
        fixed = _fixed_links(loaded, robot)
        for other in loaded.bodies:
            if other == robot:
                continue
            pair = (NamedCollisionObject(robot), NamedCollisionObject(other))
            pairs.append(pair)
            if fixed:
                d = _fixed_distance(loaded, robot, fixed, pair[1], md)
                if d < margin + TOUCHING:   # a base resting on the ground, to round-off, too
                    moving[pair] = d
                    disabled += [(NamedCollisionObject(robot, s), pair[1]) for s in fixed]
    if which in ("all", "self"):
        pairs += self_collision_pairs(loaded, robot)
    return pairs, disabled, moving


def _explicit_pairs(loaded: Any, given: Any) -> tuple[list, list, dict]:
    """(pairs, disabled, moving) for explicit pairs; ``robot/(moving)`` is the whole robot with
    its fixed links left out of that pair (refused beside another pair of the robot and that body,
    whose links the exclusion would also leave out)."""
    from ..bullet.collision import NamedCollisionObject
    from ..bullet.collision_names import as_object, as_pair

    robot = loaded.robot_name
    pairs, disabled, moving = [], [], {}
    for pr in given:
        if isinstance(pr, str) or not hasattr(pr, "__len__") or len(pr) != 2:
            as_pair(pr)  # one line: a pair must be two objects
        objs = [NamedCollisionObject(*parse_object(x)) if isinstance(x, str) else as_object(x) for x in pr]
        marked = [i for i, o in enumerate(objs) if o.link == MOVING]
        if marked:
            if len(marked) == 2 or objs[marked[0]].body != robot:
                raise SimbenchError(f"pair {shown(tuple(pr))}: BODY/(moving) is the robot's moving links "
                                    f"({robot}/(moving)) against another body")
            other = objs[1 - marked[0]]
            objs[marked[0]] = NamedCollisionObject(robot)
            moving[tuple(objs)] = None
            disabled += [(NamedCollisionObject(robot, s), other) for s in _fixed_links(loaded, robot)]
        pairs.append(tuple(objs))
    for pair in moving:
        other = pair[1] if pair[0] == NamedCollisionObject(robot) else pair[0]
        for a, b in pairs:
            if (a, b) not in moving and {a.body, b.body} == {robot, other.body}:
                raise SimbenchError(f"pairs ({a}, {b}) and ({robot}/(moving), {other}) in one sweep; expected "
                                    "one of them (leaving the fixed links out of one leaves them out of both)")
    return pairs, disabled, moving


def _label(pair: tuple, moving: dict, robot: str) -> str:
    """``A, B`` of a column name; ``robot/(moving)`` for a pair without the robot's fixed links."""
    names = [str(o) for o in pair]
    if pair in moving:
        names = [f"{robot}/{MOVING}" if o.body == robot and o.whole_body else str(o) for o in pair]
    return ", ".join(names)


def _bad_pair_set(pairs: str, loaded: Any) -> str:
    """The one line for ``--pairs`` that is no pair set: the closest set, or a body name's pair."""
    from ..errors import closest

    near = closest(pairs, PAIR_SETS, n=1)
    body = closest(pairs, [b for b in loaded.bodies if b != loaded.robot_name], n=1)
    if pairs in loaded.bodies and pairs != loaded.robot_name:
        hint = f"; for the robot against that body: --pair {loaded.robot_name} {pairs}"
    elif near:
        hint = f"; did you mean {near[0]!r}?"
    elif body:
        hint = f"; for the robot against a body: --pair {loaded.robot_name} {body[0]}"
    else:
        hint = ""
    return f"pairs = {shown(pairs)}; expected one of {', '.join(PAIR_SETS)} or explicit pairs (--pair A B){hint}"


def _nothing_left(loaded: Any, which: str) -> str:
    """Why a pair set is empty: no other body (world), and for the self pairs too few links with
    geometry, only adjacent ones, or every other pair disabled by the default allowed-collision
    matrix (by reason, with a pair to give as --pair to check it anyway)."""
    from ..bullet.collision_sampling import ALWAYS, SAMPLES, default_disabled
    from ..bullet.collision_world import candidate_self_pairs, facts

    robot = loaded.robot_name
    parts = []
    if which in ("all", "world"):
        others = [b for b in loaded.bodies if b != robot]
        parts.append("no body in the scene but the robot" if not others else
                     "the scene's collision filters exclude the robot against every other body")
    if which in ("all", "self"):
        b = loaded.body(robot)
        f = facts(b)
        free = candidate_self_pairs(b, exclude_adjacent=True)
        if len(f.geometry) < 2:
            n = {0: "no link", 1: "one link"}[len(f.geometry)]
            parts.append(f"robot {robot!r} has {n} with collision geometry, so no pair of links")
        elif not free:
            parts.append(f"every pair of links with collision geometry of robot {robot!r} is adjacent (one "
                         "joint apart) or welded together")
        else:
            reasons = {frozenset((d.link1, d.link2)): d.reason for d in default_disabled(b)}
            names = [(f.names[i], f.names[j]) for i, j in free]
            words = {"Never": f"never in collision in {SAMPLES:,} sampled configurations",
                     "Always": f"in collision in >= {ALWAYS:.0%} of them", "Default": "in collision at q = 0"}
            counts: dict[str, int] = {}
            for pr in names:
                r = reasons.get(frozenset(pr), "other")
                counts[r] = counts.get(r, 0) + 1
            by = ", ".join(f"{n} {words.get(r, 'disabled otherwise (collision filters)')}" for r, n in counts.items())
            a, c = names[0]
            parts.append(f"the default allowed-collision matrix of robot {robot!r} disables all {len(names)} of its "
                         f"non-adjacent link pairs ({by}); to check one anyway: --pair {robot}/{a} {robot}/{c}")
    return "; ".join(parts)


DEGREES_ROWS = 100_000


def _as_json(obj: Any) -> list:
    return [obj.body, obj.link]


def prepare(targets: list[str], *, samples: Any = None, seed: Any = 0, chunk_size: int | None = None,
            pairs: Any = "all", max_distance: float = 1.0, margin: float = 0.0, witness: bool = False,
            configs: str | None = None, **unused: Any) -> JobSpec:
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
        if isinstance(pairs, str):
            if pairs not in PAIR_SETS:
                raise SimbenchError(_bad_pair_set(pairs, loaded))
            chosen, disabled, moving = _scene_pairs(loaded, pairs, md, mg)
        else:
            chosen, disabled, moving = _explicit_pairs(loaded, pairs)
        det = CollisionDetector(loaded, chosen, disabled=disabled or None)
        if not det.pairs:
            why = f": {_nothing_left(loaded, pairs)}" if isinstance(pairs, str) else ""
            raise SimbenchError(f"scene {shown_path(targets[0])}: no collision pairs left to check "
                                f"(pairs = {shown(pairs)}){why}")
        if len(det.robots) != 1 or det.dof == 0:
            raise SimbenchError(f"scene {shown_path(targets[0])}: expected one robot with movable joints, got {list(det.robots)}")
        joints = list(det.joint_names)
        low, high = link_limits(det.robot_body)
        turns = turn_limits(det.robot_body)
        files = [file_entry("scene", path)] + [file_entry(f"urdf:{b.name}", b.path) for b in scene.bodies]
        kept = [[_as_json(a), _as_json(b)] for a, b in det.pairs]
        kept_disabled = [[_as_json(a), _as_json(b)] for a, b in disabled]
        labels = [_label(pr, moving, det.robots[0]) for pr in det.pairs]
        notes = tuple(f"{a.body}'s fixed links ({', '.join(_fixed_links(loaded, a.body))}) are {d:.3g} m from {b} "
                      f"in every configuration (margin {mg:g} m); column distance({_label((a, b), moving, a.body)}) "
                      f"leaves them out (--pair {a.body} {b}: the whole robot)"
                      for (a, b), d in moving.items() if d is not None and (a, b) in det.pairs)
        notes += _still_notes(loaded, det, labels)
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
    options = (("robot", det.robots[0]), ("joints", joints), ("pairs", kept), ("disabled", kept_disabled),
               ("max_distance", md), ("margin", mg), ("witness", bool(witness)), ("sampler", sampler))
    chunk = check_count(DEFAULT_CHUNK if chunk_size is None else chunk_size, "chunk_size")
    return JobSpec("collision", n, chunk, seed_v, tuple(arrays), tuple(files), options, notes=notes)


def _still_notes(loaded: Any, det: Any, labels: list[str]) -> tuple[str, ...]:
    """Lines on what the sweep does not move: the scene's other robots (at their scene
    configuration), and the pairs neither of whose sides is the swept robot (their columns are
    the same in every row)."""
    robot = det.robots[0]
    others = [n for n in loaded.bodies if n != robot and loaded.body(n).movable_indices]
    out = []
    if others:
        out.append(f"the scene has other robots ({', '.join(others)}): they stay at their scene configuration; "
                   f"sweep collision moves {robot!r} only (the scene's robot key chooses it)")
    still = [label for (a, b), label in zip(det.pairs, labels) if robot not in (a.body, b.body)]
    if still:
        out.append(f"{'pair' if len(still) == 1 else 'pairs'} {', '.join(f'({x})' for x in still)} "
                   f"{'does' if len(still) == 1 else 'do'} not move with the swept robot {robot!r}: the same distance in every row")
    return tuple(out)


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


__all__ = ["prepare", "open_runner", "CollisionRunner", "parse_object", "PAIR_SETS", "DEFAULT_CHUNK", "MOVING"]
