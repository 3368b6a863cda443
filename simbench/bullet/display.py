"""Is there an X display PyBullet's GUI can open? Asked *before* PyBullet touches it.

``p.connect(p.GUI)`` with a ``DISPLAY`` that cannot be reached (a stale ``ssh -X`` display
such as ``localhost:10.0`` left in a tmux session, an Xvfb that has exited) prints
``cannot connect to X server`` and kills the process: no exception reaches Python. So the
display is probed first, the way Xlib connects (X Window System Protocol, X Consortium
standard, "Connection Setup"): open the socket (``/tmp/.X11-unix/X<n>`` or Linux's abstract
socket of the same name for ``:n``, TCP port 6000 + n for ``host:n``) with a short timeout,
send the connection-setup request (with the ``MIT-MAGIC-COOKIE-1`` from ``$XAUTHORITY`` or
``~/.Xauthority`` when there is one) and read the server's answer: Success, Failed (with the
server's reason) or Authenticate. Only Success counts as a display.

What ``--gui`` / ``gui=`` does, the same in ``simbench demo``, ``simbench run`` and
``simbench view`` and in :class:`~simbench.sim.Simulation`:

* ``gui=False`` (``--direct``): headless (DIRECT), no probe.
* ``gui=None`` (no flag): a window when the probe succeeds, else headless; one line is logged
  (a warning when ``DISPLAY`` is set but unreachable, info when it is unset).
* ``gui=True`` (``--gui``): a window when the probe succeeds, else headless with one warning
  line naming the display and why it failed; the run goes on (exit status 0).

On macOS and Windows PyBullet does not use X; the probe answers True there.
"""
from __future__ import annotations

import logging
import os
import socket
import struct
import sys
from pathlib import Path
from typing import NamedTuple

from ..errors import shown

log = logging.getLogger(__name__)

X_TCP_PORT = 6000
PROBE_TIMEOUT = 1.0  # s, for connecting and for the server's answer


class DisplayStatus(NamedTuple):
    """Result of :func:`probe_display`: ``ok``, the display string and, when not ok, why;
    ``connection``: the probe's open connection when it was asked to ``hold`` it."""

    ok: bool
    display: str
    reason: str = ""
    connection: socket.socket | None = None


def _parse(display: str) -> tuple[str, int]:
    """``(host, number)`` of ``[host]:number[.screen]``; ValueError when malformed."""
    host, sep, rest = display.rpartition(":")
    if not sep:
        raise ValueError("no ':'")
    if host.endswith(":"):  # DECnet "host::n": not supported by PyBullet's X either
        raise ValueError("DECnet display")
    number = rest.split(".")[0]
    if not number.isdigit():
        raise ValueError(f"display number {shown(number)} is not a number")
    return host, int(number)


def _xauth_cookie(number: int, host: str) -> tuple[bytes, bytes]:
    """``(name, data)`` of the first matching ``MIT-MAGIC-COOKIE-1`` entry of the Xauthority
    file for display ``number`` (empty when none). Entry layout: family (2 bytes), then
    address, number, name and data, each a 2-byte big-endian length and that many bytes."""
    path = os.environ.get("XAUTHORITY") or str(Path.home() / ".Xauthority")
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return b"", b""
    wanted = {b"", socket.gethostname().encode(), host.encode(), b"localhost"}
    found: list[tuple[int, bytes]] = []
    pos = 0
    try:
        while pos + 2 <= len(raw):
            (family,) = struct.unpack_from(">H", raw, pos)
            pos += 2
            fields = []
            for _ in range(4):
                (n,) = struct.unpack_from(">H", raw, pos)
                fields.append(raw[pos + 2:pos + 2 + n])
                pos += 2 + n
            address, num, name, data = fields
            if name == b"MIT-MAGIC-COOKIE-1" and num in (str(number).encode(), b""):
                rank = 0 if (family == 0xFFFF or address in wanted) else 1
                found.append((rank, data))
    except struct.error:
        pass
    if not found:
        return b"", b""
    found.sort(key=lambda item: item[0])
    return b"MIT-MAGIC-COOKIE-1", found[0][1]


def _connect(host: str, number: int, timeout: float) -> socket.socket:
    """An open socket to the X server of ``host:number`` (local socket for an empty host)."""
    errors = []
    if host in ("", "unix") or host.startswith("/"):
        path = f"/tmp/.X11-unix/X{number}" if not host.startswith("/") else f"{host}:{number}"
        candidates = [path]
        if sys.platform.startswith("linux") and not host.startswith("/"):
            candidates.append("\0" + path)  # Linux's abstract socket, tried by Xlib too
        for address in candidates:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            try:
                s.connect(address)
                return s
            except OSError as exc:
                s.close()
                errors.append(exc)
        if host == "unix" or host.startswith("/"):
            raise errors[0]
        host = "localhost"  # Xlib falls back to TCP on localhost too
    try:
        return socket.create_connection((host, X_TCP_PORT + number), timeout=timeout)
    except OSError as exc:
        raise (errors[0] if errors and isinstance(exc, ConnectionRefusedError) else exc) from None


