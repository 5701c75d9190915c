"""Timeout: the command's whole process group is killed, exit 124, nothing left behind.

Runs with timeout(1) and setsid(1) on PATH and without them (the wrapper uses neither).
"""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime
from pathlib import Path

from tests.wrapper_kit import (
    attempts_of,
    fill_inbox,
    kill_group,
    make_job,
    needs_proc,
    queue_fields,
    wait_for,
    wait_until_gone,
)

# A command with children of its own: both sleeps must die with it.
FAMILY = 'sleep 300 & sleep 301 & echo "$$" >"$PIDFILE"; wait'


@needs_proc
def test_timeout_kills_the_whole_group_and_exits_124(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = make_job(tmp_path, command=FAMILY, timeout=1, path=tool_path,
                 env={"PIDFILE": str(tmp_path / "pid")})
    t = time.monotonic()
    p = w.popen()
    out, err = p.communicate(timeout=30)
    took = time.monotonic() - t
    assert p.returncode == 124, err
    assert 0.9 < took < 10  # 1s, then TERM; zombies reaped late by a container init can add a few
    assert "timed out" in err
    assert wait_until_gone(p.pid) == [], "processes of the run were left behind"
    m = w.manifests()[0]
    assert (m["exit_code"], m["outcome"]) == (124, "timeout")
    assert [e["after"] for e in w.events("timeout")] == [1]
    assert w.events("finish")[0]["outcome"] == "timeout"
    assert not (w.run_dirs()[0] / ".timeout").exists()


@needs_proc
def test_a_command_that_ignores_term_is_killed_after_the_grace_period(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = make_job(tmp_path, command='trap "" TERM; sleep 300 & wait', timeout=1, path=tool_path)
    t = time.monotonic()
    p = w.popen(env={"SCHEDGEN_TEST_KILL_GRACE": "1"})  # not the 5 s a real run waits
    p.communicate(timeout=30)
    assert p.returncode == 124
    assert time.monotonic() - t >= 2  # TERM was ignored: KILL came after timeout + grace
    assert wait_until_gone(p.pid) == []


@needs_proc
def test_a_command_that_finishes_in_time_leaves_no_watchdog_behind(
        tmp_path: Path, tool_path: list[str]) -> None:
    w = make_job(tmp_path, command="exit 7", timeout=30, path=tool_path)
    t = time.monotonic()
    p = w.popen()
    p.communicate(timeout=30)
    assert p.returncode == 7
    assert time.monotonic() - t < 5  # not the 30s the watchdog sleeps
    assert wait_until_gone(p.pid, timeout=2) == []
    assert w.manifests()[0]["outcome"] == "failed"


@needs_proc
def test_timeout_with_a_queue_returns_the_item_and_frees_the_lock(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["slow.json"])
    w = make_job(tmp_path, command=["sleep", "300"], timeout=1, path=tool_path,
                 queue=queue_fields(tmp_path))
    p = w.popen()
    p.communicate(timeout=30)
    assert p.returncode == 124
    assert wait_until_gone(p.pid) == []
    assert sorted(x.name for x in (q / "inbox").iterdir()) == ["slow.json"]
    assert attempts_of(q, "slow.json") == "1"
    # The lock is free at once: the watchdog closed it and nothing else holds it.
    w2 = make_job(tmp_path, command=["true"], path=tool_path, queue=queue_fields(tmp_path))
    assert w2.run().returncode == 0
    assert w2.manifests()[-1]["attempt"] == 2


@needs_proc
def test_the_lock_is_held_while_a_timed_command_runs_and_kill_9_ends_it_all(
        tmp_path: Path, tool_path: list[str]) -> None:
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f'touch {started}; sleep 300', timeout=60, path=tool_path)
    p = w.popen()
    try:
        wait_for(started.exists, what="the command to start")
        assert w.run().returncode == 75
    finally:
        # The command and its watchdog have process groups of their own; the watchdog
        # sees the wrapper die and takes the command down with it.
        kill_group(p.pid)
        p.communicate()
    assert wait_until_gone(p.pid, timeout=10) == []
    probe = make_job(tmp_path, "probe", command=["true"], path=tool_path, lock={"name": "job"})
    assert probe.run().returncode == 0  # the lock is free again


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@needs_proc
def test_a_signal_to_the_wrapper_reaches_kill_for_a_command_that_ignores_term(
        tmp_path: Path, tool_path: list[str]) -> None:
    # Without a timeout too: the wrapper had waited for the command for ever, the 5 s
    # to KILL counted only once its keeper had ended.
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f'trap "" TERM; sleep 300 & touch {started}; wait',
                 path=tool_path)
    p = w.popen(env={"SCHEDGEN_TEST_KILL_GRACE": "1"})
    wait_for(started.exists, what="the command to start")
    t = time.monotonic()
    p.terminate()
    p.communicate(timeout=30)
    assert p.returncode == 143
    assert time.monotonic() - t < 15      # the grace (1 s), not the command's 300 s
    assert wait_until_gone(p.pid) == []
    assert w.manifests()[0]["outcome"] == "interrupted"


