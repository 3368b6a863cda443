"""Scripted simulations: one object that owns the servers, steps time, drives the robot, shows
what happens and records it. The same script runs headless or in the PyBullet GUI::

    import simbench

    with simbench.Simulation(gui=None) as sim:          # the bundled KUKA-among-cubes scene
        sim.record("out.gif")                           # frames every 1/30 s of simulated time
        sim.robot.set_joint_targets({"lbr_iiwa_joint_2": 0.8, "lbr_iiwa_joint_4": -1.2})
        sim.advance(2.0)                                # 2 s of simulated time
        print(sim.t, sim.robot.q)

``gui=None`` opens a window when a display answers, else a headless (DIRECT) server with one
logged line. Next to the main server there is always the paired DIRECT collision server (Adam
Heins, "shortest distances with PyBullet"): ``sim.detector(pairs)`` queries it without
disturbing the simulation, and ``sim.draw_closest_points(results)`` shows its answers in the
window and in recorded frames.

The package, one concept per module:

* :mod:`.simulation`: :class:`Simulation` (the loop, time, poses, lifetime), :class:`SimulationDone`;
* :mod:`.robot`: :class:`Robot`, one body's joints by name (state, motors, torques, resets);
* :mod:`.recording`: :class:`Recording` and the GIF / MP4 writers;
* :mod:`.window`: the GUI window (rendering mode, overlay, time readout; measurements);
* :mod:`.camera`: framing the scene from AABBs, projecting points to pixels;
* :mod:`.overlay`: time and closest-point segments drawn into images (Pillow);
* :mod:`.contacts`: contact points and ray tests by name.
"""
from ..errors import RecordingError
from .contacts import Contact, RayBatch, RayHit
from .recording import (SUPPORTED_RECORDING_FORMATS, GifWriter, Mp4Writer, Recording, ffmpeg_executable,
                        open_writer)
from .robot import Robot
from .simulation import Simulation, SimulationDone
from .window import RENDER_MODES

__all__ = ["Simulation", "SimulationDone", "Robot", "Recording", "RecordingError", "GifWriter",
           "Mp4Writer", "open_writer", "ffmpeg_executable", "SUPPORTED_RECORDING_FORMATS", "Contact",
           "RayHit", "RayBatch", "RENDER_MODES"]
