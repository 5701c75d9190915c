"""lock.on_busy = "replace": a run that finds the lock busy stops the run holding it
(real processes, real signals) and then runs; the stopped run's records say interrupted,
and a queue item it held goes back as an interrupted attempt, never lost or run twice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.wrapper_kit import fill_inbox, kill_group, make_job, queue_fields, wait_for

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
