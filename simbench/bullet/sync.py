"""One world, never stale: the collision server follows the main server.

The rule: before each query of a synced detector (``ServerPair.detector``,
``Simulation.detector``, or a :class:`~simbench.bullet.collision.CollisionDetector` built on a
``ServerPair``), the collision server holds the main world's current state: the base pose of
every body and the joint positions of every body, except the joints that the query itself sets
(its ``q``). A query without ``q`` uses the robot's current configuration in the main world.

Reading the main world costs one base-pose and one joint-state call per body (about 2-5 us
each on a DIRECT server, 1-4 ms each on a GUI server under Xvfb, where a call waits for the
render thread), which would slow the tight query loop of Adam Heins's "shortest distances with
PyBullet" by a third, so it is read only when something changed: the ``Simulation`` calls
``ServerPair.mark_changed()`` after each step, teleport, reset, joint write and body added or
removed; users who drive PyBullet's main server directly call ``ServerPair.sync()`` (or ``mark_changed()``) after they change it.
A read after changes the ``Simulation`` describes (:meth:`WorldSync.narrowed`: a step, a joint
write, a teleport of named bodies) skips the base poses of fixed-base bodies that were not
teleported: in a cell of three fixed arms, a table and a moving ball, 4 GUI-server calls
instead of 9 per read (a mark of unknown extent still reads every base).

Several detectors share one collision server and each poses its robots' joints there. The
server remembers, per client, which bodies a query has posed away from the main world
(:class:`ClientState`); a synced detector first puts every body that it does not pose itself
back to the main world's state. Detectors on a bare ``LoadedScene`` or client id never sync:
they query the client as it is (pyb_utils' habit), as before.

The same per-client state holds the lock that makes a detector safe to share between threads:
posing the robot and querying happen under it, so two threads never interleave on one server.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pybullet as p

from .records import JointState, joint_infos
from .scene import LoadedScene


class ClientState:
    """What one PyBullet client holds beyond the scene: the lock around pose + query, and the
    ids of the bodies whose joints a query left away from the main world."""

    __slots__ = ("lock", "posed")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.posed: set[int] = set()


_states: dict[int, ClientState] = {}
_states_lock = threading.Lock()


def client_state(client: int) -> ClientState:
    """The :class:`ClientState` of PyBullet client ``client`` (created on first use)."""
    state = _states.get(client)
    if state is None:
        with _states_lock:
            state = _states.setdefault(client, ClientState())
    return state


def forget_client(client: int, state: ClientState | None = None) -> None:
    """Drop the state of a client that was disconnected (its id may be reused); with ``state``,
    only if that is still the client's state."""
    with _states_lock:
        if state is None or _states.get(client) is state:
            _states.pop(client, None)


def movable_joints(body: int, client: int) -> list[int]:
    """Indices of the non-fixed joints of ``body`` (PyBullet order)."""
    return [j.index for j in joint_infos(body, client) if j.type != p.JOINT_FIXED]


class WorldSync:
    """Keeps a collision server (``collision``) at the state of the main server (``main``).

    ``generation`` counts the changes of the set of bodies (added or removed), so that a
    detector can tell that a body it names is gone."""

    def __init__(self, main: LoadedScene, collision: LoadedScene):
        self.main, self.collision = main, collision
        self.state = client_state(collision.client)
        self._narrow = False
        self._bases: set[int] | None = None  # bases to read besides free ones (None: every base)
        self._fixed: dict[int, bool] = {}
        self.dirty = True
        self.generation = 0
        self.reads = 0  #: how many times the main world was read (for tests and benchmarks)
        self._snap: dict[int, tuple[Any, Any, tuple]] = {}
        self._movable: dict[int, list[int]] = {}

    # ------------------------------------------------------------------ notifications
    @property
    def dirty(self) -> bool:
        """The main world changed since the last read (set True by anyone: every base is read)."""
        return self._dirty

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self._dirty = bool(value)
        if value and not self._narrow:
            self._bases = None

    def mark_changed(self) -> None:
        """Something in the main world changed: read it before the next query."""
        self.dirty = True

    @contextmanager
    def narrowed(self, bases: Any = ()) -> Iterator[None]:
        """Marks made inside (``ServerPair.mark_changed``) changed joints, free bases (a step)
        and the base poses of the body ids ``bases`` only: the next read skips the other
        fixed bases."""
        self._narrow = True
        try:
            yield
        finally:
            self._narrow = False
        if self._bases is not None:
            self._bases.update(bases)

    def bodies_changed(self) -> None:
        """Bodies were added or removed (in both servers)."""
        ids = set(self.main.bodies.values())
        for bid in list(self._snap):
            if bid not in ids:
                del self._snap[bid]
        self._movable = {b: m for b, m in self._movable.items() if b in ids}
        self._fixed.clear()
        self.state.posed &= ids
        self.generation += 1
        self.dirty = True

    # ------------------------------------------------------------------ the sync
    def prepare(self, posing: frozenset[int]) -> None:
        """Bring the collision server to the main world's state, except the joints of the
        bodies in ``posing`` (the query sets them next). Call with ``self.state.lock`` held."""
        posed = self.state.posed
        if self.dirty:
            self._pull(posing)
        elif not posed <= posing:
            self._restore(posed - posing)
        posed |= posing

    def sync(self) -> None:
        """Read the main world now and put every body of the collision server at its state."""
        with self.state.lock:
            self.dirty = True
            self.prepare(frozenset())

    def joint_positions(self, body: int) -> list[float]:
        """The main world's positions of ``body``'s non-fixed joints, as of the last read
        (call :meth:`prepare` first)."""
        return [x for values in self._snap[body][2] for x in values]

    def _movable_of(self, body: int) -> list[int]:
        idx = self._movable.get(body)
        if idx is None:
            idx = self._movable[body] = movable_joints(body, self.main.client)
        return idx

    def _is_fixed(self, name: str, bid: int) -> bool:
        fixed = self._fixed.get(bid)
        if fixed is None:
            fixed = self._fixed[bid] = bool(self.main.body(name).fixed_base)
        return fixed

    def _pull(self, posing: frozenset[int]) -> None:
        main, coll = self.main.client, self.collision.client
        posed, bases = self.state.posed, self._bases
        for name, bid in self.main.bodies.items():
            old = self._snap.get(bid)
            if old is None or bases is None or bid in bases or not self._is_fixed(name, bid):
                pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=main)
            else:   # a fixed base that nothing teleported: where it was
                pos, orn = old[0], old[1]
            idx = self._movable_of(bid)
            joints = (tuple(JointState(*s).position for s in p.getJointStatesMultiDof(bid, idx, physicsClientId=main))
                      if idx else ())
            if old is None or old[0] != pos or old[1] != orn:
                p.resetBasePositionAndOrientation(bid, pos, orn, physicsClientId=coll)
            if idx and bid not in posing and (old is None or old[2] != joints or bid in posed):
                p.resetJointStatesMultiDof(bid, idx, [list(v) for v in joints], physicsClientId=coll)
                posed.discard(bid)
            self._snap[bid] = (pos, orn, joints)
        self.reads += 1
        self.dirty = False
        self._bases = set()

    def _restore(self, bodies: set[int]) -> None:
        coll = self.collision.client
        for bid in bodies:
            snap = self._snap.get(bid)
            idx = self._movable_of(bid) if snap is not None else None
            if idx:
                p.resetJointStatesMultiDof(bid, idx, [list(v) for v in snap[2]], physicsClientId=coll)
        self.state.posed -= bodies




