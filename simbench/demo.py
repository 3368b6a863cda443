"""``simbench demo``: the seed scene (KUKA iiwa among cubes) in the server pair.

The arm moves through a scripted motion on the main server (GUI when there is a display);
at every waypoint the collision server answers how far ``lbr_iiwa_link_7`` is from the ground
and each cube, without touching the main server. Headless, a rendered PNG is written.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pybullet as p

from .bullet.collision import CollisionDetector, NamedCollisionObject, draw_closest_points
from .bullet.servers import connect, render
from .imaging import write_png

LINK = ("robot", "lbr_iiwa_link_7")
OBSTACLES = ("ground", "cube1", "cube2", "cube3")
# joint-space waypoints (rad) of the scripted motion: reach towards each cube and back
WAYPOINTS = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.785, 1.2, 0.0, -0.6, 0.0, 0.6, 0.0],
    [0.785, 1.5, 0.0, -0.2, 0.0, 0.3, 0.0],
    [-2.36, 1.2, 0.0, -0.8, 0.0, 0.5, 0.0],
    [-0.785, 1.0, 0.3, -1.2, 0.0, 0.8, 0.0],
    [0.0, 0.6, 0.0, -1.6, 0.0, 0.9, 0.0],
])


def run_demo(gui: bool | None = None, out: Path = Path("out"), steps: int = 6,
             settle_steps: int = 120) -> int:
    with connect(None, gui=gui) as pair:
        robot = pair.main.robot
        pairs = [(NamedCollisionObject(*LINK), NamedCollisionObject(name)) for name in OBSTACLES]
        detector = CollisionDetector(pair.collision, pairs, robot="robot")
        mode = "GUI" if pair.gui else "DIRECT (headless)"
        print(f"simbench demo: main server {mode}, collision server DIRECT; bodies {pair.bodies}")
        print(f"distance from {LINK[0]}:{LINK[1]} to each obstacle [m], queried on the collision server:")
        print(f"{'waypoint':>8s}  " + "  ".join(f"{n:>8s}" for n in OBSTACLES) + "  colliding")
        lines: list[int] = []
        for k in range(min(steps, len(WAYPOINTS)) if steps > 0 else len(WAYPOINTS)):
            target = WAYPOINTS[k % len(WAYPOINTS)]
            p.setJointMotorControlArray(robot.id, robot.movable_indices, p.POSITION_CONTROL,
                                        targetPositions=target.tolist(), forces=[300.0] * len(target),
                                        physicsClientId=pair.main.client)
            for _ in range(settle_steps):
                p.stepSimulation(physicsClientId=pair.main.client)
                if pair.gui:
                    time.sleep(1 / 240)
            q = robot.joint_positions()
            dist = detector.compute_distances(q, max_distance=2.0)
            colliding = detector.colliding_pairs(q)
            names = ", ".join(f"{b.body}" for _, b in colliding) or "-"
            print(f"{k:8d}  " + "  ".join(f"{d:8.4f}" for d in dist) + f"  {names}")
            if pair.gui:
                lines = draw_closest_points(pair.main.client, detector.closest_points(q, 2.0), replace=lines)
        if not pair.gui:
            out.mkdir(parents=True, exist_ok=True)
            path = out / "demo.png"
            write_png(path, render(pair.main.client, (640, 480), yaw=-135.0, pitch=-25.0, distance=3.2))
            print(f"wrote {path}")
    sys.stdout.flush()
    return 0
