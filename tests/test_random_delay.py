"""random_delay: a start delay before the lock. A stable offset per namespace, job and
host, worked out at render time (the same after a re-apply), spread over the window;
a fresh one drawn by the wrapper each run. Runs by the real bash (and bash 3.2)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
import tomli_w

from schedgen.config.load import loads
from schedgen.render.artifacts import wrapper
from schedgen.render.policies import stable_offset
from tests.helpers import schedgen, write_config
from tests.sdmanager import UserManager
from tests.wrapper_kit import SYSTEM_PATH, make_job

_DELAY = re.compile(r"^sg_policy=1 sg_delay=(\d+) sg_delay_max=(\d+)$", re.M)


def _offsets(tmp_path: Path, n: int) -> dict[str, int]:
    jobs = {f"job-{i:03d}": {"command": "true", "schedule": "0 6 * * *", "targets": ["cron"],
                             "random_delay": "10m", "wrapper_dir": str(tmp_path / "w")}
            for i in range(n)}
    text = tomli_w.dumps({"defaults": {"namespace": "spread"}, "jobs": jobs})
    config = loads(text, tmp_path / "jobs.toml")
    out = {}
    for job in config.jobs:
        m = _DELAY.search(wrapper(job, config))
        assert m is not None and m.group(2) == "0"
        out[job.name] = int(m.group(1))
    return out


def test_100_stable_offsets_spread_over_the_window_and_stay_after_a_reapply(tmp_path: Path) -> None:
    first = _offsets(tmp_path, 100)
    assert all(0 <= s < 600 for s in first.values())
    # Spread: every minute of the ten gets some, no second holds more than two.
    minutes = Counter(s // 60 for s in first.values())
    assert sorted(minutes) == list(range(10)) and max(minutes.values()) <= 20
    assert len(set(first.values())) >= 90
    assert _offsets(tmp_path, 100) == first   # re-rendered (apply again): the same
    # Per host: another host gets other offsets.
    other = {n: stable_offset("spread", n, 600, on="another-host") for n in first}
    assert sum(other[n] != first[n] for n in first) >= 95


def _fake_sleep(tmp_path: Path) -> tuple[Path, Path]:
    """A `sleep` that notes its argument and returns at once (the wrapper's only sleep)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "slept"
    bin_dir.mkdir()
    (bin_dir / "sleep").write_text(f'#!/bin/sh\necho "$1" >>{log}\n')
    (bin_dir / "sleep").chmod(0o755)
    return bin_dir, log


@pytest.mark.macos
def test_a_fresh_delay_is_drawn_each_run_within_the_window(tmp_path: Path) -> None:
    bin_dir, log = _fake_sleep(tmp_path)
    w = make_job(tmp_path, "fresh", command="true", random_delay="10m",
                 random_delay_stable=False, path=[str(bin_dir), *SYSTEM_PATH])
    for _ in range(40):
        assert w.run("--cron").returncode == 0
    slept = [int(x) for x in log.read_text().split()]
    delays = [e["delay"] for e in w.events("start") if "delay" in e]
    assert len(delays) == len(slept) and sorted(delays) == sorted(slept)
    assert all(0 < d <= 600 for d in slept) and len(set(slept)) >= 30  # 0 sleeps not at all


@pytest.mark.macos
def test_a_stable_delay_sleeps_before_the_lock_and_is_said(tmp_path: Path) -> None:
    name = next(n for n in (f"s{i}" for i in range(100)) if stable_offset("default", n, 3) == 2)
    w = make_job(tmp_path, name, command="true", random_delay="3s")
    before = datetime.now().astimezone()
    p = w.popen("--cron")
    # While it sleeps the lock is free: a run that is not delayed (as systemd starts it,
    # SCHEDGEN_DELAYED) takes it and ends first.
    assert w.run("--cron", env={"SCHEDGEN_DELAYED": "1"}).returncode == 0
    assert p.wait(60) == 0 and not w.events("busy")
    assert [e.get("delay") for e in w.events("start")] == [None, 2]
    [start] = [e for e in w.events("start") if "delay" in e]
    # The start event comes after the delay: at least 2 s after the wrapper was started
    # (in whole seconds, as the event's time is; the undelayed run's start, taken as the
    # reference before, came late under load and made it look early).
    at = datetime.fromisoformat(start["ts"].replace("Z", "+00:00")).timestamp()
    assert int(at) - int(before.timestamp()) >= 2


def test_foreground_and_systemd_started_runs_are_not_delayed(tmp_path: Path) -> None:
    bin_dir, log = _fake_sleep(tmp_path)
    w = make_job(tmp_path, "fg", command="true", random_delay="10m", random_delay_stable=False,
                 path=[str(bin_dir), *SYSTEM_PATH])
    assert w.run(env={"SCHEDGEN_FOREGROUND": "1"}).returncode == 0
    assert w.run("--cron", env={"SCHEDGEN_DELAYED": "1"}).returncode == 0   # the unit sets it
    assert not log.exists()
    assert all("delay" not in e for e in w.events("start"))


def test_a_real_systemd_manager_loads_the_timers_policy_keys(live_manager: UserManager,
                                                              tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", """
[defaults]
targets = ["systemd"]
[jobs.daily]
command = ["true"]
schedule = "0 6 * * *"
catch_up = "once"
max_lateness = "6h"
random_delay = "15m"
[jobs.fresh]
command = ["true"]
schedule = "30 7 * * *"
random_delay = "90s"
random_delay_stable = false
""")
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr

    def show(unit: str, *props: str) -> dict[str, str]:
        out = live_manager.run("show", unit, *(f"-p{p}" for p in props)).stdout
        return dict(line.split("=", 1) for line in out.splitlines())

    props = ("Persistent", "RandomizedDelayUSec", "FixedRandomDelay")
    assert show("local.schedgen.daily.timer", *props) == {
        "Persistent": "yes", "RandomizedDelayUSec": "15min", "FixedRandomDelay": "yes"}
    assert show("local.schedgen.fresh.timer", *props) == {
        "Persistent": "no", "RandomizedDelayUSec": "1min 30s", "FixedRandomDelay": "no"}
    env = show("local.schedgen.daily.service", "Environment")["Environment"]
    assert "SCHEDGEN_DELAYED=1" in env
