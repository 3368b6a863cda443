"""The sweep output folder's _lock: held while a run writes (a second run is refused naming the
first), gone when the run ends (it stayed behind in every finished folder, found by a user
walkthrough)."""
import os

import pytest

from simbench.errors import SimbenchError
from simbench.sweep.output import SweepFolder
from simbench.sweep.run import prepare


def test_the_lock_is_held_while_a_run_writes_and_removed_after(tmp_path):
    spec = prepare("dynamics", ["simbench:planar_2r.urdf"], samples=10, seed=0)
    out = tmp_path / "o"
    first = SweepFolder(out, spec, engine="local", workers=1)
    assert (out / "_lock").read_text() == f"pid {os.getpid()}\n"
    with pytest.raises(SimbenchError, match=rf"^sweep output folder '.*o' is in use by pid {os.getpid()}; wait"):
        SweepFolder(out, spec, engine="local", workers=1)
    first.close("interrupted", 0.0)
    assert not (out / "_lock").exists()
    # the next run takes a new lock file, which excludes a third run as the first one did
    second = SweepFolder(out, spec, engine="local", workers=1)
    with pytest.raises(SimbenchError, match="is in use by pid"):
        SweepFolder(out, spec, engine="local", workers=1)
    second.close("interrupted", 0.0)
    assert sorted(p.name for p in out.iterdir()) == ["_manifest.json"]
