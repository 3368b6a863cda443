"""Recordings of a simulation: GIF (through Pillow) and MP4 (through ffmpeg: the one on PATH, else
the binary of imageio-ffmpeg, the 'video' extra; imageio itself is not used) written frame by
frame as simulated time passes, each file valid on disk after every frame.

The GIF writer appends one image block per frame and keeps the file's trailer written, so a
run that is killed still leaves a readable GIF; the MP4 writer streams raw RGB frames into an
ffmpeg subprocess in its own session (a Ctrl-C reaches only Python, which then closes the pipe
so that ffmpeg finishes the file).
"""
from __future__ import annotations

import io
import math
import os
import shutil
import struct
import subprocess
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import RecordingError, finite_number, shown, shown_path
from ..extras import install_hint
from ..outputs import parent_made

if TYPE_CHECKING:
    from .simulation import Simulation

SUPPORTED_RECORDING_FORMATS = (".gif", ".mp4")


# ---------------------------------------------------------------------- frame writers
def _checked_frame(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The RGB part of an (H, W, 3 or 4) image as contiguous uint8, checked against (W, H)."""
    img = np.ascontiguousarray(np.asarray(frame)[:, :, :3], dtype=np.uint8)
    if img.shape[:2] != (size[1], size[0]):
        raise RecordingError(f"frame has shape {np.shape(frame)}; expected ({size[1]}, {size[0]}, 3) "
                             f"for a {size[0]}x{size[1]} recording")
    return img


def _frame_delays_cs(fps: float):
    """GIF delays in 1/100 s whose running sum follows ``k * 100 / fps`` (no drift)."""
    k = 0
    while True:
        yield max(1, round((k + 1) * 100 / fps) - round(k * 100 / fps))
        k += 1


class GifWriter:
    """An animated GIF written frame by frame (needs Pillow)."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float):
        try:
            from PIL import Image  # noqa: F401
        except ImportError:
            raise RecordingError(f"writing {shown_path(str(path))} needs Pillow (pip install pillow); "
                                 "it is not installed") from None
        self.path, self.size, self.fps = Path(path), tuple(size), float(fps)
        self.frames = 0
        self._delays = _frame_delays_cs(self.fps)
        self._file = open(parent_made(self.path), "wb")
        w, h = self.size
        header = b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0)
        loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
        self._file.write(header + loop)
        self._file.flush()
        self._good = self._file.tell()

    def add(self, frame: np.ndarray) -> None:
        from PIL import Image

        img = _checked_frame(frame, self.size)
        pal = Image.fromarray(img).quantize(256, method=Image.Quantize.FASTOCTREE)
        buf = io.BytesIO()
        pal.save(buf, format="GIF")
        block = _image_block(buf.getvalue())
        gce = b"\x21\xf9\x04" + struct.pack("<BHBB", 0x04, next(self._delays), 0, 0)
        self._file.seek(self._good)
        self._file.write(gce + block)
        self._file.flush()
        self._good = self._file.tell()
        self.frames += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.seek(self._good)
        self._file.truncate()
        self._file.write(b"\x3b")
        self._file.close()


def _image_block(gif: bytes) -> bytes:
    """The image descriptor (with a local colour table) and LZW data of a one-frame GIF."""
    if gif[:6] not in (b"GIF87a", b"GIF89a"):
        raise RecordingError("Pillow did not produce a GIF")
    packed = gif[10]
    pos = 13
    table = b""
    if packed & 0x80:
        n = 3 * 2 ** ((packed & 7) + 1)
        table, size_bits = gif[pos:pos + n], packed & 7
        pos += n
    while pos < len(gif):
        tag = gif[pos]
        if tag == 0x21:  # extension: label, then sub-blocks up to a zero
            pos += 2
            while gif[pos]:
                pos += gif[pos] + 1
            pos += 1
        elif tag == 0x2C:
            desc = gif[pos + 1:pos + 9]
            ipacked = gif[pos + 9]
            pos += 10
            if ipacked & 0x80:  # a local table already
                n = 3 * 2 ** ((ipacked & 7) + 1)
                table, size_bits = gif[pos:pos + n], ipacked & 7
                pos += n
            if not table:
                raise RecordingError("GIF frame without a colour table")
            start = pos
            pos += 1  # LZW minimum code size
            while gif[pos]:
                pos += gif[pos] + 1
            pos += 1
            new_packed = 0x80 | (ipacked & 0x40) | size_bits
            return b"\x2c" + desc + bytes([new_packed]) + table + gif[start:pos]
        else:
            break
    raise RecordingError("no image in the GIF Pillow produced")


