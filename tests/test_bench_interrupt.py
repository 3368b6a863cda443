"""An interrupted ``simbench bench`` (Ctrl-C, SIGTERM) keeps what it measured: each group of rows
is printed as it is timed, and the ``--json`` / ``--markdown`` reports are written with the rows
finished so far, marked interrupted (exit 130, 143). Oracle: the row lines the command printed
before the signal (read from its stdout as it ran), against the rows of the JSON (``json.load``)
and of the Markdown table, read back from the files."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

ROW = re.compile(r"^    (\S.*?)\s+(\d+)\s+\S+")   # "    contender   n   us   ratio  notes"


@pytest.mark.parametrize("sig, code, name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_an_interrupted_bench_writes_the_rows_done_marked_interrupted(tmp_path, sig, code, name):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    # --rounds 15: the groups after the first take seconds, so the signal falls inside the run
    proc = subprocess.Popen([sys.executable, "-m", "simbench", "bench", "--suite", "dynamics", "--quick", "--rounds",
                             "15", "--robot", "mobile_manipulator", "--json", "b.json", "--markdown", "b.md"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[tuple[str, int]] = []
    try:
        deadline = time.monotonic() + 300
        while not seen:   # the first row line: a group is done
            line = proc.stdout.readline()
            assert line and time.monotonic() < deadline, ("ended before a row", proc.communicate())
            m = ROW.match(line)
            if m:
                seen.append((m.group(1), int(m.group(2))))
        proc.send_signal(sig)
        watchdog = threading.Timer(120, proc.kill)   # a hang fails the test, it does not block it
        watchdog.start()
        out, err = proc.stdout.read(), proc.stderr.read()   # the same reader: lines it holds are kept
        proc.wait()
        watchdog.cancel()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err[-2000:]
    printed = seen + [(m.group(1), int(m.group(2))) for m in map(ROW.match, out.splitlines()) if m]
    data = json.load(open(tmp_path / "b.json"))
    assert data["interrupted"] is True and data["signal"] == name
    rows = [(r["contender"], r["n"]) for r in data["rows"]]
    assert len(rows) >= 1 and rows == printed   # every row printed is in the report, and no other
    assert all(r["us_per_config"] > 0 and r["suite"] == "dynamics" for r in data["rows"])
    md = (tmp_path / "b.md").read_text()
    assert ("Interrupted (SIGINT)" if name == "SIGINT" else "Terminated (SIGTERM)") in md
    table = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| robot")]
    assert len(table) == len(rows)
    assert f"{len(rows)} rows finished are in b.json and b.md" in err
    assert ("simbench bench: interrupted" if name == "SIGINT" else "simbench bench: terminated (SIGTERM)") in err
