"""Signal stress: several queue workers at once, each hit by TERM, INT, HUP or KILL at a
random moment, again and again, until the inbox is drained.

Checked at the end: no item lost; none run twice at the same time (each item's command
holds a per-item flock, and a second holder would find it taken); none that finished run
again (the wrappers alone are signalled, so every finished command is journaled by its
keeper); nothing left in processing/, no run dir without a manifest, nothing in failed/;
no "unbound variable" from any wrapper. The quick size runs by default (60 items; 150 under
SCHEDGEN_TEST_THOROUGH=1, as CI's thorough pass has it), the long one is marked slow
(`pytest -m slow`).
"""

from __future__ import annotations

import collections
import os
import random
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.budget import THOROUGH
from tests.wrapper_kit import (
    SYSTEM_PATH,
    fill_inbox,
    make_job,
    needs_proc,
    queue_fields,
)

# The item's command: a per-item lock held for a short while (a second holder at the same
# time writes the name to dup), then, no longer interruptible, the name goes to done.
COMMAND = ('n=${1##*/}; flock -n -E 200 "$T/item-locks/$n" sleep "0.0$((RANDOM % 6))"; s=$?; '
           '[ "$s" -ne 200 ] || echo "$n" >>"$T/dup"; [ "$s" -eq 0 ] || exit "$s"; '
           "trap '' TERM INT HUP; echo \"$n\" >>\"$T/done\"")
SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL]


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


def _alive(sessions: list[int]) -> list[int]:
    """Live processes of any of these sessions (one pass over /proc)."""
    wanted, found = set(sessions), []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) in wanted:
            found.append(int(d.name))
    return found


def _stress(tmp_path: Path, items: int, workers: int, seed: int, deadline_s: float) -> None:
    if shutil.which("flock") is None:
        pytest.skip("the per-item check uses flock(1)")
    names = [f"{i:04d}.json" for i in range(items)]
    q = tmp_path / "q"
    fill_inbox(q / "inbox", names)
    (tmp_path / "item-locks").mkdir()
    w = make_job(tmp_path, command=["bash", "-c", COMMAND, "_", "{item}"], path=SYSTEM_PATH,
                 env={"T": str(tmp_path)}, lock=False, logs={"keep_runs": 5},
                 queue=queue_fields(tmp_path, pattern="*.json", batch=3, stale_after="1s",
                                    max_attempts=10_000))
    stderr: list[str] = []
    sessions: list[int] = []
    signals = collections.Counter()
    lock = threading.Lock()
    stop = time.monotonic() + deadline_s

    def drained() -> bool:
        done = tmp_path / "done"
        return done.exists() and len(set(done.read_text().split())) == items

    def worker(k: int) -> None:
        r = random.Random(seed * 100 + k)
        while not drained() and time.monotonic() < stop:
            p = w.popen()
            with lock:
                sessions.append(p.pid)
            if r.random() < 0.75:
                time.sleep(r.uniform(0, 0.25))
                sig = r.choice(SIGNALS)
                try:
                    os.kill(p.pid, sig)
                    with lock:
                        signals[sig.name] += 1
                except ProcessLookupError:
                    pass
            _, err = p.communicate(timeout=60)
            with lock:
                stderr.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Keepers of killed wrappers finish their commands; then one quiet run recovers what
    # dead workers left (their claims are stale after 1 s).
    end = time.monotonic() + 30
    while _alive(sessions) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(sessions)
    time.sleep(1.1)
    final = w.run()
    stderr.append(final.stderr)
    assert final.returncode == 0, final.stderr
    if not drained():  # items a last recovery put back: one more run drains them
        time.sleep(1.1)
        final = w.run()
        stderr.append(final.stderr)

    # The runs really were hit: about 3 in 4 get a signal (a count, not a rate, so a fast
    # machine that drains in fewer runs passes as well as a slow one).
    assert sum(signals.values()) >= max(10, len(sessions) // 2), (signals, len(sessions))
    assert not (tmp_path / "dup").exists(), "an item ran twice at the same time"
    done = collections.Counter((tmp_path / "done").read_text().split())
    assert sorted(done) == names, "an item was lost"
    assert set(done.values()) == {1}, [n for n, c in done.items() if c > 1]
    assert _files(q / "processed") == names
    assert _files(q / "inbox") == [] and _files(q / "failed") == []
    assert _files(q / "processing") == [] and _files(q / "processing" / ".attempts") == []
    for d in w.run_dirs():
        assert (d / "schedgen-manifest.json").exists(), d
        assert not (d / ".timeout").exists()
    assert not any("unbound variable" in e for e in stderr), [e for e in stderr if e][:3]
    print(f"\nstress: {items} items, {workers} workers, signals {dict(signals)}")


@needs_proc
def test_signal_stress_quick(tmp_path: Path) -> None:
    _stress(tmp_path, items=150 if THOROUGH else 60, workers=4, seed=1, deadline_s=120)


@needs_proc
@pytest.mark.slow
def test_signal_stress_long(tmp_path: Path) -> None:
    _stress(tmp_path, items=600, workers=6, seed=2, deadline_s=900)


def test_the_stress_command_detects_a_second_holder(tmp_path: Path) -> None:
    """The check can fail: two commands on one item at once write it to dup."""
    if shutil.which("flock") is None:
        pytest.skip("flock(1)")
    (tmp_path / "item-locks").mkdir()
    env = {**os.environ, "T": str(tmp_path)}
    slow = COMMAND.replace('"0.0$((RANDOM % 6))"', "1")
    a = subprocess.Popen(["bash", "-c", slow, "_", "x/a.json"], env=env)
    time.sleep(0.3)
    subprocess.run(["bash", "-c", COMMAND, "_", "x/a.json"], env=env)
    a.wait()
    assert (tmp_path / "dup").read_text().split() == ["a.json"]
