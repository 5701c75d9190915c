"""The queue: atomic claims under real concurrency, crash recovery, attempts, no overwrite.

The seed-000 incident: after a day-long outage 57 files sat in done/, five runs started
at once and some files were processed four times. Here every file must be processed
exactly once. Every test runs with flock(1) and with flock/timeout/setsid hidden.
"""

from __future__ import annotations

import collections
import json
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.wrapper_kit import (
    Wrapped,
    attempts_of,
    fill_inbox,
    finish,
    kill_group,
    make_job,
    needs_proc,
    produce_reusing_names,
    queue_fields,
    start_together,
    wait_for,
    wait_until_gone,
)

# Appends "<name>" to a shared log with O_APPEND (>>), so concurrent lines never mix.
RECORD = 'printf "%s\\n" "${1##*/}" >>"$LOG"'
SEED_NAMES = [f"20240611T{10 + i // 60:02d}{i % 60:02d}00Z_{4000 + i}.json" for i in range(57)]


def _queue_job(tmp_path: Path, path: list[str], script: str, lock: object = False,
               **queue: object) -> Wrapped:
    return make_job(tmp_path, command=["bash", "-c", script, "_", "{item}"], path=path,
                    env={"LOG": str(tmp_path / "processed.log"), "HANG": str(tmp_path / "hang")},
                    lock=lock, queue=queue_fields(tmp_path, pattern="*.json", **queue),
                    logs={"keep_runs": 200})


def _log(tmp_path: Path) -> list[str]:
    f = tmp_path / "processed.log"
    return f.read_text().splitlines() if f.exists() else []


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


def _claim_dirs(tmp_path: Path) -> list[str]:
    return _files(tmp_path / "q" / "processing")


