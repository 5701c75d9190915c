"""Reading back what wrappers leave: manifests, queue depth, locks."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from schedgen.config.load import loads
from schedgen.records import runs
from tests.helpers import build_file_tree
from tests.wrapper_kit import wait_for

JOB = """
[jobs.q]
command = ["p", "{item}"]
schedule = "@daily"
log_root = "logs"
lock_dir = "locks"
[jobs.q.queue]
inbox = "q/done"
pattern = "*.json"
"""


def _job(tmp_path: Path):
    return loads(JOB, tmp_path / "jobs.toml").jobs[0]


def test_lock_held_sees_a_real_holder_without_taking_the_lock(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (tmp_path / "locks").mkdir()
    lock = tmp_path / "locks" / "q.lock"
    lock.touch()
    assert runs.lock_held(job) is False
    holder = subprocess.Popen(["bash", "-c", f'exec 9>>"{lock}"; flock -n 9 && echo ok && exec sleep 30'],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        assert runs.lock_held(job) is True
        # Reading /proc/locks never takes the lock, so a run starting now is not refused.
        if Path("/proc/locks").exists():
            for _ in range(50):
                runs.lock_held(job)
            r = subprocess.run(["bash", "-c", f'exec 9>>"{lock}"; flock -n 9'])
            assert r.returncode == 1  # still the holder's, not ours or nobody's
    finally:
        holder.kill()
        holder.wait()
    wait_for(lambda: runs.lock_held(job) is False, what="the lock to be free")


def test_queue_depth_ignores_bookkeeping(tmp_path: Path) -> None:
    job = _job(tmp_path)
    build_file_tree(tmp_path / "q", {
        "done": {"a.json": "", "b.json": "", "notes.txt": "", ".hidden.json": ""},
        "processing": {"20250101T000000Z-1": {"c.json": "", ".claim": "1 2 h r"},
                       ".attempts": {"a.json": "1"}},
        "failed": {"d.json": ""},
    })
    assert runs.queue_depth(job) == runs.QueueDepth(inbox=2, processing=1, failed=1)


def _manifest(run_dir: Path, **fields) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "schedgen-manifest.json").write_text(json.dumps(fields))


def test_last_run_skips_a_half_written_manifest_and_spots_a_crash(tmp_path: Path) -> None:
    job = _job(tmp_path)
    runs_dir = job.log_dir / "runs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    _manifest(runs_dir / "20250101T000000Z-1", run_id="20250101T000000Z-1", outcome="ok",
              exit_code=0)
    _manifest(runs_dir / "20250102T000000Z-1", run_id="20250102T000000Z-1", outcome="running",
              host=os.uname().nodename, pid=dead.pid)
    assert runs.last_run(job)["outcome"] == "crashed"
    (runs_dir / "20250103T000000Z-1").mkdir()
    (runs_dir / "20250103T000000Z-1" / "schedgen-manifest.json").write_text('{"job": "q", "run')
    assert runs.last_run(job)["run_id"] == "20250102T000000Z-1"
    _manifest(runs_dir / "20250104T000000Z-1", run_id="20250104T000000Z-1", outcome="running",
              host=os.uname().nodename, pid=os.getpid())
    assert runs.last_run(job)["outcome"] == "running"


def test_last_run_reads_an_older_wrappers_manifest_json_but_never_a_commands(
        tmp_path: Path) -> None:
    job = _job(tmp_path)
    runs_dir = job.log_dir / "runs"
    old = runs_dir / "20250101T000000Z-1"
    old.mkdir(parents=True)
    (old / "manifest.json").write_text(json.dumps(
        {"format": 1, "run_id": old.name, "outcome": "failed", "exit_code": 3}))
    assert runs.last_run(job)["exit_code"] == 3
    # A newer run without a manifest of its own: the build artifact of that name is not one.
    new = runs_dir / "20250102T000000Z-1"
    new.mkdir()
    (new / "manifest.json").write_text(json.dumps({"format": 1, "outcome": "ok", "files": []}))
    assert runs.last_run(job)["run_id"] == old.name
