"""Named collision queries on the headless collision server: the public names in one place.

Adam Heins, "shortest distances with PyBullet": a second, DIRECT PyBullet server holds the same
scene and answers "how far is link X from object Y in configuration q" without touching the
simulation that is running::

    pair = simbench.connect("simbench:kuka_cubes.toml", gui=False)
    link7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")
    det = pair.detector([(link7, "ground"), (link7, "cube1")])   # synced with the main world
    d = det.compute_distances(q)            # (2,) metres, saturating at max_distance

The modules, one concern each (data flows down the list):

* :mod:`~simbench.bullet.collision_names`: ``NamedCollisionObject`` (a body, one link or all);
* :mod:`~simbench.bullet.collision_world`: the scene as the queries see it, one parsed joint
  table per loaded body;
* :mod:`~simbench.bullet.collision_filters`: PyBullet's collision filters, honoured;
* :mod:`~simbench.bullet.collision_kernels`: the per-configuration query loops (plain data);
* :mod:`~simbench.bullet.collision_workers`: worker processes running those loops;
* :mod:`~simbench.bullet.sync`: the collision server follows the main world;
* :mod:`~simbench.bullet.collision_setup`: a detector's robots and pairs resolved, once;
* :mod:`~simbench.bullet.collision_paths`: path checking with a guarantee;
* :mod:`~simbench.bullet.collision_detector`: ``CollisionDetector`` and ``ClosestPoints``;
* :mod:`~simbench.bullet.collision_sampling`: the allowed-collision matrix (MoveIt-like);
* :mod:`~simbench.bullet.collision_pairs`: pair builders;
* :mod:`~simbench.bullet.collision_draw`: closest points drawn in the GUI.
"""
from __future__ import annotations

from .collision_detector import ClosestPoints, CollisionDetector
from .collision_draw import clearance_color, draw_closest_points
from .collision_filters import set_collision_filter_group_mask, set_collision_filter_pair
from .collision_names import ALL_LINKS, NamedCollisionObject
from .collision_pairs import adjacent_links, all_links, robot_vs_world, self_collision_pairs
from .collision_sampling import SamplingReport, robot_matrix, sample_disabled_pairs
from .srdf import DisabledPair, read_srdf_disabled, srdf_disabled_xml, write_srdf_disabled

__all__ = ["NamedCollisionObject", "CollisionDetector", "ClosestPoints", "ALL_LINKS", "all_links",
           "adjacent_links", "self_collision_pairs", "robot_vs_world", "sample_disabled_pairs", "SamplingReport",
           "robot_matrix", "draw_closest_points", "clearance_color", "set_collision_filter_group_mask",
           "set_collision_filter_pair", "DisabledPair", "read_srdf_disabled", "write_srdf_disabled",
           "srdf_disabled_xml"]