def test_seed_000_five_workers_at_once_process_57_files_exactly_once(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", SEED_NAMES, age=86400)  # they sat there for a day
    (q / "inbox" / "notes.txt").write_text("not a queue item")
    w = _queue_job(tmp_path, tool_path, RECORD + "; sleep 0.05", batch=1)
    rounds = 0
    while _files(q / "inbox") != ["notes.txt"]:
        rounds += 1
        assert rounds <= 20, "the inbox does not drain"
        results = finish(start_together([w.argv()] * 5, w.env(), tmp_path))
        assert [rc for rc, _, _ in results] == [0] * 5, results
    counts = collections.Counter(_log(tmp_path))
    assert sorted(counts) == sorted(SEED_NAMES)  # none lost, none invented
    assert set(counts.values()) == {1}  # each processed exactly once
    assert _files(q / "processed") == sorted(SEED_NAMES)
    assert _claim_dirs(tmp_path) == [] and _files(q / "failed") == []
    # batch 1: each of the five workers took one item per round while there were enough.
    assert rounds == 12
    assert len(w.events("empty")) == 3
    claims = [e["item"] for e in w.events("claim")]
    assert sorted(claims) == sorted(SEED_NAMES)


def test_seed_000_batch_0_five_workers_drain_the_inbox_together(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", SEED_NAMES, age=86400)
    w = _queue_job(tmp_path, tool_path, RECORD + "; sleep 0.02", batch=0)
    results = finish(start_together([w.argv()] * 5, w.env(), tmp_path))
    assert [rc for rc, _, _ in results] == [0] * 5, results
    counts = collections.Counter(_log(tmp_path))
    assert sorted(counts) == sorted(SEED_NAMES) and set(counts.values()) == {1}
    assert _files(q / "inbox") == [] and _claim_dirs(tmp_path) == []
    assert _files(q / "processed") == sorted(SEED_NAMES)
    # One run directory and manifest per item, each naming its item.
    assert sorted(m["item"] for m in w.manifests()) == sorted(SEED_NAMES)
    assert {m["outcome"] for m in w.manifests()} == {"ok"}
    # More than one worker did real work (the claim is shared, not serialised).
    assert len({e["pid"] for e in w.events("claim")}) > 1


def test_items_are_claimed_in_name_order_and_batch_limits_a_run(
        tmp_path: Path, tool_path: list[str]) -> None:
    names = ["b.json", "a.json", "C.json", "c.json", "a b.json"]
    fill_inbox(tmp_path / "q" / "inbox", names)
    w = _queue_job(tmp_path, tool_path, RECORD, batch=2)
    assert w.run().returncode == 0
    assert _log(tmp_path) == ["C.json", "a b.json"]  # byte order, whatever the locale
    assert w.run(env={"LC_ALL": "en_US.UTF-8"}).returncode == 0
    assert _log(tmp_path) == ["C.json", "a b.json", "a.json", "b.json"]


@needs_proc
def test_crash_worker_past_stale_after_keeps_its_item_then_sigkill_recovers_it_once(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["x.json"])
    script = ('echo "start ${1##*/}" >>"$LOG"; if [ -e "$HANG" ]; then sleep 60; fi; '
              'echo "done ${1##*/}" >>"$LOG"')
    w = _queue_job(tmp_path, tool_path, script, stale_after="2s")
    (tmp_path / "hang").touch()
    worker = w.popen()
    wait_for(lambda: _log(tmp_path) == ["start x.json"], what="the worker to claim x.json")
    [claim] = _claim_dirs(tmp_path)
    t_claim = time.monotonic()
    # Until the claim is older than stale_after (2 s, stamped to the second); its worker lives.
    wait_for(lambda: time.monotonic() - t_claim > 3, what="the claim to pass stale_after")

    r = w.run()
    assert r.returncode == 0 and w.events("recover") == []
    assert _files(q / "processing" / claim) == ["x.json"]  # not robbed
    assert [e["event"] for e in w.events()][-1] == "empty"

    kill_group(worker.pid)  # SIGKILL to the worker's whole process group
    worker.communicate()
    assert wait_until_gone(worker.pid) == []
    (tmp_path / "hang").unlink()
    r = w.run()
    assert r.returncode == 0, r.stderr
    [rec] = w.events("recover")
    assert (rec["item"], rec["claim"], rec["attempt"], rec["item_to"]) == \
        ("x.json", claim, 1, "inbox")
    assert _log(tmp_path) == ["start x.json", "start x.json", "done x.json"]
    assert _files(q / "processed") == ["x.json"] and _claim_dirs(tmp_path) == []
    assert w.manifests()[-1]["attempt"] == 2
    # The killed run's manifest stays "running": its wrapper never finished it.
    assert w.manifests()[0]["outcome"] == "running"
    assert w.run().returncode == 0 and _log(tmp_path).count("done x.json") == 1


@needs_proc
def test_a_dead_workers_item_waits_for_stale_after(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["x.json"])
    # An hour: however slow this machine, the claim is too young to tell a crash from a
    # slow start, so the next run must leave it alone.
    w = _queue_job(tmp_path, tool_path, 'echo "start ${1##*/}" >>"$LOG"; sleep 60',
                   stale_after="1h")
    worker = w.popen()
    wait_for(lambda: _log(tmp_path) == ["start x.json"], what="the claim")
    t_claim = time.monotonic()
    kill_group(worker.pid)
    worker.communicate()
    assert w.run().returncode == 0
    assert w.events("recover") == []
    # The same claim under a short stale_after, once it is older than that (and than the
    # one-second resolution of the claim's stamp).
    wait_for(lambda: time.monotonic() - t_claim > 2.1, what="stale_after")
    w2 = _queue_job(tmp_path, tool_path, RECORD, stale_after="1s")
    assert w2.run().returncode == 0
    assert len(w2.events("recover")) == 1
    assert _log(tmp_path)[-1] == "x.json"


def test_failed_item_goes_back_then_to_failed_after_max_attempts(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["bad.json"])
    w = _queue_job(tmp_path, tool_path, RECORD + "; exit 5", max_attempts=3)
    for attempt in (1, 2):
        assert w.run().returncode == 5
        assert _files(q / "inbox") == ["bad.json"]
        assert attempts_of(q, "bad.json") == str(attempt)
    assert w.run().returncode == 5
    assert _files(q / "inbox") == [] and _files(q / "failed") == ["bad.json"]
    assert not (q / "processing" / ".attempts" / "bad.json").exists()
    fins = w.events("finish")
    assert [(e["attempt"], e["item_to"], e["exit_code"]) for e in fins] == \
        [(1, "inbox", 5), (2, "inbox", 5), (3, "failed", 5)]
    # Runs within one second sort by pid, not by start (a pid that wrapped sorts first).
    by_attempt = {m["attempt"]: m for m in w.manifests()}
    assert sorted(by_attempt) == [1, 2, 3]
    assert by_attempt[3]["item_path"] == str(q / "failed" / "bad.json")
    assert w.run().returncode == 0 and w.events()[-1]["event"] == "empty"


def test_with_stop_on_failure_a_failure_stops_the_batch_and_the_run_exits_with_its_status(
        tmp_path: Path, tool_path: list[str]) -> None:
    fill_inbox(tmp_path / "q" / "inbox", ["1.json", "2.json", "3.json"])
    w = _queue_job(tmp_path, tool_path, RECORD + '; [ "${1##*/}" != 2.json ] || exit 9',
                   batch=0, stop_on_failure=True)
    assert w.run().returncode == 9
    assert _log(tmp_path) == ["1.json", "2.json"]
    assert _files(tmp_path / "q" / "inbox") == ["2.json", "3.json"]


@pytest.mark.parametrize("batch", [0, 3])
def test_a_failing_item_waits_for_its_next_turn_and_the_others_go_on(
        tmp_path: Path, tool_path: list[str], batch: int) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["1.json", "2.json", "3.json"])
    w = _queue_job(tmp_path, tool_path, RECORD + '; [ "${1##*/}" != 2.json ] || exit 9',
                   batch=batch)
    assert w.run().returncode == 9                       # the run says an item failed
    assert _log(tmp_path) == ["1.json", "2.json", "3.json"]   # 2.json once: no spin
    assert _files(q / "processed") == ["1.json", "3.json"]
    assert _files(q / "inbox") == ["2.json"] and attempts_of(q, "2.json") == "1"
    assert w.run().returncode == 9                       # its next turn: the next run
    assert _log(tmp_path)[3:] == ["2.json"] and attempts_of(q, "2.json") == "2"
    assert w.run().returncode == 9
    assert _files(q / "failed") == ["2.json"]            # max_attempts (3) reached
    assert w.run().returncode == 0


def test_a_failed_item_renamed_on_its_way_back_still_waits_for_the_next_run(
        tmp_path: Path, tool_path: list[str]) -> None:
    # The command drops a new a.json in the inbox, so the failed one goes back under
    # another name: neither is tried again in this run.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = _queue_job(tmp_path, tool_path,
                   RECORD + '; [ -e "$LOG.done" ] || { touch "$LOG.done"; echo new >"${1%/*}/../../inbox/a.json"; }; exit 1',
                   batch=0)
    assert w.run().returncode == 1
    assert _log(tmp_path) == ["a.json"]                      # one attempt, no spin
    inbox = _files(q / "inbox")
    assert len(inbox) == 2 and "a.json" in inbox


