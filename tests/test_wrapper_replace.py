"""lock.on_busy = "replace": a run that finds the lock busy stops the run holding it
(real processes, real signals) and then runs; the stopped run's records say interrupted,
and a queue item it held goes back as an interrupted attempt, never lost or run twice."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.wrapper_kit import (
    fill_inbox,
    kill_group,
    make_job,
    needs_proc,
    queue_fields,
    wait_for,
    wait_until_gone,
)

pytestmark = pytest.mark.macos

REPLACE = {"on_busy": "replace"}


def test_a_new_run_stops_the_running_one_and_runs(tmp_path: Path) -> None:
    up = tmp_path / "up"
    w = make_job(tmp_path, command=f'[ -n "${{NEW-}}" ] || {{ touch {up}; sleep 60; }}',
                 lock=REPLACE)
    old = w.popen()
    try:
        wait_for(up.exists, what="the first run's command")
        t0 = time.monotonic()
        new = w.run(env={"NEW": "1"})
        assert new.returncode == 0, new.stderr
        assert time.monotonic() - t0 < 10
        old.communicate(timeout=20)
    finally:
        kill_group(old.pid)
    assert old.returncode == 143
    [first, second] = [e["run_id"] for e in w.events("start")]
    assert {e["run_id"]: e["outcome"] for e in w.events("finish")} == {
        first: "interrupted", second: "ok"}
    [rep] = w.events("replace")
    assert rep["replaced_pid"] == old.pid and rep["lock"] == "job"
    assert not (tmp_path / "locks" / ".job.lock.run").exists()   # the note went with it


def test_a_command_that_ignores_term_is_killed_after_the_bound(tmp_path: Path) -> None:
    up = tmp_path / "up"
    w = make_job(tmp_path, command=f'[ -n "${{NEW-}}" ] || {{ trap "" TERM; touch {up}; '
                                   'sleep 60 & wait; sleep 60; }', lock=REPLACE)
    grace = {"SCHEDGEN_TEST_KILL_GRACE": "1"}
    old = w.popen(env=grace)
    try:
        wait_for(up.exists, what="the first run's command")
        new = w.run(env={"NEW": "1", **grace})
        assert new.returncode == 0, new.stderr
        old.communicate(timeout=20)
    finally:
        kill_group(old.pid)
    assert [e["outcome"] for e in w.events("finish")] == ["interrupted", "ok"]


def test_a_holder_that_leaves_no_note_is_not_stopped(tmp_path: Path) -> None:
    # Another job on the same lock, without replace: busy, as with skip.
    up = tmp_path / "up"
    other = make_job(tmp_path, "other", command=f"touch {up}; sleep 60", lock={"name": "shared"})
    w = make_job(tmp_path, command="true", lock={"name": "shared", **REPLACE})
    p = other.popen()
    try:
        wait_for(up.exists, what="the other job's command")
        assert w.run().returncode == 75
    finally:
        kill_group(p.pid)
        p.communicate()
    assert w.events("replace") == [] and len(w.events("busy")) == 1


def test_a_replaced_queue_run_gives_its_item_back_as_an_interrupted_attempt(
        tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json", "b.json"])
    hang = tmp_path / "hang"
    hang.touch()
    log = tmp_path / "ran"
    w = make_job(tmp_path, lock=REPLACE, queue=queue_fields(tmp_path, batch=0),
                 command=["bash", "-c", f'echo "${{1##*/}}" >>{log}; [ ! -e {hang} ] || sleep 60',
                          "x", "{item}"])
    old = w.popen()
    try:
        wait_for(lambda: log.exists() and log.read_text() == "a.json\n",
                 what="a.json to start")
        hang.unlink()
        new = w.run()
        assert new.returncode == 0, new.stderr
        old.communicate(timeout=20)
    finally:
        kill_group(old.pid)
    assert sorted(p.name for p in (q / "processed").iterdir()) == ["a.json", "b.json"]
    assert sorted(log.read_text().split()) == ["a.json", "a.json", "b.json"]  # b once
    fin = [(e["item"], e["attempt"], e["outcome"]) for e in w.events("finish")]
    assert ("a.json", 1, "interrupted") in fin and ("a.json", 2, "ok") in fin
    assert ("b.json", 1, "ok") in fin and len(fin) == 3
    assert list((q / "inbox").iterdir()) == []


def test_two_new_runs_racing_for_one_old_one_never_overlap(tmp_path: Path) -> None:
    # Three wrappers: the old one is stopped once; the two new ones never run their
    # commands at the same time (a mkdir the command holds says so) and both end.
    up, clash = tmp_path / "up", tmp_path / "clash"
    held = tmp_path / "held"
    w = make_job(tmp_path, lock=REPLACE, command=(
        f'mkdir {held} 2>/dev/null || touch {clash}; trap "rmdir {held}" EXIT; touch {up}; '
        f'[ -n "${{NEW-}}" ] && sleep 1 || sleep 60'))
    old = w.popen()
    news = []
    try:
        wait_for(up.exists, what="the first run's command")
        news = [w.popen(env={"NEW": "1"}) for _ in range(2)]
        rcs = sorted(p.communicate(timeout=60) and p.returncode for p in news)
        old.communicate(timeout=20)
    finally:
        for p in [old, *news]:
            kill_group(p.pid)
    assert old.returncode == 143 and not clash.exists()
    assert rcs[0] == 0 and rcs[1] in (0, 75)
    outcomes = [e["outcome"] for e in w.events("finish")]
    assert outcomes.count("interrupted") == 1 and outcomes.count("ok") == rcs.count(0)


def test_a_run_in_its_retry_delay_is_replaced_at_once(tmp_path: Path) -> None:
    w = make_job(tmp_path, lock=REPLACE, retries=2, retry_delay="60s",
                 command='[ -n "${NEW-}" ] || exit 3')
    old = w.popen()
    try:
        wait_for(lambda: w.events("retry"), what="the first attempt to fail")
        t0 = time.monotonic()
        new = w.run(env={"NEW": "1"})
        old.communicate(timeout=20)
    finally:
        kill_group(old.pid)
    assert new.returncode == 0, new.stderr
    assert time.monotonic() - t0 < 15 and old.returncode == 143
    assert [e["outcome"] for e in w.events("finish")] == ["failed", "ok"]


def test_a_replacing_run_killed_hard_mid_item_loses_and_doubles_nothing(tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json", "b.json"])
    hang = tmp_path / "hang"
    hang.touch()
    log = tmp_path / "ran"
    # The claim of a wrapper killed hard goes back once stale_after has passed (87-queue-
    # recovery.bash): here 1 s, so the third run finds it.
    w = make_job(tmp_path, lock=REPLACE, queue=queue_fields(tmp_path, batch=0, stale_after="1s"),
                 command=["bash", "-c", f'echo "${{1##*/}}" >>{log}; [ ! -e {hang} ] || sleep 60',
                          "x", "{item}"])
    procs = []
    try:
        first = w.popen()
        procs.append(first)
        wait_for(lambda: log.exists() and log.read_text().count("a.json") == 1, what="a.json")
        second = w.popen()                       # replaces the first, runs a.json again
        procs.append(second)
        # (and its note written: the command starts before it)
        wait_for(lambda: log.read_text().count("a.json") == 2
                 and _note_fields(tmp_path)[:1] == [str(second.pid)], what="a.json again")
        first.communicate(timeout=20)
        second.kill()                            # kill -9 of the wrapper alone
        second.communicate(timeout=20)
        hang.unlink()
        time.sleep(1.5)
        third = w.run()
        assert third.returncode == 0, third.stderr
    finally:
        for p in procs:
            kill_group(p.pid)
    assert sorted(p.name for p in (q / "processed").iterdir()) == ["a.json", "b.json"]
    assert list((q / "inbox").iterdir()) == []
    ran = log.read_text().split()
    assert ran.count("b.json") == 1 and ran.count("a.json") == 3


def _note(tmp_path: Path, name: str = "job") -> Path:
    return tmp_path / "locks" / f".{name}.lock.run"


def _note_fields(tmp_path: Path) -> list[str]:
    try:
        return _note(tmp_path).read_text().split()
    except OSError:
        return []


def _bystander() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


@needs_proc
def test_a_reused_wrapper_pid_in_a_stale_note_is_not_signalled(tmp_path: Path) -> None:
    # The holder's wrapper is killed with kill -9: its command goes on holding the lock
    # and the note stays. The kernel then gives the wrapper's pid to another process
    # (here: the note is made to name a bystander, as it would after such a reuse). The
    # new run stops the old command's group, which is still the noted one, and never
    # signals the bystander.
    up = tmp_path / "up"
    w = make_job(tmp_path, command=f'[ -n "${{NEW-}}" ] || {{ touch {up}; sleep 60; }}',
                 lock=REPLACE)
    grace = {"SCHEDGEN_TEST_KILL_GRACE": "1"}
    old = w.popen(env=grace)
    other = None
    try:
        wait_for(lambda: up.exists() and len(_note_fields(tmp_path)) == 4,
                 what="the first run's command and its note")
        os.kill(old.pid, signal.SIGKILL)
        old.communicate(timeout=20)
        other = _bystander()   # started after the wrapper died, as a reused pid would be
        fields = _note_fields(tmp_path)
        _note(tmp_path).write_text(" ".join([str(other.pid), *fields[1:]]) + "\n")
        new = w.run(env={"NEW": "1", **grace})
        assert new.returncode == 0, new.stderr
        assert other.poll() is None, "a process that only has the noted pid was signalled"
        assert wait_until_gone(old.pid) == []   # the old command's group did stop
    finally:
        kill_group(old.pid)
        if other is not None:
            other.kill()
            other.wait()
    [rep] = w.events("replace")
    assert other is not None and rep["replaced_pid"] == other.pid


@needs_proc
@pytest.mark.parametrize("ticks", [" 1 2", ""], ids=["other-start-times", "no-start-times"])
def test_a_note_whose_processes_are_all_gone_is_busy(tmp_path: Path, ticks: str) -> None:
    # A replace run killed whole with kill -9 left its note; another job now holds the
    # shared lock, and both noted pids name other processes: nothing is signalled, busy.
    # A note without start times (an older runtime's) cannot tell them apart: busy too.
    up = tmp_path / "up"
    holder = make_job(tmp_path, "other", command=f"touch {up}; sleep 60", lock={"name": "shared"})
    w = make_job(tmp_path, command="true", lock={"name": "shared", **REPLACE})
    a, b = _bystander(), _bystander()
    p = holder.popen()
    try:
        wait_for(up.exists, what="the other job's command")
        # start times of processes that are gone (ticks 1 and 2 after boot)
        _note(tmp_path, "shared").write_text(f"{a.pid} {b.pid}{ticks}\n")
        assert w.run().returncode == 75
        assert a.poll() is None and b.poll() is None
    finally:
        kill_group(p.pid)
        p.communicate()
        for x in (a, b):
            x.kill()
            x.wait()
    assert w.events("replace") == [] and len(w.events("busy")) == 1


@needs_proc
def test_the_note_holds_the_start_times_of_the_wrapper_and_its_command(tmp_path: Path) -> None:
    up = tmp_path / "up"
    w = make_job(tmp_path, command=f"touch {up}; sleep 60", lock=REPLACE)
    p = w.popen()
    try:
        wait_for(lambda: up.exists() and len(_note_fields(tmp_path)) == 4, what="the command")
        wpid, gpid, wst, gst = _note_fields(tmp_path)
        def start(pid: str) -> str:
            stat = Path(f"/proc/{pid}/stat").read_text()
            return stat.rsplit(")", 1)[1].split()[19]
        assert (int(wpid), wst, gst) == (p.pid, start(wpid), start(gpid))
        assert os.getpgid(int(gpid)) == int(gpid)
    finally:
        kill_group(p.pid)
        p.communicate()