# ---------------------------------------------------------------------- bodies added and removed
def _as_spec(spec: Any) -> Any:
    from collections.abc import Mapping

    from ..errors import SceneError, shown
    from .scene import BodySpec, Scene

    if isinstance(spec, BodySpec):
        return spec
    if isinstance(spec, Mapping):  # the scene-file layout of one [[body]]; paths from the cwd
        return Scene.from_dict({"body": [dict(spec)]}, source="<add_body>").bodies[0]
    raise SceneError(f"add_body({shown(spec)}): expected a BodySpec or a mapping in the scene-file layout "
                     "(name, urdf, position, ...)")


def add_body(pair: Any, spec: Any) -> int:
    """Load ``spec`` (a :class:`~simbench.bullet.scene.BodySpec` or a mapping in the scene-file
    layout) into both servers of ``pair``; returns its body id (equal in both)."""
    import dataclasses

    from ..errors import SceneError, SimbenchError, shown
    from .scene import Scene

    spec = _as_spec(spec)
    if spec.name in pair.main.bodies:
        raise SceneError(f"add_body: a body named {shown(spec.name)} is already in the scene; "
                         f"names in use: {sorted(pair.main.bodies)}")
    one = Scene((spec,), gravity=pair.scene.gravity, source=pair.scene.source)
    main_id = one.load(pair.main.client).bodies[spec.name]
    try:
        coll_id = one.load(pair.collision.client).bodies[spec.name]
    except BaseException:
        p.removeBody(main_id, physicsClientId=pair.main.client)
        raise
    if coll_id != main_id:  # the servers went out of step (bodies changed behind our back)
        for client, bid in ((pair.main.client, main_id), (pair.collision.client, coll_id)):
            p.removeBody(bid, physicsClientId=client)
        raise SimbenchError(f"add_body({spec.name!r}): body ids differ between the servers ({main_id} "
                            f"vs {coll_id}); add and remove bodies through the ServerPair only")
    scene = dataclasses.replace(pair.scene, bodies=pair.scene.bodies + (spec,))
    _set_scene(pair, scene, add=(spec.name, main_id))
    return main_id


def remove_body(pair: Any, name: str) -> None:
    """Remove body ``name`` from both servers of ``pair``."""
    import dataclasses

    from ..errors import lookup

    bid = lookup(pair.main.bodies, name, "body", "the scene")
    for loaded in (pair.main, pair.collision):
        p.removeBody(bid, physicsClientId=loaded.client)
    scene = dataclasses.replace(pair.scene, bodies=tuple(b for b in pair.scene.bodies if b.name != name),
                                robot=None if pair.scene.robot == name else pair.scene.robot)
    _set_scene(pair, scene, remove=name)


def _set_scene(pair: Any, scene: Any, add: tuple[str, int] | None = None, remove: str | None = None) -> None:
    pair.scene = scene
    for loaded in (pair.main, pair.collision):
        loaded.scene = scene
        if add is not None:
            loaded.bodies[add[0]] = add[1]
        if remove is not None:
            loaded.bodies.pop(remove, None)
            loaded._loaded.pop(remove, None)  # the cached LoadedBody of the removed body
    ws = pair.__dict__.get("_world_sync_state")
    if ws is not None:
        ws.bodies_changed()


__all__ = ["ClientState", "WorldSync", "client_state", "forget_client", "movable_joints", "add_body",
           "remove_body"]