def test_processed_and_failed_are_never_overwritten(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "processed").mkdir(parents=True)
    (q / "processed" / "a.json").write_text("older a")
    w = _queue_job(tmp_path, tool_path, RECORD, max_attempts=1)
    assert w.run().returncode == 0
    assert (q / "processed" / "a.json").read_text() == "older a"
    [other] = [n for n in _files(q / "processed") if n != "a.json"]
    run_id = w.manifests()[0]["run_id"]
    assert other == f"a.{run_id}.json"
    assert json.loads((q / "processed" / other).read_text()) == {"name": "a.json"}
    assert w.manifests()[0]["item_path"] == str(q / "processed" / other)

    fill_inbox(q / "inbox", ["a.json"])
    (q / "failed").mkdir(exist_ok=True)
    (q / "failed" / "a.json").write_text("older failure")
    w2 = _queue_job(tmp_path, tool_path, "exit 1", max_attempts=1)
    assert w2.run().returncode == 1
    assert (q / "failed" / "a.json").read_text() == "older failure"
    assert len(_files(q / "failed")) == 2


def test_returning_to_an_inbox_that_got_a_new_file_of_that_name_keeps_both(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    # The command fails after a producer drops a new a.json into the inbox.
    script = 'echo new >"$INBOX/a.json"; exit 1'
    w = make_job(tmp_path, command=["bash", "-c", script], path=tool_path,
                 env={"INBOX": str(q / "inbox")}, lock=False,
                 queue=queue_fields(tmp_path, pattern="*.json"))
    assert w.run().returncode == 1
    inbox = _files(q / "inbox")
    assert len(inbox) == 2 and "a.json" in inbox
    assert (q / "inbox" / "a.json").read_text() == "new\n"
    [kept] = [n for n in inbox if n != "a.json"]
    assert kept.endswith(".json")  # still matches the pattern, so it is tried again
    assert attempts_of(q, kept) == "1"
    assert not (q / "processing" / ".attempts" / "a.json").exists()  # not the new file's


def test_the_command_may_consume_its_item(tmp_path: Path, tool_path: list[str]) -> None:
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    w = _queue_job(tmp_path, tool_path, 'rm "$1"')
    assert w.run().returncode == 0
    assert w.events("finish")[0]["item_to"] == "gone"
    assert _claim_dirs(tmp_path) == []


@needs_proc
def test_term_to_the_wrapper_is_passed_on_and_the_item_goes_back(
        tmp_path: Path, tool_path: list[str]) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["x.json"])
    w = _queue_job(tmp_path, tool_path, 'echo "start ${1##*/}" >>"$LOG"; sleep 60',
                   lock=True)
    worker = w.popen()
    wait_for(lambda: _log(tmp_path) == ["start x.json"], what="the claim")
    worker.send_signal(signal.SIGTERM)  # the wrapper only, as launchd or kill would
    worker.communicate(timeout=20)
    assert worker.returncode == 143
    assert wait_until_gone(worker.pid) == []  # the command got TERM too
    assert _files(q / "inbox") == ["x.json"] and _claim_dirs(tmp_path) == []
    m = w.manifests()[0]
    assert (m["outcome"], m["item_path"]) == ("interrupted", str(q / "inbox" / "x.json"))
    assert [e["signal"] for e in w.events("signal")] == ["TERM"]
    assert attempts_of(q, "x.json") == "1"


