"""The systemd target with a real user manager (tests/sdmanager.py): a timer that fires.

What every target shares (apply, status, a start, notify and ping, masking, ownership)
is in tests/conformance/; here is what only a running manager shows: `list-timers`
lists the armed timer, the timer starts the service on its own, the run's finish ping
arrives, and uninstall disarms it.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers import schedgen, write_config
from tests.pinghub import PingHub
from tests.sdmanager import UserManager

JOBS = """
[defaults]
namespace = "sdreal"
targets = ["systemd"]
label_prefix = "local.sdreal"

[jobs.tick]
command = "echo tick >> {out}"
schedule = "@every 2s"
[jobs.tick.notify]
ping_url = "{url}/hc"
"""
TIMER = "local.sdreal.tick.timer"



def test_a_timer_fires_the_job_and_uninstall_disarms_it(live_manager: UserManager, tmp_path: Path,
                                                        pinghub: PingHub) -> None:
    out = tmp_path / "ticks"
    write_config(tmp_path / "jobs.toml", JOBS.format(out=out, url=pinghub.url))
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    timers = live_manager.run("list-timers", "--all", "--no-legend").stdout
    assert TIMER in timers, timers
    deadline = time.monotonic() + 30
    while not (out.exists() and out.read_text().count("tick") >= 1) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert out.exists() and "tick" in out.read_text(), "the timer never started the job"
    # The success ping is sent after the run, in the background: it arrives all the same
    # (the timer may have started the next run meanwhile: its /start may come between).
    deadline = time.monotonic() + 20
    while "/hc" not in pinghub.seen() and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = pinghub.seen()
    assert seen[0] == "/hc/start" and "/hc" in seen, seen
    r = schedgen("status", cwd=tmp_path)
    assert r.returncode == 0 and "in sync" in r.stdout, r.stdout + r.stderr
    r = schedgen("uninstall", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert TIMER not in live_manager.run("list-timers", "--all", "--no-legend").stdout
    assert live_manager.run("is-active", TIMER, check=False).stdout.strip() == "inactive"