def _setup(sock: socket.socket, number: int, host: str) -> tuple[int, str]:
    """Send the connection-setup request; the answer's status byte (1 Success, 0 Failed,
    2 Authenticate) and the server's reason text for a refusal."""
    name, data = _xauth_cookie(number, host)
    pad = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    request = struct.pack("<cxHHHHxx", b"l", 11, 0, len(name), len(data)) + pad(name) + pad(data)
    sock.sendall(request)
    head = b""
    while len(head) < 8:
        chunk = sock.recv(8 - len(head))
        if not chunk:
            raise ConnectionError("the server closed the connection during setup")
        head += chunk
    status, reason_len = head[0], head[1]
    # read the whole answer before closing (its length, in 4-byte units, is in bytes 6-7):
    # measured, hanging up in the middle of the server's reply made the next client's
    # XOpenDisplay fail now and then under load
    (extra,) = struct.unpack_from("<H", head, 6)
    body = b""
    if status in (0, 1, 2):
        while len(body) < 4 * extra:
            chunk = sock.recv(min(65536, 4 * extra - len(body)))
            if not chunk:
                break
            body += chunk
    reason = body[:reason_len].decode(errors="replace").strip() if status != 1 else ""
    return status, reason


def probe_display(display: str | None = None, timeout: float = PROBE_TIMEOUT, *,
                  hold: bool = False) -> DisplayStatus:
    """Can an X client connect to ``display`` (default ``$DISPLAY``)? A real connection setup
    with a ``timeout`` (s) on each of connect and answer; never raises. With ``hold``, a
    successful probe's connection stays open in ``.connection`` (close it once the real
    client is connected: see :func:`choose_gui`)."""
    if display is None:
        display = os.environ.get("DISPLAY", "")
    if sys.platform == "darwin" or os.name == "nt":
        return DisplayStatus(True, display, "")
    if not display:
        return DisplayStatus(False, "", "no display found (DISPLAY is not set)")
    try:
        host, number = _parse(display)
    except ValueError as exc:
        return DisplayStatus(False, display, f"DISPLAY={shown(display)} is malformed ({exc})")
    try:
        sock = _connect(host, number, timeout)
    except socket.timeout:
        return DisplayStatus(False, display, f"DISPLAY={display} did not answer within {timeout:g} s")
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        return DisplayStatus(False, display, f"DISPLAY={display} cannot be reached ({why})")
    try:
        status, reason = _setup(sock, number, host)
    except socket.timeout:
        sock.close()
        return DisplayStatus(False, display, f"DISPLAY={display} accepted the connection but sent no "
                                             f"X setup answer within {timeout:g} s")
    except OSError as exc:
        sock.close()
        return DisplayStatus(False, display, f"DISPLAY={display} dropped the X connection ({exc})")
    if status == 1 and hold:
        return DisplayStatus(True, display, "", sock)
    sock.close()
    if status == 1:
        return DisplayStatus(True, display, "")
    if status not in (0, 2):
        return DisplayStatus(False, display, f"DISPLAY={display} is not an X server (its answer starts "
                                             f"with byte {status}, expected 0, 1 or 2)")
    what = "refused the connection" if status == 0 else "asked for authentication"
    reason = " ".join(reason.split())[:120]
    return DisplayStatus(False, display, f"the X server at DISPLAY={display} {what}"
                                         + (f": {reason}" if reason else ""))


def display_available() -> bool:
    """True when ``$DISPLAY`` names an X server that accepts a connection (see :func:`probe_display`)."""
    return probe_display().ok


def choose_gui(gui: bool | None) -> bool:
    """Whether to open a GUI for ``gui`` (True / False / None = when possible), falling back
    to headless with one logged line (see the module docstring)."""
    use, held = choose_gui_held(gui)
    if held is not None:
        held.close()
    return use


def choose_gui_held(gui: bool | None) -> tuple[bool, socket.socket | None]:
    """:func:`choose_gui`, also returning the probe's open X connection when a GUI is to be
    opened: close it only after PyBullet has connected. Measured under Xvfb on a loaded
    2-core machine: when the probe's connection was closed just before PyBullet's own
    ``XOpenDisplay``, that failed in 7 of 60 starts ("cannot connect to X server", the
    process ends); holding it open until PyBullet was connected, 0 of 60 (a 50 ms pause
    instead: 0 of 60 too)."""
    if gui is False:
        return False, None
    status = probe_display(hold=True)
    if status.ok:
        return True, status.connection
    if status.display or gui:
        log.warning("%s; running headless (DIRECT) instead of the GUI", status.reason)
    else:  # no display and no GUI asked for: information (on stderr by default, not with -q)
        log.info("%s; running headless (DIRECT)", status.reason)
    return False, None


__all__ = ["DisplayStatus", "probe_display", "display_available", "choose_gui", "choose_gui_held"]