@needs_proc
def test_a_timed_out_item_whose_command_exits_0_on_term_is_not_done(
        tmp_path: Path, tool_path: list[str]) -> None:
    # Cut off mid-work, it answered the TERM with 0: that is a timeout, as for a plain job
    # (the item had gone to processed/ and the run had exited 0).
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = make_job(tmp_path, command='trap "exit 0" TERM; sleep 300 & wait', timeout=1,
                 path=tool_path, queue=queue_fields(tmp_path))
    p = w.popen()
    p.communicate(timeout=30)
    assert p.returncode == 124
    assert sorted(x.name for x in (q / "inbox").iterdir()) == ["a.json"]
    assert attempts_of(q, "a.json") == "1"
    [fin] = w.events("finish")
    assert (fin["outcome"], fin["exit_code"], fin["item_to"]) == ("timeout", 124, "inbox")


@needs_proc
def test_a_term_to_the_watchdog_alone_does_not_end_the_timeout(
        tmp_path: Path, tool_path: list[str]) -> None:
    # (a `killall bash`): the watchdog had died with it, and the command ran on untimed.
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f'touch {started}; exec sleep 300', timeout=2, path=tool_path)
    p = w.popen()
    wait_for(started.exists, what="the command to start")
    # The watchdog is forked just after the command's keeper: it may not be there yet.
    wait_for(lambda: len(_children(p.pid)) == 2, what="the watchdog")
    kids = _children(p.pid)
    # The watchdog is a fork of the wrapper (its command line); the keeper is the command
    # by now (`bash -c ...`, then sleep).
    watchdogs = [c for c in kids if str(w.path) in Path(f"/proc/{c}/cmdline").read_text()]
    assert len(watchdogs) == 1, kids
    # (once it has set itself to ignore them: it is forked with the default ones)
    wait_for(lambda: _ignores_term(watchdogs[0]), what="the watchdog's own handling")
    os.kill(watchdogs[0], signal.SIGTERM)
    os.kill(watchdogs[0], signal.SIGHUP)
    p.communicate(timeout=30)
    assert p.returncode == 124
    assert wait_until_gone(p.pid) == []
    m = w.manifests()[0]
    assert m["outcome"] == "timeout"
    # The timeout is said when it happens, not stamped with the start's time.
    [start] = w.events("start")
    [timeout] = w.events("timeout")
    assert _when(timeout["ts"]) - _when(start["ts"]) >= 1


def _ignores_term(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & 1 << (signal.SIGTERM - 1))
    return False


def _when(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


@needs_proc
def test_an_item_done_before_its_time_stays_done_when_its_leftovers_outlast_it(
        tmp_path: Path, tool_path: list[str]) -> None:
    # The command ended fine at 0.5 s; a child it left (ignoring TERM) kept the run going
    # past the 1 s timeout: the item is done, not a timeout to run again.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = make_job(tmp_path, command="sleep 0.5; (trap '' TERM; sleep 2.5) & exit 0",
                 timeout=1, path=tool_path, queue=queue_fields(tmp_path))
    p = w.popen(env={"SCHEDGEN_TEST_KILL_GRACE": "1"})
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert sorted(x.name for x in (q / "processed").iterdir()) == ["a.json"]
    assert [e["outcome"] for e in w.events("finish")] == ["ok"]
    assert w.events("timeout") == []
    assert wait_until_gone(p.pid) == []


def test_a_kill_grace_with_a_leading_0_is_no_number(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"])
    r = w.run(env={"SCHEDGEN_TEST_KILL_GRACE": "08"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