def ffmpeg_executable() -> str | None:
    """``ffmpeg`` on PATH, else the one bundled with ``imageio-ffmpeg``, else None."""
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # not installed, or its binary missing
        return None


def check_mp4(path: str | os.PathLike, size: tuple[int, int]) -> str:
    """The ffmpeg that writes the MP4 ``path`` of ``size``, or a :class:`RecordingError`: ffmpeg
    missing (one line naming the 'video' extra, whose imageio-ffmpeg brings an ffmpeg binary:
    imageio itself is not needed), or an odd width or height."""
    exe = ffmpeg_executable()
    if exe is None:
        raise RecordingError(f"writing {shown_path(str(path))} needs ffmpeg, which was not found; "
                             f"{install_hint('video')} (its imageio-ffmpeg brings ffmpeg), or put ffmpeg "
                             "on PATH (apt-get install ffmpeg), or record a .gif instead")
    w, h = size
    if w % 2 or h % 2:
        raise RecordingError(f"MP4 (yuv420p) needs an even width and height; got size {tuple(size)}")
    return exe


class Mp4Writer:
    """H.264 MP4 through an ffmpeg subprocess."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float):
        exe = check_mp4(path, size)
        w, h = size
        self.path, self.size, self.fps, self.frames = parent_made(path), (w, h), float(fps), 0
        cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{w}x{h}", "-r", f"{fps:g}", "-i", "-", "-an", "-vcodec", "libx264",
               "-pix_fmt", "yuv420p", str(self.path)]
        # its own session: a Ctrl-C in the terminal reaches only Python, which then closes the
        # pipe so that ffmpeg finishes the file
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, start_new_session=(os.name == "posix"))

    def add(self, frame: np.ndarray) -> None:
        img = _checked_frame(frame, self.size)
        try:
            self._proc.stdin.write(img.tobytes())
        except BrokenPipeError:
            raise RecordingError(f"ffmpeg stopped: {self._proc.stderr.read().decode()[-500:]}") from None
        self.frames += 1

    def close(self) -> None:
        if self._proc.stdin.closed:
            return
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        if self._proc.wait(timeout=120) != 0:
            raise RecordingError(f"ffmpeg failed writing {shown_path(str(self.path))}: "
                                 f"{self._proc.stderr.read().decode()[-500:]}")


def open_writer(path: str | os.PathLike, size: tuple[int, int], fps: float) -> GifWriter | Mp4Writer:
    """A frame writer chosen by the file extension (``.gif`` or ``.mp4``)."""
    if check_format(path) == ".gif":
        return GifWriter(path, size, fps)
    return Mp4Writer(path, size, fps)


# ---------------------------------------------------------------------- recordings
class Recording:
    """Frames of a :class:`Simulation` written every ``1/fps`` s of *simulated* time.

    Started by :meth:`Simulation.record`; finished by :meth:`stop` (or leaving its ``with``
    block, closing the simulation, or the simulation being garbage-collected). ``frames``
    counts the frames written so far. Each frame is ``sim.frame(size, annotate=annotate)``:
    with ``annotate`` the simulated time and the closest-point segments being shown are drawn
    into it (debug lines never appear in ``getCameraImage`` frames, so they are drawn again).
    """

    def __init__(self, sim: "Simulation", path: str | os.PathLike, fps: float = 30.0,
                 size: tuple[int, int] = (640, 480), annotate: bool = True):
        from ..outputs import writable_file

        given, fps = fps, finite_number(fps, "fps", " of frames per second > 0", RecordingError)
        if not fps > 0:
            raise RecordingError(f"fps = {shown(given)}; expected a positive number of frames per second")
        size = check_size(size)
        check_format(path)
        self.path = writable_file(path, "recording")
        self._sim = weakref.ref(sim)      # no cycle: a dropped simulation is freed at once
        self.fps, self.size, self.annotate = fps, size, bool(annotate)
        self._writer = open_writer(self.path, size, fps)
        self._k = 0                       # index of the next frame
        self._t0 = sim.t
        self.closed = False
        self._pending = True              # the first frame: the state before the first step
        self._shown: dict = {}            # the overlays of the last frame written

    @property
    def sim(self) -> "Simulation":
        sim = self._sim()
        if sim is None:
            raise RecordingError(f"the simulation of {shown_path(str(self.path))} no longer exists")
        return sim

    @property
    def frames(self) -> int:
        """Frames of the run so far: written, and the one due now (taken before the next step)."""
        due = max(1, self._due()) if self._pending and not self.closed and self._sim() is not None else 0
        return self._writer.frames + due

    def _due(self) -> int:
        """How many frame times have passed (frame k is due at t0 + k / fps)."""
        return int(math.floor((self.sim.t - self._t0) * self.fps + 1e-6)) + 1 - self._k

    def capture(self) -> None:
        """Write the current view as the next frame (repeated when several are due)."""
        if self.closed:
            return
        due = max(1, self._due())
        image = self.sim.frame(self.size, annotate=self.annotate)
        for _ in range(due):
            self._writer.add(image)
            self._k += 1
        self._shown = self.sim.overlays

    def _on_step(self) -> None:
        """After a physics step: a frame due now is taken just before the next step (or at the
        end), so that what the script draws after ``step()`` returns (distances, labels) is in
        the frame of that time, not the next one (a walkthrough's frames showed each
        measurement one frame late)."""
        self._pending = self._pending or self._due() > 0

    def _before_step(self) -> None:
        if self._pending:
            self._pending = False
            self.capture()

    def stop(self) -> Path:
        """Finish the file (with the frame still due); returns its path. Safe to call twice."""
        if not self.closed:
            try:
                sim = self._sim()
                if self._pending and sim is not None:
                    self._before_step()
                elif sim is not None and self._writer.frames and sim.overlays != self._shown:
                    # drawn after the last frame's time (after the last step): the end shows it
                    self._writer.add(sim.frame(self.size, annotate=self.annotate))
            except Exception:   # noqa: BLE001 - the server is gone: the file is finished without its last frame
                pass
            finally:
                self.closed = True
            try:
                self._writer.close()
            finally:
                sim = self._sim()
                if sim is not None and self in sim._recordings:
                    sim._recordings.remove(self)
        return self.path

    def __enter__(self) -> "Recording":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"Recording({str(self.path)!r}, fps={self.fps:g}, size={self.size}, "
                f"frames={self.frames}{', closed' if self.closed else ''})")


def check_format(path: str | os.PathLike) -> str:
    """The lower-case extension of a recording path, or a :class:`RecordingError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUPPORTED_RECORDING_FORMATS:
        raise RecordingError(f"cannot record to {shown_path(str(path))}: unknown extension {shown(suffix)}; "
                             f"expected one of {', '.join(SUPPORTED_RECORDING_FORMATS)}")
    return suffix


def check_size(size: Any) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise RecordingError(f"size = {shown(size)}; expected (width, height) in pixels") from None
    if not (8 <= w <= 4096 and 8 <= h <= 4096):
        raise RecordingError(f"size = {shown(size)}; expected width and height between 8 and 4096 pixels")
    return w, h


def release(recordings: list["Recording"], pair: Any, gone: list[str]) -> None:
    """Finalizer of a :class:`Simulation` (holds its recordings, pair and closed flag ``gone``,
    not the simulation)."""
    try:   # the recordings first: at exit, a frame still due is taken from the open servers
        for rec in list(recordings):
            try:
                rec.stop()
            except Exception:  # noqa: BLE001 - still close the servers
                pass
    finally:
        if not gone:  # close() says "closed" first
            gone.append("garbage-collected (keep a reference to it while you use it)")
        pair.close()


__all__ = ["Recording", "GifWriter", "Mp4Writer", "open_writer", "ffmpeg_executable",
           "SUPPORTED_RECORDING_FORMATS", "check_size", "check_format", "check_mp4"]
