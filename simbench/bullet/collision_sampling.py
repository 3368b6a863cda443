"""The allowed-collision matrix of a robot, sampled as MoveIt's setup assistant does.

A self-collision pair is disabled when it is

* **Adjacent**: parent and child links (also across fixed joints and links without geometry);
* **Default**: in contact (distance < 0: MoveIt's "in collision at the default pose") at the
  neutral configuration (zeros, clipped to the limits). Not "closer than ``margin``": a pair a few
  centimetres apart there may collide elsewhere (a walkthrough's torso: 505 of 3,000 colliding
  configurations were labelled free when pairs within 5 cm at the neutral pose were disabled);
* **Always**: closer than ``margin`` in at least ``always_fraction`` (95 %) of ``n`` random
  configurations (uniform within the joint limits, generator seeded with ``seed``);
* **Never**: closer than ``margin`` in none of the ``n`` samples (a statistical statement: more
  samples make it safer).

Defaults: ``n = 10,000`` samples, ``seed = 0``, ``margin = 0.05`` m, ``always_fraction = 0.95``.
For Always and Never, "closer than margin" rather than "penetrating" keeps the matrix useful to queries with a safety
margin: the iiwa's links 5 and 7 are always within 3 cm of each other (they overlap in 7.5 % of
the configurations only), so with penetration alone ``in_collision(q, margin=0.05)`` would be
True everywhere. The robot is sampled alone, fixed at the origin with the scene's scale, so the
matrix depends only on the robot file: it is computed once per file and cached, keyed by the
SHA-256 of the URDF text and the parameters, as an SRDF file (MoveIt's format) and a JSON file
with the sampled fractions, in ``$SIMBENCH_CACHE_DIR`` (default ``~/.cache/simbench/collision``).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .collision_detector import CollisionDetector
from .collision_names import NamedCollisionObject
from .collision_world import adjacent_indices, as_loaded, candidate_self_pairs, close_temporary, facts, link_limits
from .scene import BodySpec, LoadedBody, Scene
from .srdf import DisabledPair, srdf_disabled_xml, write_srdf_disabled

logger = logging.getLogger(__name__)

SAMPLES = 10_000
SEED = 0
MARGIN = 0.05
ALWAYS = 0.95
VERSION = 2  # bump when the sampling rule changes (old cache entries are then ignored); 2: Default = in contact


@dataclass
class SamplingReport:
    """The sampled allowed-collision matrix of one robot: link-name pairs by reason, the
    fraction of samples in which each candidate pair was closer than ``margin``, and how
    they were sampled."""

    body: str
    samples: int
    adjacent: list[tuple[str, str]]
    default: list[tuple[str, str]]
    always: list[tuple[str, str]]
    never: list[tuple[str, str]]
    fraction: dict[tuple[str, str], float]
    seed: int | None = SEED
    margin: float = 0.0
    always_fraction: float = ALWAYS
    configurations: np.ndarray | None = field(default=None, repr=False)  # the (n, dof) samples

    def disabled(self) -> list[DisabledPair]:
        out = [DisabledPair(a, b, "Adjacent") for a, b in self.adjacent]
        out += [DisabledPair(a, b, "Default") for a, b in self.default]
        out += [DisabledPair(a, b, "Always") for a, b in self.always]
        out += [DisabledPair(a, b, "Never") for a, b in self.never]
        return out

    def srdf(self, robot_name: str | None = None) -> str:
        return srdf_disabled_xml(self.disabled(), robot_name or self.body)

    def write(self, path: str | os.PathLike, robot_name: str | None = None) -> None:
        write_srdf_disabled(path, self.disabled(), robot_name or self.body)

    def table(self) -> str:
        """The matrix as text: one line per link pair, its sampled fraction and verdict."""
        verdict = {pr: "disabled: adjacent" for pr in self.adjacent}
        for reason, pairs in (("default", self.default), ("always", self.always), ("never", self.never)):
            verdict.update({pr: f"disabled: {reason}" for pr in pairs})
        head = (f"self-collision matrix of {self.body!r}: {self.samples} samples (seed {self.seed}), a pair "
                f"'collides' when closer than {self.margin:g} m; always >= {self.always_fraction:.0%}, never = 0 "
                f"of {self.samples}")
        width = max([len(a) + len(b) for a, b in list(self.fraction) + self.adjacent] + [10]) + 4
        lines = [head, f"{'link pair':<{width}} {'fraction':>9}  verdict"]
        rows = sorted(self.fraction.items(), key=lambda kv: (-kv[1], kv[0]))
        rows += [(pr, None) for pr in self.adjacent]
        for (a, b), frac in rows:
            shown = "-" if frac is None else f"{frac:.4f}"
            lines.append(f"{a + ' / ' + b:<{width}} {shown:>9}  {verdict.get((a, b), 'checked')}")
        checked = sum(1 for pr in self.fraction if pr not in verdict)
        lines.append(f"{checked} pairs checked, {len(verdict)} disabled")
        return "\n".join(lines)

    def to_json(self) -> dict:
        d = asdict(self)
        d["configurations"] = None
        d["fraction"] = [[a, b, f] for (a, b), f in self.fraction.items()]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "SamplingReport":
        d = dict(d)
        d["fraction"] = {(a, b): f for a, b, f in d["fraction"]}
        for key in ("adjacent", "default", "always", "never"):
            d[key] = [tuple(x) for x in d[key]]
        return cls(**d)


def sample_disabled_pairs(scene_or_loaded: Any, body: str | None = None, *, n: int = SAMPLES,
                          seed: int | np.random.Generator | None = SEED, always_fraction: float = ALWAYS,
                          margin: float = 0.0, workers: int = 1, client: int | None = None) -> SamplingReport:
    """Sample the allowed-collision matrix of ``body`` where it stands in the scene (see the
    module docstring; here ``margin`` defaults to 0, i.e. penetration)."""
    loaded, tmp = as_loaded(scene_or_loaded, client)
    try:
        body = body or loaded.robot_name
        rb = loaded.body(body)
        names = facts(rb).names
        adjacent = sorted(tuple(sorted((names[a], names[b]))) for a, b in map(tuple, adjacent_indices(rb)))
        cand = [(names[a], names[b]) for a, b in candidate_self_pairs(rb)]
        dof = len(rb.movable_indices)
        if not cand:
            return SamplingReport(body, 0, adjacent, [], [], [], {}, seed if isinstance(seed, int) else None,
                                  margin, always_fraction, np.zeros((0, dof)))
        pairs = [(NamedCollisionObject(body, a), NamedCollisionObject(body, b)) for a, b in cand]
        lo, hi = link_limits(rb)
        rng = np.random.default_rng(seed)
        Q = rng.uniform(lo, hi, size=(n, dof))
        neutral = np.clip(np.zeros(dof), lo, hi)
        with CollisionDetector(loaded, pairs, robot=body) as det:
            before = det.current_configuration()
            limit = max(margin, 0.0) + 0.01
            close = det.compute_distances(Q, max_distance=limit, workers=workers) < margin
            at_neutral = det.compute_distances(neutral, max_distance=limit) < min(margin, 0.0)   # in contact
            det.set_configuration(before)  # leave the robot as it was
        frac = close.mean(axis=0)
        default = [nm for nm, c in zip(cand, at_neutral) if c]
        always = [nm for nm, c, f in zip(cand, at_neutral, frac) if not c and f >= always_fraction]
        never = [nm for nm, f in zip(cand, frac) if f == 0 and nm not in default]
        return SamplingReport(body, n, adjacent, default, always, never,
                              {nm: float(f) for nm, f in zip(cand, frac)},
                              seed if isinstance(seed, int) else None, margin, always_fraction, Q)
    finally:
        close_temporary(tmp)


# ---------------------------------------------------------------------- the cached defaults
def cache_dir() -> Path:
    """Where sampled matrices are cached: ``$SIMBENCH_CACHE_DIR/collision``, else
    ``$XDG_CACHE_HOME/simbench/collision``, else ``~/.cache/simbench/collision``."""
    root = os.environ.get("SIMBENCH_CACHE_DIR")
    if root:
        return Path(root) / "collision"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "simbench" / "collision"


def _key(urdf: Path, scale: float, n: int, seed: int, margin: float, always_fraction: float) -> str:
    h = hashlib.sha256(urdf.read_bytes())
    h.update(json.dumps([VERSION, scale, n, seed, margin, always_fraction]).encode())
    return f"{urdf.stem}-{h.hexdigest()[:20]}"


def robot_matrix(urdf: str | os.PathLike, *, scale: float = 1.0, n: int = SAMPLES, seed: int = SEED,
                 margin: float = MARGIN, always_fraction: float = ALWAYS, cache: bool = True) -> SamplingReport:
    """The default allowed-collision matrix of the robot in ``urdf`` (sampled alone, fixed at
    the origin), computed once and cached (see the module docstring)."""
    from ..paths import resolve_urdf

    path = Path(resolve_urdf(str(urdf)))
    key = _key(path, float(scale), n, seed, margin, always_fraction)
    folder = cache_dir()
    if cache:
        try:
            return SamplingReport.from_json(json.loads((folder / f"{key}.json").read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    spec = BodySpec(name=path.stem, urdf=str(path), path=path, fixed_base=True, scale=float(scale))
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene((spec,), source=str(path)).load(client, quiet=True)
        report = sample_disabled_pairs(loaded, spec.name, n=n, seed=seed, always_fraction=always_fraction,
                                       margin=margin)
    finally:
        p.disconnect(physicsClientId=client)
    report.configurations = None
    if cache:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            report.write(folder / f"{key}.srdf")
            (folder / f"{key}.json").write_text(json.dumps(report.to_json()))
        except OSError as exc:  # a read-only home: use the result without caching it
            logger.info("could not cache the collision matrix in %s: %s", folder, exc)
    return report


def default_disabled(body: LoadedBody, **kwargs: Any) -> list[DisabledPair]:
    """The default disabled self-collision pairs of a loaded body: the cached matrix of its
    URDF file (or, for a body loaded without a scene, sampled on the spot)."""
    if body.spec is not None:
        return robot_matrix(body.spec.path, scale=body.spec.scale, **kwargs).disabled()
    from .collision_world import RawScene

    raw = RawScene(body.client, {body.name: body.id})
    rep = sample_disabled_pairs(raw, body.name, n=kwargs.get("n", SAMPLES), seed=kwargs.get("seed", SEED),
                                margin=kwargs.get("margin", MARGIN),
                                always_fraction=kwargs.get("always_fraction", ALWAYS))
    return rep.disabled()


__all__ = ["SamplingReport", "sample_disabled_pairs", "robot_matrix", "default_disabled", "cache_dir",
           "SAMPLES", "SEED", "MARGIN", "ALWAYS"]
