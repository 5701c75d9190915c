"""`status` / `reconcile`: installed, drift, launchd state, last run, next run, queue, lock."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen.commands import status as st
from schedgen.output import status as out
from tests.fakes import (
    FakeCrontab,
    FakeLaunchctl,
)
from tests.helpers import build_file_tree, schedgen, write_config

JOBS = """
[defaults]
targets = ["cron"]

[jobs.funnel]
command = ["./process.sh", "{item}"]
schedule = "40 10,16 * * *"
[jobs.funnel.queue]
inbox = "q/done"
pattern = "*.json"
[jobs.funnel.lock]
name = "notes"

[jobs.boot]
command = "true"
schedule = "@reboot"
lock = false

[jobs.agent]
command = "true"
schedule = "@every 15m"
targets = ["launchd"]
"""


@pytest.fixture
def env(fake_crontab: FakeCrontab, fake_launchctl: FakeLaunchctl,
        tmp_path: Path) -> Path:
    write_config(tmp_path / "jobs.toml", JOBS)
    return tmp_path / "jobs.toml"


def logs(home: Path, job: str) -> Path:
    return home / ".local/state/schedgen/logs" / job


def manifest(run_id: str, outcome: str, code: int | None) -> str:
    return json.dumps({"job": "funnel", "run_id": run_id, "host": "h", "pid": 1,
                       "started_at": "2026-01-02T10:40:00Z", "finished_at": "2026-01-02T10:40:05Z",
                       "duration": 5, "exit_code": code, "outcome": outcome, "item": None,
                       "attempt": None})


def test_not_installed_is_drift(env: Path, tmp_path: Path) -> None:
    r = schedgen("status", "--check", cwd=tmp_path)
    assert r.returncode == 1
    assert "funnel  [cron]  not installed" in r.stdout and "drift      crontab lines: missing" in r.stdout
    assert schedgen("status", cwd=tmp_path).returncode == 0  # without --check: 0


def test_after_apply_everything_is_in_sync(env: Path, tmp_path: Path) -> None:
    schedgen("apply", cwd=tmp_path)
    r = schedgen("status", "--check", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert r.stdout.startswith("namespace default: in sync\n")
    assert "agent  [launchd]  installed" in r.stdout
    assert "launchd    local.schedgen.agent: loaded, not running, last exit 0" in r.stdout
    rec = schedgen("reconcile", "--check", cwd=tmp_path)
    assert rec.returncode == 0 and rec.stdout == r.stdout


def test_last_run_is_the_newest_manifest(env: Path, home: Path) -> None:
    runs = logs(home, "funnel") / "runs"
    build_file_tree(runs, {
        "20260102T104000Z-11": {"schedgen-manifest.json": manifest("20260102T104000Z-11", "ok", 0)},
        "20260102T164000Z-12": {"schedgen-manifest.json": manifest("20260102T164000Z-12", "failed", 3)},
        "20260101T164000Z-10": {"schedgen-manifest.json": manifest("20260101T164000Z-10", "ok", 0)},
        "20260103T104000Z-13": {},  # starting: no manifest yet
    })
    s = st.status(env)
    funnel = next(j for j in s.jobs if j.job == "funnel")
    assert funnel.last_run is not None and funnel.last_run["run_id"] == "20260102T164000Z-12"
    assert "last run   20260102T164000Z-12: failed, exit 3 at 2026-01-02 10:40 UTC" in out.as_text(s)


def test_queue_depth_counts_inbox_claims_and_failed(env: Path, tmp_path: Path) -> None:
    build_file_tree(tmp_path / "q", {
        "done": {"a.json": "1", "b.json": "2", "ignored.txt": "x", ".hidden.json": "y"},
        "processing": {"20260102T104000Z-11": {"c.json": "3"}, "20260102T104500Z-12": {"d.json": "4"}},
        "failed": {"e.json": "5"},
    })
    funnel = next(j for j in st.status(env).jobs if j.job == "funnel")
    assert funnel.queue == st.runs.QueueDepth(inbox=2, processing=2, failed=1)


def test_lock_held_while_another_process_holds_it(env: Path, home: Path) -> None:
    lock = home / ".local/state/schedgen/locks/notes.lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(lock)!r})\nfcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\ntime.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        funnel = next(j for j in st.status(env).jobs if j.job == "funnel")
        assert funnel.lock_held is True
    finally:
        holder.kill()
        holder.wait()
    funnel = next(j for j in st.status(env).jobs if j.job == "funnel")
    assert funnel.lock_held is False
    # and status's own attempt did not leave the lock taken
    with open(lock) as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    boot = next(j for j in st.status(env).jobs if j.job == "boot")
    assert boot.lock_held is None  # lock = false


def test_next_run_and_schedules_without_calendar_times(env: Path) -> None:
    jobs = {j.job: j for j in st.status(env).jobs}
    assert jobs["funnel"].next_run is not None
    assert jobs["funnel"].next_run[11:16] in ("10:40", "16:40")
    assert jobs["boot"].next_run is None and any("boot" in n for n in jobs["boot"].next_notes)
    assert jobs["agent"].next_run is None
    assert "StartInterval); there is no calendar time" in jobs["agent"].next_notes[0]
    assert jobs["funnel"].readable  # from schedgen.schedule.describe


def test_running_pid_and_json(env: Path, tmp_path: Path,
                              fake_launchctl: FakeLaunchctl) -> None:
    schedgen("apply", cwd=tmp_path)
    fake_launchctl.set_running("local.schedgen.agent", 777)
    r = schedgen("status", "--json", cwd=tmp_path)
    assert r.returncode == 0
    data = json.loads(r.stdout)
    agent = next(j for j in data["jobs"] if j["job"] == "agent")
    assert agent["launchd"] == {"label": "local.schedgen.agent", "loaded": True, "pid": 777,
                                "last_exit": 0, "disabled": False, "refused": None}
    funnel = next(j for j in data["jobs"] if j["job"] == "funnel")
    assert funnel["queue"] == {"inbox": 0, "processing": 0, "failed": 0}
    assert data["drift"] is False


def test_orphans_show_up_as_drift(env: Path, tmp_path: Path) -> None:
    schedgen("apply", cwd=tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.agent]")[0])
    r = schedgen("status", "--check", cwd=tmp_path)
    assert r.returncode == 1
    assert "drift: plist" in r.stdout and "orphan" in r.stdout


def test_disabled_job_still_installed_is_drift(env: Path, tmp_path: Path) -> None:
    schedgen("apply", cwd=tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace('schedule = "@reboot"',
                                                       'schedule = "@reboot"\nenabled = false'))
    r = schedgen("status", "--check", cwd=tmp_path)
    assert r.returncode == 1
    assert "boot  [cron]  disabled" in r.stdout
    assert "still installed although the job is disabled" in r.stdout
    schedgen("apply", cwd=tmp_path)
    assert schedgen("status", "--check", cwd=tmp_path).returncode == 0


def test_status_never_writes(env: Path, tmp_path: Path, home: Path,
                             fake_crontab: FakeCrontab) -> None:
    schedgen("status", cwd=tmp_path)
    assert fake_crontab.writes() == [] and not (home / ".local").exists()
    assert not any(p for p in os.listdir(home))