def test_queue_folders_are_created_when_missing(tmp_path: Path, tool_path: list[str]) -> None:
    w = _queue_job(tmp_path, tool_path, RECORD)
    assert w.run().returncode == 0
    for d in ("inbox", "processing", "processed", "failed"):
        assert (tmp_path / "q" / d).is_dir()
    assert [e["event"] for e in w.events()] == ["empty"]
    assert w.run_dirs() == []


def test_run_ids_are_never_reused_even_after_their_dirs_are_pruned(
        tmp_path: Path, tool_path: list[str]) -> None:
    names = [f"{i:03d}.json" for i in range(40)]
    fill_inbox(tmp_path / "q" / "inbox", names)
    w = make_job(tmp_path, command=["true", "{item}"], path=tool_path, lock=False,
                 queue=queue_fields(tmp_path, batch=0), logs={"keep_runs": 1})
    results = finish(start_together([w.argv()] * 3, w.env(), tmp_path))
    assert [(rc, err) for rc, _, err in results] == [(0, "")] * 3
    ids = [e["run_id"] for e in w.events("start")]
    assert len(ids) == 40 and len(set(ids)) == 40
    assert len(w.run_dirs()) == 1


def test_counts_stay_exact_while_producers_reuse_names_and_workers_race(
        tmp_path: Path, tool_path: list[str]) -> None:
    # No kills: files of two names only, each name dropped again as soon as it is free,
    # three workers at once. Every file must fail exactly max_attempts times, whichever
    # other file of its name is claimed, returned or counted meanwhile.
    q = tmp_path / "q"
    (q / "inbox").mkdir(parents=True)
    w = _queue_job(tmp_path, tool_path, 'printf "%s\\n" "$(cat "$1")" >>"$LOG"; exit 1',
                   max_attempts=2, batch=0)
    contents = [f"file-{i}" for i in range(16)]
    produced = threading.Event()

    def produce() -> None:
        produce_reusing_names(q / "inbox", tmp_path, contents, 2, produced)

    def work() -> None:
        while not produced.is_set() or _files(q / "inbox") or _claim_dirs(tmp_path):
            w.run()

    threads = [threading.Thread(target=produce)] + [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert collections.Counter(_log(tmp_path)) == {c: 2 for c in contents}
    assert sorted((q / "failed" / n).read_text() for n in _files(q / "failed")) == sorted(contents)
    assert list((q / "processing" / ".attempts").iterdir()) == []


def test_with_a_batch_items_that_keep_failing_go_behind_the_good_ones(
        tmp_path: Path, tool_path: list[str]) -> None:
    # Three bad items sort first; batch 2, max_attempts 5. Without reordering the bad
    # ones would take every run's batch until each had failed 5 times (10 runs).
    q = tmp_path / "q"
    bad = ["a1.json", "a2.json", "a3.json"]
    good = ["b1.json", "b2.json", "b3.json", "b4.json"]
    fill_inbox(q / "inbox", bad + good)
    w = _queue_job(tmp_path, tool_path, RECORD + '; case ${1##*/} in a*) exit 3 ;; esac',
                   batch=2, max_attempts=5)
    codes = [w.run().returncode for _ in range(4)]
    # run 1: a1 a2 (no counts yet); run 2: a3 b1; run 3: b2 b3; run 4: b4 a1
    assert _log(tmp_path) == ["a1.json", "a2.json", "a3.json", "b1.json", "b2.json",
                              "b3.json", "b4.json", "a1.json"]
    assert codes == [3, 3, 0, 3]
    assert _files(q / "processed") == good
    assert _files(q / "inbox") == bad and _files(q / "failed") == []
    assert [attempts_of(q, n) for n in bad] == ["2", "1", "1"]
    # The bad ones still get their turns, to max_attempts, then go to failed/.
    for _ in range(8):
        w.run()
    assert _files(q / "failed") == bad and _files(q / "inbox") == []
    assert collections.Counter(_log(tmp_path)) == {**{n: 5 for n in bad}, **{n: 1 for n in good}}
