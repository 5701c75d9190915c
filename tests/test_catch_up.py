"""catch_up and max_lateness end to end, under a faked clock (libfaketime) with the real
bash and bash 3.2: a daily 06:00 job on a machine that was off from 05:00 to 09:00.

What starts the wrapper at boot is each target's own artifact, as rendered: cron's
`@reboot` line, launchd's RunAtLoad, systemd's Persistent=true (each tested below for
being there with "once" and absent with "none"); the wrapper's gate then decides, from
the recorded last firing, whether there is a firing to catch up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.render.desired import desired
from schedgen.render.tzgate import HOST, NOT_NOW, RUN, Gate
from schedgen.schedule.expressions import parse_cron
from tests import faked_clock, wrapper_kit
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config
from tests.wrapper_kit import Wrapped, finish, kill_group, make_job, start_together, wait_for

if shutil.which("faketime") is None:
    pytest.skip("faketime not installed", allow_module_level=True)

HOST_TZ = "Europe/Berlin"
# 06:00 in Berlin is 05:00 UTC in January.
DAY1 = datetime(2027, 1, 11, 5, 0, tzinfo=UTC)
DAY = timedelta(days=1)
BOOT = DAY1 + DAY + timedelta(hours=3, seconds=30)


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catch_up: str,
         targets: list[str], **more: object) -> tuple[Wrapped, Path]:
    monkeypatch.setenv("TZ", HOST_TZ)
    out = tmp_path / "ran"
    w = make_job(tmp_path, "daily", schedule="0 6 * * *", targets=targets, catch_up=catch_up,
                 max_lateness="6h", command=f'echo "$SCHEDGEN_RUN_ID" >>{out}', **more)
    return w, out


def _start(w: Wrapped, t: datetime, delayed: bool = False) -> subprocess.CompletedProcess[str]:
    env = {"TZ": HOST_TZ, **({"SCHEDGEN_DELAYED": "1"} if delayed else {})}
    return faked_clock.run(t, w.argv("--cron"),
                           env=w.env(env), capture_output=True, text=True, timeout=60)


def _ran(out: Path) -> list[str]:
    return [r[:13] for r in out.read_text().split()] if out.exists() else []


def _boot_starts(w: Wrapped, target: str) -> bool:
    """Does the target's artifact, as rendered, start the wrapper when the machine is back?"""
    arts = {a.kind: a.content for a in desired(w.config) if a.job in (w.job.name, None)}
    if target == "cron":
        return any(line.startswith("@reboot ") for line in arts["cron"].splitlines())
    if target == "launchd":
        return "<key>RunAtLoad</key>\n\t<true/>" in arts["plist"]
    return "Persistent=true" in arts["timer"]


def _off_from_5_to_9(w: Wrapped, target: str) -> None:
    """Day 1 06:00 fires; day 2 the machine is off over 06:00 and back at 09:00; the
    scheduler starts the wrapper at boot when its artifact says so, and (launchd) once
    more after a wake ten minutes later; day 3 06:00 fires."""
    assert _start(w, DAY1).returncode == 0
    if _boot_starts(w, target):
        assert _start(w, BOOT).returncode == 0
        assert _start(w, BOOT + timedelta(minutes=10)).returncode == 0   # a second start
    assert _start(w, DAY1 + 2 * DAY).returncode == 0


