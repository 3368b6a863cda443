"""The robots and pairs of a collision sweep (:mod:`simbench.sweep.collision_job`): which robots
``q`` moves (``robots=``, ``--robot NAME``), the pair sets ``world`` and ``self`` for them,
explicit pairs, the ``robot/(moving)`` pairs that leave a robot's fixed links out, and the
warning lines on what the sweep does not move."""
from __future__ import annotations

from typing import Any

from ..errors import SimbenchError, closest, shown, shown_path

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


def swept_robots(loaded: Any, robots: Any, scene: Any) -> tuple[str, ...]:
    """The robots a sweep moves: ``robots`` (a body name or a sequence of them, each a body of
    the scene with movable joints, once), or the scene's robot when None. One line otherwise,
    naming the bad value, the robots the scene has and the closest name."""
    if robots is None:
        return (loaded.robot_name,)
    names = [robots] if isinstance(robots, str) else robots
    try:
        names = list(names)
    except TypeError:
        names = None
    movable = [b for b in loaded.bodies if loaded.body(b).movable_indices]
    expected = f"expected one of {', '.join(movable)} (its bodies with movable joints)" if movable \
        else "it has no body with movable joints"
    if not names or not all(isinstance(n, str) for n in names):
        raise SimbenchError(f"robots = {shown(robots)}; expected a body name or a sequence of them "
                            f"(--robot NAME, repeatable) among the robots of scene {shown_path(scene)}: "
                            f"{', '.join(movable) or 'none'}")
    for name in names:
        if name not in loaded.bodies:
            near = closest(name, movable or list(loaded.bodies), n=1) or closest(name, list(loaded.bodies), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise SimbenchError(f"robot {shown(name)}: no body of that name in scene {shown_path(scene)}; "
                                f"{expected}{hint}")
        if not loaded.body(name).movable_indices:
            raise SimbenchError(f"robot {shown(name)}: body {name!r} of scene {shown_path(scene)} has no movable "
                                f"joints, nothing to sweep; {expected}")
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise SimbenchError(f"robot {shown(twice[0])} given twice; expected each robot once")
    return tuple(names)


def fixed_links(loaded: Any, robot: str) -> list[str]:
    """The robot's links with geometry that never move with q: the base and the links welded to it."""
    from ..bullet.collision_world import facts

    f = facts(loaded.body(robot))
    return [f.names[i] for i in sorted(f.geometry) if f.group[i] == -1]


def _fixed_distance(loaded: Any, robot: str, pairs: list, md: float) -> float:
    """Least distance (saturating at ``md``) of ``pairs`` (fixed links against what never moves
    with q), the same in every configuration; ``md`` if the scene's filters leave none to check."""
    from ..bullet.collision import CollisionDetector

    with CollisionDetector(loaded, pairs, robot=robot) as det:
        return float(det.compute_distances(None, md).min()) if det.pairs else md


def scene_pairs(loaded: Any, which: str, md: float, margin: float, robots: tuple[str, ...]) -> tuple[list, list, dict]:
    """(pairs, disabled, moving) for a pair set: each robot against each other body (two swept
    robots once), and/or each robot's self pairs. ``moving``: {pair: {robot: the fixed links'
    distance}} for the world pairs whose robot's fixed links are closer than ``margin`` to the
    other body (for two swept robots: to the other's fixed links, and then both sides); they are
    left out of those pairs only (``robot/(moving)``), see :mod:`simbench.sweep.collision_job`."""
    from ..bullet.collision import NamedCollisionObject, self_collision_pairs

    pairs, disabled, moving = [], [], {}
    if which in ("all", "world"):
        for i, robot in enumerate(robots):
            fixed = fixed_links(loaded, robot)
            for other in loaded.bodies:
                if other == robot or other in robots[:i]:
                    continue
                pair = (NamedCollisionObject(robot), NamedCollisionObject(other))
                pairs.append(pair)
                if other in robots:   # both move: only their fixed links keep one distance
                    theirs = fixed_links(loaded, other)
                    if not fixed or not theirs:
                        continue
                    d = _fixed_distance(loaded, robot, [(NamedCollisionObject(robot, s), NamedCollisionObject(other, t))
                                                        for s in fixed for t in theirs], md)
                    if d < margin + TOUCHING:
                        moving[pair] = {robot: d, other: d}
                        disabled += [(NamedCollisionObject(robot, s), pair[1]) for s in fixed]
                        disabled += [(NamedCollisionObject(other, t), pair[0]) for t in theirs]
                elif fixed:
                    d = _fixed_distance(loaded, robot, [(NamedCollisionObject(robot, s), pair[1]) for s in fixed], md)
                    if d < margin + TOUCHING:   # a base resting on the ground, to round-off, too
                        moving[pair] = {robot: d}
                        disabled += [(NamedCollisionObject(robot, s), pair[1]) for s in fixed]
    if which in ("all", "self"):
        for robot in robots:
            pairs += self_collision_pairs(loaded, robot)
    return pairs, disabled, moving


def explicit_pairs(loaded: Any, given: Any, robots: tuple[str, ...]) -> tuple[list, list, dict]:
    """(pairs, disabled, moving) for explicit pairs; ``robot/(moving)`` is a swept robot with
    its fixed links left out of that pair (refused beside another pair of the same two bodies,
    whose links the exclusion would also leave out)."""
    from ..bullet.collision import NamedCollisionObject
    from ..bullet.collision_names import as_object, as_pair

    pairs, disabled, moving = [], [], {}
    for pr in given:
        if isinstance(pr, str) or not hasattr(pr, "__len__") or len(pr) != 2:
            as_pair(pr)  # one line: a pair must be two objects
        objs = [NamedCollisionObject(*parse_object(x)) if isinstance(x, str) else as_object(x) for x in pr]
        marked = [i for i, o in enumerate(objs) if o.link == MOVING]
        if marked:
            bodies = [objs[i].body for i in marked]
            if len(robots) == 1 and (len(marked) == 2 or bodies[0] != robots[0]):
                raise SimbenchError(f"pair {shown(tuple(pr))}: BODY/(moving) is the robot's moving links "
                                    f"({robots[0]}/(moving)) against another body")
            if any(b not in robots for b in bodies) or len(set(bodies)) != len(bodies):
                raise SimbenchError(f"pair {shown(tuple(pr))}: BODY/(moving) is a swept robot's moving links "
                                    f"({', '.join(f'{r}/(moving)' for r in robots)}) against another body")
            for i in marked:
                objs[i] = NamedCollisionObject(objs[i].body)
            moving[tuple(objs)] = {b: None for b in bodies}
            for i in marked:
                disabled += [(NamedCollisionObject(objs[i].body, s), objs[1 - i]) for s in fixed_links(loaded, objs[i].body)]
        pairs.append(tuple(objs))
    for pair in moving:
        for a, b in pairs:
            if (a, b) not in moving and {a.body, b.body} == {pair[0].body, pair[1].body}:
                raise SimbenchError(f"pairs ({a}, {b}) and ({label(pair, moving)}) in one sweep; expected "
                                    "one of them (leaving the fixed links out of one leaves them out of both)")
    return pairs, disabled, moving


def label(pair: tuple, moving: dict) -> str:
    """``A, B`` of a column name; ``robot/(moving)`` for a side without the robot's fixed links."""
    sides = moving.get(pair, {})
    return ", ".join(f"{o.body}/{MOVING}" if o.whole_body and o.body in sides else str(o) for o in pair)


def moving_notes(loaded: Any, moving: dict, kept: list, margin: float) -> tuple[str, ...]:
    """One line per kept pair of a pair set that leaves a robot's fixed links out, with their distance."""
    out = []
    for (a, b), sides in moving.items():
        found = {body: d for body, d in sides.items() if d is not None}
        if not found or (a, b) not in kept:
            continue
        d = next(iter(found.values()))
        if len(found) == 1:
            out.append(f"{a.body}'s fixed links ({', '.join(fixed_links(loaded, a.body))}) are {d:.3g} m from {b} "
                       f"in every configuration (margin {margin:g} m); column distance({label((a, b), moving)}) "
                       f"leaves them out (--pair {a.body} {b}: the whole robot)")
        else:
            out.append(f"{a.body}'s fixed links ({', '.join(fixed_links(loaded, a.body))}) and {b.body}'s "
                       f"({', '.join(fixed_links(loaded, b.body))}) are {d:.3g} m apart in every configuration "
                       f"(margin {margin:g} m); column distance({label((a, b), moving)}) leaves them out "
                       f"(--pair {a.body} {b.body}: the whole robots)")
    return tuple(out)


def still_notes(loaded: Any, det: Any, labels: list[str], chosen: bool) -> tuple[str, ...]:
    """Lines on what the sweep does not move: the scene's other robots (at their scene
    configuration), and the pairs neither of whose sides is a swept robot (their columns are
    the same in every row). ``chosen``: the robots came from ``--robot``."""
    swept = det.robots
    names = ", ".join(map(repr, swept))
    others = [n for n in loaded.bodies if n not in swept and loaded.body(n).movable_indices]
    out = []
    if others:
        how = "--robot NAME chooses them, repeatable" if chosen else "the scene's robot key chooses it"
        out.append(f"the scene has other robots ({', '.join(others)}): they stay at their scene configuration; "
                   f"sweep collision moves {names} only ({how})")
    still = [lab for (a, b), lab in zip(det.pairs, labels) if a.body not in swept and b.body not in swept]
    if still:
        whom = f"the swept robot {names}" if len(swept) == 1 else f"the swept robots {names}"
        out.append(f"{'pair' if len(still) == 1 else 'pairs'} {', '.join(f'({x})' for x in still)} "
                   f"{'does' if len(still) == 1 else 'do'} not move with {whom}: the same distance in every row")
    return tuple(out)


def bad_pair_set(pairs: str, loaded: Any, robots: tuple[str, ...]) -> str:
    """The one line for ``--pairs`` that is no pair set: the closest set, or a body name's pair."""
    robot = robots[0]
    near = closest(pairs, PAIR_SETS, n=1)
    body = closest(pairs, [b for b in loaded.bodies if b not in robots], n=1)
    if pairs in loaded.bodies and pairs not in robots:
        hint = f"; for the robot against that body: --pair {robot} {pairs}"
    elif near:
        hint = f"; did you mean {near[0]!r}?"
    elif body:
        hint = f"; for the robot against a body: --pair {robot} {body[0]}"
    else:
        hint = ""
    return f"pairs = {shown(pairs)}; expected one of {', '.join(PAIR_SETS)} or explicit pairs (--pair A B){hint}"


def nothing_left(loaded: Any, which: str, robots: tuple[str, ...]) -> str:
    """Why a pair set is empty: no other body (world), and for the self pairs too few links with
    geometry, only adjacent ones, or every other pair disabled by the default allowed-collision
    matrix (by reason, with a pair to give as --pair to check it anyway)."""
    parts = []
    if which in ("all", "world"):
        others = [b for b in loaded.bodies if b not in robots]
        what = "the robot" if len(robots) == 1 else "the swept robots"
        parts.append(f"no body in the scene but {what}" if not others and len(robots) == 1 else
                     f"the scene's collision filters exclude {what} against every other body")
    if which in ("all", "self"):
        parts += [_no_self_pairs(loaded, robot) for robot in robots]
    return "; ".join(parts)


def _no_self_pairs(loaded: Any, robot: str) -> str:
    from ..bullet.collision_sampling import ALWAYS, SAMPLES, default_disabled
    from ..bullet.collision_world import candidate_self_pairs, facts

    b = loaded.body(robot)
    f = facts(b)
    free = candidate_self_pairs(b, exclude_adjacent=True)
    if len(f.geometry) < 2:
        n = {0: "no link", 1: "one link"}[len(f.geometry)]
        return f"robot {robot!r} has {n} with collision geometry, so no pair of links"
    if not free:
        return (f"every pair of links with collision geometry of robot {robot!r} is adjacent (one "
                "joint apart) or welded together")
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
    return (f"the default allowed-collision matrix of robot {robot!r} disables all {len(names)} of its "
            f"non-adjacent link pairs ({by}); to check one anyway: --pair {robot}/{a} {robot}/{c}")


__all__ = ["PAIR_SETS", "TOUCHING", "MOVING", "parse_object", "swept_robots", "fixed_links", "scene_pairs",
           "explicit_pairs", "label", "moving_notes", "still_notes", "bad_pair_set", "nothing_left"]
