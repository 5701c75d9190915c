"""The faked clock the tests run programs under (tests/faked_clock.py): what it shows,
that a hang fails fast, and that a program killed inside libfaketime's start-up, holding
its semaphore, stops none started after it, where it stops all under `faketime`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests import faked_clock

pytestmark = pytest.mark.skipif(faked_clock.LIBRARY is None, reason="libfaketime not installed")

T = datetime(2030, 1, 1, tzinfo=UTC)
ENV = {"PATH": "/usr/bin:/bin", "TZ": "UTC"}


def test_the_program_and_its_children_read_one_ticking_clock() -> None:
    # bash's own clock, a child's, the same child a second later
    r = faked_clock.run(T, ["bash", "-c", 'printf "%(%s)T\\n" -1; date +%s.%N; sleep 1; '
                            "date +%s.%N"], env=ENV, capture_output=True, text=True)
    bash, child, later = (float(x) for x in r.stdout.split())
    assert T.timestamp() <= bash < T.timestamp() + 5, r.stdout
    assert bash <= child < bash + 2                       # not restarted at T
    assert 1 <= later - child < 3


def test_a_frozen_clock_stands_and_a_time_is_read_in_the_programs_zone() -> None:
    # (not `date -u`: it sets TZ itself, and libfaketime reads FAKETIME again under it)
    for when in ("2030-01-01 01:00:00", T):
        r = faked_clock.run(when, ["bash", "-c", "date +%s; sleep 1.1; date +%s"], frozen=True,
                            env={**ENV, "TZ": "Europe/Berlin"}, capture_output=True, text=True)
        assert r.stdout.split() == [str(int(T.timestamp()))] * 2, when


def test_a_run_that_does_not_end_fails_in_its_timeout_and_leaves_nothing(tmp_path: Path) -> None:
    # the child keeps the output pipe open after its parent is gone: all are killed
    started = time.monotonic()
    with pytest.raises(faked_clock.ClockHang, match=r"did not end within 1 s(.|\n)*sleep 300"):
        faked_clock.run(T, ["bash", "-c", f"sleep 300 & echo $! >{tmp_path}/pid; wait"],
                        env=ENV, timeout=1, capture_output=True)
    assert time.monotonic() - started < 15
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()


# Under the way given, kill a /bin/date in libfaketime's start-up (gdb stops it at the
# sem_post of the semaphore it took there, then SIGKILLs it), then start three more.
_DRIVER = r"""
import json, os, subprocess, sys
wait = float(sys.argv[1])
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}   # not into gdb itself
g = subprocess.run(["gdb", "-q", "-batch", "-nx", "-ex", "set startup-with-shell off",
                    "-ex", "set breakpoint pending on",
                    "-ex", "set environment LD_PRELOAD=" + os.environ["LD_PRELOAD"],
                    "-ex", "break sem_post", "-ex", "run", "-ex", "bt", "-ex", "kill",
                    "--args", "/bin/date"], env=env, capture_output=True, text=True, timeout=60)
later = []
for _ in range(3):
    try:
        later.append(subprocess.run(["/bin/date", "+%Y"], capture_output=True, text=True,
                                    timeout=wait).stdout.strip())
    except subprocess.TimeoutExpired:
        later.append("hung")
        break
print(json.dumps({"gdb": g.stdout + g.stderr, "later": later}))
"""


@pytest.mark.skipif(shutil.which("gdb") is None and not os.environ.get("CI"),
                    reason="gdb not installed (.ci/run installs it)")
@pytest.mark.parametrize("way", ["faked_clock", "faketime"])
def test_a_child_killed_in_its_start_up_stops_no_later_one(tmp_path: Path, way: str) -> None:
    driver = tmp_path / "driver.py"
    driver.write_text(_DRIVER)
    if way == "faked_clock":
        r = faked_clock.run(T, [sys.executable, driver, "20"], env=ENV, capture_output=True,
                            text=True, timeout=120)
    else:
        if shutil.which("faketime") is None:
            pytest.skip("faketime not installed")
        r = subprocess.run(["faketime", "-f", "@2030-01-01 00:00:00", sys.executable, driver,
                            "3"], env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    # stopped inside libfaketime's start-up (a shared library's constructor), then killed
    assert "libfaketime" in out["gdb"] and "call_init" in out["gdb"], out["gdb"]
    assert "killed" in out["gdb"], out["gdb"]
    if way == "faked_clock":
        assert out["later"] == ["2030"] * 3
    else:   # the old way: the semaphore stays taken, the next program waits for ever
        assert out["later"] == ["hung"]
