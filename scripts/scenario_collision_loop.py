"""The collision loop of Adam Heins's "shortest distances with PyBullet", in its scene (a KUKA
iiwa among three cubes).

Random configurations ``q = pi (u - 1/2)``, ``u ~ U[0, 1)^7`` are checked on the headless
collision server, which never disturbs the running simulation. Only a configuration whose
straight-line path from the current one is collision free (``CHECKS`` configurations along it,
every moving link against the ground and the cubes with a ``MARGIN`` of clearance, and every
non-adjacent pair of links against each other) is sent to the robot in the main server, which
then follows that path under position control. While it moves, the post's four closest-point
segments (link 7 to the ground and to each cube) are drawn in the GUI and in recorded frames,
coloured by clearance and labelled with their distances.

As an independent check, the clearance between the robot's moving links and the obstacles is
measured on the *main* server with PyBullet's own ``getClosestPoints`` while the robot moves;
it must stay positive (no contact), and the robot must reach every accepted configuration.

Run it: ``simbench run scripts/scenario_collision_loop.py [--gui] [--seed 1] [--record c.gif]``.
"""
import math
import sys

import numpy as np

from simbench.bullet.collision import NamedCollisionObject, robot_vs_world, self_collision_pairs

SCENE = None          # the bundled KUKA-among-cubes scene, simbench:kuka_cubes.toml
DURATION = 20.0
MOVE_TIME = 1.5       # s per accepted configuration
SETTLE_TIME = 0.25    # s held at the goal
CHECKS = 25           # configurations checked along each straight-line path
MARGIN = 0.03         # m of clearance required along the path
MAX_TRIES = 500       # samples per move before giving up
OBSTACLES = ("ground", "cube1", "cube2", "cube3")


def sample(rng, dof: int) -> np.ndarray:
    """The post's random configuration: ``pi * (u - 0.5)``."""
    return math.pi * (rng.random(dof) - 0.5)


def main_server_clearance(sim, moving_links: list[int]) -> float:
    """Smallest distance between the robot's moving links and the obstacles, measured on the
    main server with PyBullet's ``getClosestPoints`` (the independent check)."""
    import pybullet as p

    robot = sim.robot
    best = math.inf
    for name in OBSTACLES:
        other = sim.bodies[name]
        for li in moving_links:
            pts = p.getClosestPoints(robot.id, other, 0.5, linkIndexA=li, physicsClientId=sim.client)
            for pt in pts:
                best = min(best, pt[8])
    return best


def main(sim):
    total = sim.duration if sim.duration is not None else DURATION
    robot, collision = sim.robot, sim.pair.collision
    world = sim.detector(robot_vs_world(collision, robot.name, OBSTACLES))
    own = sim.detector(self_collision_pairs(collision, robot.name))  # non-adjacent link pairs

    def in_collision(q):
        # the wrist links 5 and 7 are always within 2.4 cm of each other: no margin for self pairs
        return np.logical_or(world.in_collision(q, margin=MARGIN), own.in_collision(q))

    link7 = NamedCollisionObject(robot.name, "lbr_iiwa_link_7")
    post_pairs = sim.detector([(link7, name) for name in OBSTACLES])
    moving = [i for i in robot.body.links.values() if i >= 0]
    stats = {"sampled": 0, "rejected_goal": 0, "rejected_path": 0, "moves": 0}
    min_clearance, max_reach_error, min_link7 = math.inf, 0.0, math.inf
    draw_every = max(1, int(round(1 / 30 / sim.dt)))

    q_now = robot.q
    robot.set_joint_targets(q_now)
    while sim.running and sim.t < total - 1e-9:
        for _ in range(MAX_TRIES):
            goal = sample(sim.rng, robot.dof)
            stats["sampled"] += 1
            if in_collision(goal):
                stats["rejected_goal"] += 1
                continue
            path = q_now + np.linspace(0, 1, CHECKS)[:, None] * (goal - q_now)
            if np.any(in_collision(path)):
                stats["rejected_path"] += 1
                continue
            break
        else:
            print(f"no collision-free move found in {MAX_TRIES} samples; stopping", file=sys.stderr)
            break
        # follow the checked straight line with a smooth time law s(tau) = 3 tau^2 - 2 tau^3
        n = max(1, int(round(MOVE_TIME / sim.dt)))
        for k in range(1, n + int(round(SETTLE_TIME / sim.dt)) + 1):
            if not sim.running:
                break
            tau = min(k / n, 1.0)
            s, ds = 3 * tau ** 2 - 2 * tau ** 3, (6 * tau - 6 * tau ** 2) / (n * sim.dt)
            robot.set_joint_targets(q_now + s * (goal - q_now), ds * (goal - q_now))
            sim.step()
            if k % draw_every == 0:
                q = robot.q
                results = post_pairs.closest_points(q)
                min_link7 = min(min_link7, min(r.distance for r in results))
                sim.draw_closest_points(results)  # in the window, and in recorded frames
                min_clearance = min(min_clearance, main_server_clearance(sim, moving))
        else:
            stats["moves"] += 1
            max_reach_error = max(max_reach_error, float(np.abs(robot.q - goal).max()))
        q_now = robot.q

    accepted = stats["moves"]
    print(f"collision loop: {stats['sampled']} configurations sampled, {stats['rejected_goal']} in "
          f"collision, {stats['rejected_path']} with a colliding path, {accepted} moves done")
    print(f"  smallest robot-obstacle clearance on the main server while moving: {min_clearance:.4f} m")
    print(f"  smallest link 7 distance (the post's pairs, collision server): {min_link7:.4f} m")
    print(f"  largest joint error on arrival: {max_reach_error:.2e} rad")
    return {**stats, "min_clearance_main": float(min_clearance), "min_link7_distance": float(min_link7),
            "max_reach_error": max_reach_error, "pairs_checked": len(world.pairs) + len(own.pairs)}


if __name__ == "__main__":
    from simbench.runner import main as _run

    raise SystemExit(_run([__file__, *sys.argv[1:]]))
