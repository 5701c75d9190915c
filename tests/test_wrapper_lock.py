"""The lock: one run at a time, busy runs give up at once, kill -9 frees it, `wait` queues.

Every test runs twice: with the system PATH (flock(1)) and with flock, timeout and
setsid hidden (the perl path, as on macOS).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers import write_executable
from tests.wrapper_kit import (
    SYSTEM_PATH,
    finish,
    kill_group,
    make_job,
    needs_proc,
    session_procs,
    start_together,
    wait_for,
    wait_until_gone,
)

HOLD = 'echo "$$" >>"$STARTED"; sleep "${HOLD:-0}"'


def _holder_job(tmp_path: Path, path: list[str], **lock: object) -> object:
    return make_job(tmp_path, command=HOLD, path=path,
                    env={"STARTED": str(tmp_path / "started")}, lock=lock or True)


def _started(tmp_path: Path) -> list[str]:
    f = tmp_path / "started"
    return f.read_text().split() if f.exists() else []


@needs_proc
def test_twenty_runs_at_once_one_runs_nineteen_exit_75_at_once(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = _holder_job(tmp_path, tool_path)
    t0 = time.monotonic()
    procs = start_together([w.argv()] * 20, w.env({"HOLD": "30"}), tmp_path)
    busy = []
    wait_for(lambda: sum(p.poll() is not None for p in procs) >= 19, timeout=30,
             what="19 busy runs to give up")
    elapsed = time.monotonic() - t0
    running = [p for p in procs if p.poll() is None]
    assert len(running) == 1
    for p in procs:
        if p is not running[0]:
            out, err = p.communicate()
            busy.append(p.returncode)
            assert "busy" in err
    assert busy == [75] * 19
    assert elapsed < 10, f"19 busy runs took {elapsed:.1f}s (each must give up at once)"
    wait_for(lambda: _started(tmp_path), what="the holder's command to start")
    assert len(_started(tmp_path)) == 1
    assert len(w.events("busy")) == 19 and len(w.events("start")) == 1
    assert len(w.run_dirs()) == 1  # busy runs make no run directory

    # kill -9 of the holder's whole process group frees the lock at once.
    holder = running[0]
    kill_group(holder.pid)
    holder.communicate()
    assert wait_until_gone(holder.pid) == []
    t1 = time.monotonic()
    r = w.run(env={"HOLD": "0"})
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t1 < 5
    assert len(_started(tmp_path)) == 2


def test_each_busy_run_gives_up_in_well_under_two_seconds(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = _holder_job(tmp_path, tool_path)
    holder = w.popen(env={"HOLD": "30"})
    try:
        wait_for(lambda: len(_started(tmp_path)) == 1, what="the holder to start")
        for _ in range(3):
            t = time.monotonic()
            r = w.run(env={"HOLD": "0"})
            assert r.returncode == 75
            assert time.monotonic() - t < 2
    finally:
        kill_group(holder.pid)
        holder.communicate()
    [e] = w.events("busy")[:1]
    assert e["lock"] == "job"


def test_busy_exit_is_configurable_and_lock_name_is_shared_between_jobs(
        tmp_path: Path, tool_path: list[str]) -> None:
    a = make_job(tmp_path, "a", command=HOLD, path=tool_path,
                 env={"STARTED": str(tmp_path / "started")}, lock={"name": "shared"})
    b = make_job(tmp_path, "b", command=["true"], path=tool_path,
                 lock={"name": "shared", "busy_exit": 0})
    holder = a.popen(env={"HOLD": "30"})
    try:
        wait_for(lambda: len(_started(tmp_path)) == 1, what="the holder to start")
        r = b.run()
        assert r.returncode == 0 and "busy" in r.stderr
        assert b.run_dirs() == [] and [e["event"] for e in b.events()] == ["busy"]
    finally:
        kill_group(holder.pid)
        holder.communicate()


def test_wait_queues_behind_the_holder(tmp_path: Path, tool_path: list[str]) -> None:
    w = _holder_job(tmp_path, tool_path, wait="20s")
    holder = w.popen(env={"HOLD": "1.5"})
    wait_for(lambda: len(_started(tmp_path)) == 1, what="the holder to start")
    t = time.monotonic()
    r = w.run(env={"HOLD": "0"})
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t > 0.5
    assert holder.wait(timeout=30) == 0
    events = [(e["event"], e["run_id"]) for e in w.events() if e["event"] in ("start", "finish")]
    # The waiter started only after the holder finished: start, finish, start, finish.
    assert [e for e, _ in events] == ["start", "finish", "start", "finish"]
    assert events[0][1] == events[1][1] != events[2][1]


def test_wait_gives_up_after_the_wait_time_with_busy_exit(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = _holder_job(tmp_path, tool_path, wait="1s")
    holder = w.popen(env={"HOLD": "30"})
    try:
        wait_for(lambda: len(_started(tmp_path)) == 1, what="the holder to start")
        t = time.monotonic()
        r = w.run(env={"HOLD": "0"})
        took = time.monotonic() - t
        assert r.returncode == 75
        assert 0.8 < took < 6
    finally:
        kill_group(holder.pid)
        holder.communicate()


@needs_proc
def test_the_command_keeps_the_lock_if_only_the_wrapper_is_killed(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = _holder_job(tmp_path, tool_path)
    holder = w.popen(env={"HOLD": "30"})
    wait_for(lambda: len(_started(tmp_path)) == 1, what="the holder to start")
    holder.kill()  # SIGKILL to the wrapper alone: its command still runs
    holder.communicate()
    try:
        assert session_procs(holder.pid), "the command should still be running"
        assert w.run(env={"HOLD": "0"}).returncode == 75  # no overlap
    finally:
        kill_group(holder.pid)
    assert wait_until_gone(holder.pid) == []
    assert w.run(env={"HOLD": "0"}).returncode == 0


def test_lock_false_runs_overlap(tmp_path: Path, tool_path: list[str]) -> None:
    w = make_job(tmp_path, command=HOLD, path=tool_path,
                 env={"STARTED": str(tmp_path / "started")}, lock=False)
    procs = start_together([w.argv()] * 3, w.env({"HOLD": "0.5"}), tmp_path)
    assert [rc for rc, _, _ in finish(procs)] == [0, 0, 0]
    assert len(_started(tmp_path)) == 3
    assert "exec 9>>" not in w.text  # no job lock stanza


def test_busy_and_refused_runs_make_no_run_directory_once_runs_exist(
        tmp_path: Path, tool_path: list[str]) -> None:
    # docs/design.md, "What a run does": a busy run writes an event line and no run directory. The twenty-run
    # race above starts with no runs/ at all; here the folder is there.
    w = _holder_job(tmp_path, tool_path)
    assert w.run(env={"HOLD": "0"}).returncode == 0
    holder = w.popen(env={"HOLD": "30"})
    try:
        wait_for(lambda: len(_started(tmp_path)) == 2, what="the holder to start")
        for _ in range(5):
            assert w.run(env={"HOLD": "0"}).returncode == 75
        assert len(w.run_dirs()) == 2 and len(w.events("busy")) == 5
    finally:
        kill_group(holder.pid)
        holder.communicate()
    assert wait_until_gone(holder.pid) == []
    (tmp_path / "locks" / "job.lock").unlink()
    (tmp_path / "locks" / "job.lock").symlink_to(tmp_path / "elsewhere")
    r = w.run(env={"HOLD": "0"})
    assert r.returncode == 78 and "symlink" in r.stderr
    assert len(w.run_dirs()) == 2 and not (tmp_path / "elsewhere").exists()



def test_no_run_directory_is_made_before_the_lock_is_held(tmp_path: Path) -> None:
    # A stand-in flock looks for a directory of its wrapper (the ID ends in the wrapper's
    # pid, the stand-in's parent) for a while before it locks: none may be there yet.
    # One made before the lock (to overlap the two forks) would be seen, counted and
    # named after by the holder's listing, and left behind by a run that went busy.
    if not Path("/usr/bin/flock").exists():
        pytest.skip("flock(1) is not installed here")
    write_executable(tmp_path / "shim" / "flock", f"""#!/bin/sh
i=0
while [ "$i" -lt 15 ]; do
  ls "{tmp_path}/logs/job/runs" | grep -q -- "-$PPID\\$" && echo "$PPID" >>"{tmp_path}/early"
  sleep 0.02; i=$((i + 1))
done
exec /usr/bin/flock "$@"
""")
    w = make_job(tmp_path, command=HOLD, path=[str(tmp_path / "shim"), *SYSTEM_PATH],
                 env={"STARTED": str(tmp_path / "started")}, lock=True)
    for _ in range(3):
        r = w.run(env={"HOLD": "0"})
        assert r.returncode == 0, r.stderr
    assert len(w.run_dirs()) == 3 and not (tmp_path / "early").exists()