@pytest.mark.macos
@pytest.mark.parametrize("target", ["cron", "launchd", "systemd"])
def test_a_firing_missed_while_off_runs_once_at_boot_with_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    w, out = _job(tmp_path, monkeypatch, "once", [target])
    _off_from_5_to_9(w, target)
    assert _ran(out) == ["20270111T0500", "20270112T0800", "20270113T0500"]
    starts = [e for e in w.events() if e["event"] == "start"]
    catch = [e for e in starts if e.get("catch_up")]
    # One catch-up, for the day-2 firing, said in the event and the manifest.
    assert [(e["firing"], e["late"] // 60) for e in catch] == [("2027-01-12T06:00", 180)]
    assert [m.get("catch_up") for m in w.manifests()] == [None, True, None]


@pytest.mark.macos
@pytest.mark.parametrize("target", ["cron", "launchd", "systemd"])
def test_a_firing_missed_while_off_runs_zero_times_with_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    w, out = _job(tmp_path, monkeypatch, "none", [target])
    assert not _boot_starts(w, target)
    _off_from_5_to_9(w, target)
    assert _ran(out) == ["20270111T0500", "20270113T0500"]


def test_a_catch_up_later_than_max_lateness_is_dropped_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w, out = _job(tmp_path, monkeypatch, "once", ["cron"])
    assert _start(w, DAY1).returncode == 0
    late = DAY1 + DAY + timedelta(hours=7)   # back at 13:00: 7 h late, the bound is 6 h
    r = _start(w, late)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _ran(out) == ["20270111T0500"]
    [ev] = w.events("late")
    assert (ev["firing"], ev["outcome"], ev["max_lateness"]) == ("2027-01-12T06:00", "dropped", 21600)


def test_a_fresh_install_loaded_after_a_firing_catches_nothing_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # launchd loads the job (RunAtLoad) at install, an hour after a firing it never had.
    w, out = _job(tmp_path, monkeypatch, "once", ["launchd"])
    r = _start(w, DAY1 + timedelta(hours=1))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _ran(out) == [] and w.events() == []


def test_a_paused_firing_is_not_caught_up_after_resume(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.machine import pause

    w, out = _job(tmp_path, monkeypatch, "once", ["cron"])
    assert _start(w, DAY1).returncode == 0
    pause.pause(w.config.namespace, "daily", None)
    assert _start(w, DAY1 + DAY).returncode == 0          # paused: skipped
    pause.resume(w.config.namespace, "daily")
    assert _start(w, DAY1 + DAY + timedelta(hours=2)).returncode == 0   # a boot after resume
    assert _ran(out) == ["20270111T0500"]
    [skipped] = w.events("skipped")
    assert (skipped["firing"], skipped["reason"]) == ("2027-01-12T06:00", "paused")


def test_the_python_gate_gives_the_same_verdicts() -> None:
    gate = Gate(HOST, (parse_cron("0 6 * * *"),), frozenset(), 6 * 3600, 300)
    gate = gate._replace(zone=HOST_TZ)  # the Python gate reads the host zone by its name
    state: list[int | None] = [None, None]
    at = [DAY1 - timedelta(hours=1), DAY1, BOOT, BOOT + timedelta(minutes=10), DAY1 + 2 * DAY]
    assert [gate.verdict(t, state) for t in at] == [NOT_NOW, RUN, RUN, NOT_NOW, RUN]


def test_validate_refuses_what_catch_up_cannot_mean(tmp_path: Path) -> None:
    from schedgen.errors import ConfigError

    text = ('[jobs.a]\ncommand = "true"\nschedule = ["@reboot", "0 6 * * *"]\ncatch_up = "once"\n'
            'targets = ["launchd"]\nrun_at_load = true\nrandom_delay = "2h"\n')
    with pytest.raises(ConfigError) as e:
        loads(text, tmp_path / "jobs.toml")
    where = [p.where for p in e.value.problems]
    assert where.count("jobs.a.catch_up") == 2 and "jobs.a.random_delay" in where


def test_diff_says_the_policy_change_in_jobs_toml_terms(tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    text = f"""
[jobs.daily]
command = "true"
schedule = "0 6 * * *"
targets = ["cron"]
log_root = "{tmp_path}/logs"
wrapper_dir = "{tmp_path}/wrappers"
"""
    config = write_config(tmp_path / "jobs.toml", text)
    assert schedgen("apply", "-c", str(config), cwd=tmp_path).returncode == 0
    write_config(config, text + 'catch_up = "once"\nmax_lateness = "6h"\nrandom_delay = "10m"\n')
    r = schedgen("diff", "-c", str(config), cwd=tmp_path)
    assert r.returncode == 1
    assert "catch_up: none -> once" in r.stdout
    assert "max_lateness: 1h -> 6h" in r.stdout and "random_delay: 0s -> 10m" in r.stdout
    assert "+@reboot " in r.stdout   # the crontab's boot line, in the file diff


def test_kubernetes_gets_max_lateness_as_its_starting_deadline(tmp_path: Path) -> None:
    import kubernetes_validate
    import yaml

    text = ('[jobs.a]\ncommand = ["true"]\nschedule = "0 6 * * *"\ntargets = ["kubernetes"]\n'
            'catch_up = "once"\nmax_lateness = "6h"\nkubernetes = { image = "busybox:1" }\n')
    config = loads(text, tmp_path / "jobs.toml")
    [manifest] = [a.content for a in desired(config) if a.rel.startswith("kubernetes/")]
    doc = yaml.safe_load(manifest)
    assert doc["spec"]["startingDeadlineSeconds"] == 21600
    assert kubernetes_validate.validate(doc, "1.32.0", strict=True) == "1.32"
    from schedgen.errors import ConfigError

    with pytest.raises(ConfigError) as e:  # the controller looks every 10 s
        loads(text.replace('"6h"', "5"), tmp_path / "jobs.toml")
    assert [p.where for p in e.value.problems] == ["jobs.a.max_lateness"]


@pytest.mark.macos
def test_a_delayed_catch_up_still_starts_within_max_lateness(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The start delay comes after the gate: a catch-up 115 s late with a 2 m bound must
    # not then wait its whole stable offset (the start would be later than max_lateness).
    from schedgen.render.policies import stable_offset
    monkeypatch.setenv("SCHEDGEN_HOST", "h1")
    monkeypatch.setenv("TZ", HOST_TZ)
    # an offset of 10-13 s (an on-time start sleeps it whole: tests/test_random_delay.py):
    # 115 s late plus any of it is past the bound
    name = next(n for n in (f"daily{i}" for i in range(500))
                if 10 <= stable_offset("default", n, 60) <= 13)
    out = tmp_path / "ran"
    w = make_job(tmp_path, name, schedule="0 6 * * *", targets=["cron"], catch_up="once",
                 max_lateness="2m", random_delay="1m", command=f"echo x >>{out}")
    # day 1 on time, its delay already slept (as systemd's timer does it): the gate's record
    assert _start(w, DAY1, delayed=True).returncode == 0
    r = _start(w, DAY1 + DAY + timedelta(seconds=115))
    assert r.returncode == 0, r.stderr
    starts = [e for e in w.events("start")]
    assert len(starts) == 2 and out.read_text() == "x\nx\n"
    assert "delay" not in starts[0] and starts[1]["firing"] == "2027-01-12T06:00"
    # the catch-up waited what was left of the bound, not its whole offset
    assert 0 < starts[1]["delay"] and starts[1]["late"] + starts[1]["delay"] < 120, starts[1]


@pytest.mark.macos
def test_a_catch_ups_retry_does_not_start_past_the_next_firing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hourly: the 07:00 firing caught up at 07:50 fails; a retry 15 m later would start at
    # 08:05, after the 08:00 firing: the window counts from the firing, not the late start.
    monkeypatch.setenv("TZ", HOST_TZ)
    w = make_job(tmp_path, "hourly", schedule="0 * * * *", targets=["cron"], catch_up="once",
                 retries=1, retry_delay="15m", command='[ -n "${FAIL-}" ] && exit 3 || :')
    assert _start(w, DAY1).returncode == 0
    p = faked_clock.popen(DAY1 + timedelta(minutes=110),
                          w.argv("--cron"), env=w.env({"TZ": HOST_TZ, "FAIL": "1"}),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        wait_for(lambda: w.events("retry") or w.events("no_retry"), what="the first attempt's end")
    finally:
        kill_group(p.pid)
        p.communicate()
    assert w.events("retry") == []
    [no] = w.events("no_retry")
    assert no["reason"] == "next_firing"


@pytest.mark.macos
def test_an_hourly_job_catches_up_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A schedule whose hour is "*" (no fixed time): its state line starts with a blank
    # field, which must still read as "a firing has run" (else nothing is ever caught up,
    # and a second start in the same minute runs again).
    monkeypatch.setenv("TZ", HOST_TZ)
    out = tmp_path / "ran"
    w = make_job(tmp_path, "hourly", schedule="0 * * * *", targets=["cron"], catch_up="once",
                 command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')
    for t in (DAY1, DAY1, DAY1 + timedelta(minutes=110), DAY1 + timedelta(minutes=115)):
        assert _start(w, t).returncode == 0
    assert _ran(out) == ["20270111T0500", "20270111T0650"]
    assert [e["firing"] for e in w.events("start")] == ["2027-01-11T06:00", "2027-01-11T07:00"]


def _slow_mkdir(root: Path) -> Path:
    """A bin folder whose mkdir takes half a second (then is the system's): it widens,
    without touching the runtime, the moment between a start's reading of the gate's
    state and its writing of it (the first start of a job makes the state's folder)."""
    bindir = root / "slowbin"
    bindir.mkdir()
    real = shutil.which("mkdir", path=os.pathsep.join(wrapper_kit.SYSTEM_PATH))
    (bindir / "mkdir").write_text(f'#!/bin/sh\nsleep 0.5\nexec {real} "$@"\n')
    (bindir / "mkdir").chmod(0o755)
    return bindir


@pytest.mark.macos
@pytest.mark.parametrize("lock", [{"on_busy": "wait", "wait": "1m"}, {"on_busy": "replace"}, False,
                                  {"on_busy": "skip"}], ids=["wait", "replace", "no-lock", "skip"])
def test_two_starts_of_one_firing_at_one_instant_run_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lock: object) -> None:
    # cron's @reboot line and the 06:00 line in a boot minute: two wrappers of a fresh
    # job, at one instant, for one firing. Whatever the lock, the command runs once; the
    # other start ends at the gate (exit 0, nothing written), so `replace` stops nothing
    # and `skip` says no busy.
    monkeypatch.setenv("TZ", HOST_TZ)
    out = tmp_path / "ran"
    slow = _slow_mkdir(tmp_path)
    w = make_job(tmp_path, "daily", schedule="0 6 * * *", targets=["cron"], catch_up="once",
                 max_lateness="6h", lock=lock, path=[str(slow), *wrapper_kit.SYSTEM_PATH],
                 command=f'echo "$SCHEDGEN_RUN_ID" >>{out}; sleep 1')
    env = faked_clock.faked_env(DAY1 + timedelta(seconds=1), w.env({"TZ": HOST_TZ}))
    procs = start_together([w.argv("--cron")] * 2, env, tmp_path)
    try:
        results = finish(procs)
    finally:
        for p in procs:
            kill_group(p.pid)
    assert [r[0] for r in results] == [0, 0], results
    assert len(_ran(out)) == 1
    assert [e["firing"] for e in w.events("start")] == ["2027-01-11T06:00"]
    assert w.events("replace") == [] and w.events("busy") == []
    assert [e["outcome"] for e in w.events("finish")] == ["ok"]
