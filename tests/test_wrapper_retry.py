"""retries / retry_delay / backoff: real wrapper runs, real sleeps and signals. Each
attempt is a run of its own within one wrapper call and one lock; the failure is notified
once, after the last attempt."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_wrapper_notify import calls, recorder
from tests.wrapper_kit import kill_group, make_job, session_procs, wait_for

# Attempts, delays and a signal during the delay: also under bash 3.2 and the BSD userland.
pytestmark = pytest.mark.macos

# Fails until it has run `n` times (a count kept in $T/n), then succeeds.
FLAKY = 'n=$(cat "$T/n" 2>/dev/null || echo 0); echo $((n + 1)) >"$T/n"; [ "$n" -ge "$OK_AT" ] || exit 3'


def test_a_failing_command_is_run_again_until_it_succeeds(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=FLAKY, env={"T": str(tmp_path), "OK_AT": "2"},
                 retries=3, retry_delay="1s", backoff=1.0)
    t0 = time.monotonic()
    r = w.run()
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 >= 2                   # two delays of 1 s
    starts, finishes = w.events("start"), w.events("finish")
    assert [(e["attempt"], e["attempts"]) for e in starts] == [(1, 4), (2, 4), (3, 4)]
    assert [e["outcome"] for e in finishes] == ["failed", "failed", "ok"]
    assert [(e["attempt"], e["delay"]) for e in w.events("retry")] == [(2, 1), (3, 1)]
    ids = [e["run_id"] for e in starts]
    assert len(set(ids)) == 3 and ids == sorted(ids)     # a record of its own each
    assert [(m["run_id"], m["attempt"], m["attempts"], m["outcome"]) for m in w.manifests()] == [
        (ids[0], 1, 4, "failed"), (ids[1], 2, 4, "failed"), (ids[2], 3, 4, "ok")]
    assert len({e["pid"] for e in starts}) == 1          # one wrapper call


def test_the_last_attempts_status_is_the_runs_and_failure_is_notified_once(
        tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path)
    w = make_job(tmp_path, command=FLAKY, env={"T": str(tmp_path), "OK_AT": "99"},
                 retries=2, retry_delay=0, notify={"command": cmd, "on": ["failure"]})
    r = w.run()
    assert r.returncode == 3
    assert [e["outcome"] for e in w.events("finish")] == ["failed"] * 3
    wait_for(lambda: calls(out), what="the failure notification")
    time.sleep(0.5)                                      # nothing more comes
    assert [c for c in calls(out) if not c.startswith("stdin:")] == ["failure 3 failed"]


def test_a_run_without_retries_is_one_attempt_as_before(tmp_path: Path) -> None:
    w = make_job(tmp_path, command="exit 3")
    assert w.run().returncode == 3
    [start] = w.events("start")
    assert "attempt" not in start and w.manifests()[0]["attempt"] is None
    assert "sg_retries" not in w.text


def test_each_attempt_has_the_whole_timeout(tmp_path: Path) -> None:
    w = make_job(tmp_path, command="sleep 30", timeout="1s", retries=1, retry_delay=0)
    r = w.run()
    assert r.returncode == 124
    assert [e["outcome"] for e in w.events("finish")] == ["timeout", "timeout"]
    assert len(w.events("timeout")) == 2
    assert [m["outcome"] for m in w.manifests()] == ["timeout", "timeout"]


def test_no_retry_starts_when_the_next_firing_may_be_due(tmp_path: Path) -> None:
    # Every minute: a retry 2 minutes later would run into the next firings' runs.
    w = make_job(tmp_path, schedule="* * * * *", command="exit 3", retries=2,
                 retry_delay="2m")
    assert w.run(timeout=20).returncode == 3
    assert len(w.events("start")) == 1 and w.events("retry") == []
    [no] = w.events("no_retry")
    assert (no["reason"], no["attempt"], no["delay"], no["window"]) == ("next_firing", 1, 120, 60)


def test_the_lock_is_held_through_the_delay(tmp_path: Path) -> None:
    w = make_job(tmp_path, command="exit 3", retries=1, retry_delay="20s")
    p = w.popen()
    try:
        wait_for(lambda: w.events("retry"), what="the first attempt to fail")
        other = w.run()
        assert other.returncode == 75                    # busy: the run is not over
    finally:
        kill_group(p.pid)
        p.communicate()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_delay_ends_the_run_at_once_and_notifies_the_failure(
        tmp_path: Path, sig: int) -> None:
    cmd, out = recorder(tmp_path)
    w = make_job(tmp_path, command="exit 3", retries=2, retry_delay="60s",
                 notify={"command": cmd, "on": ["failure"]})
    p = w.popen()
    wait_for(lambda: w.events("retry"), what="the first attempt to fail")
    t0 = time.monotonic()
    p.send_signal(sig)
    p.communicate(timeout=20)
    assert time.monotonic() - t0 < 10                   # not the 60 s delay
    assert p.returncode == 128 + sig
    # The delay's sleep went too (notify's own sender may still be at work).
    assert [c for _, c in session_procs(p.pid) if c.startswith("sleep 60")] == []
    assert len(w.events("start")) == 1 and len(w.events("signal")) == 1
    wait_for(lambda: calls(out), what="the failure notification")
    assert calls(out)[0] == "failure 3 failed"
    with (tmp_path / "locks" / "job.lock").open("a") as lock:   # free again
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_the_delays_sleep_goes_when_the_wrapper_started_with_term_ignored(
        tmp_path: Path) -> None:
    # A parent that ignores TERM (nohup, some runners) passes that on to the wrapper and
    # its sleep: the TERM it sent the sleep did nothing, and the sleep outlived the run.
    w = make_job(tmp_path, command="exit 3", retries=2, retry_delay="60s")
    p = subprocess.Popen(w.argv(), env=w.env(None), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    try:
        wait_for(lambda: w.events("retry"), what="the first attempt to fail")
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=20)
        assert p.returncode == 128 + signal.SIGINT
        assert [c for _, c in session_procs(p.pid) if c.startswith("sleep 60")] == []
    finally:
        kill_group(p.pid)
        p.communicate()


def test_history_shows_each_attempt_as_n_of_m(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=FLAKY, env={"T": str(tmp_path), "OK_AT": "1"},
                 retries=2, retry_delay=0)
    assert w.run().returncode == 0
    plain = make_job(tmp_path, "plain", command="exit 3")
    assert plain.run().returncode == 3

    def history(*args: str) -> str:
        r = subprocess.run([sys.executable, "-m", "schedgen", "history", *args], text=True,
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    text = history("job", "-c", str(w.config.path))
    head, *rows = [line.split() for line in text.splitlines()[1:]]
    assert head[:7] == ["RUN", "ID", "START", "DURATION", "OUTCOME", "EXIT", "ATTEMPT"]
    assert [(r[-3], r[-1]) for r in rows] == [("ok", "2/3"), ("failed", "1/3")]
    runs = json.loads(history("job", "--json", "-c", str(w.config.path)))["jobs"][0]["runs"]
    assert [(r["outcome"], r["attempt"], r["attempts"]) for r in runs] == [
        ("ok", 2, 3), ("failed", 1, 3)]
    # A job without retries: no such column, and null in JSON.
    assert "ATTEMPT" not in history("plain", "-c", str(plain.config.path))
    [run] = json.loads(history("plain", "--json", "-c", str(plain.config.path)))["jobs"][0]["runs"]
    assert (run["attempt"], run["attempts"]) == (None, None)
