"""Each fault a hostile review found in the wrapper (issue 9), as a test of its own.

Real processes and real signals throughout; where a moment is too short to hit from
outside (a signal between a fork and `$!`), the runtime's own functions are driven
directly (tests/test_runtime_units.py has more of those).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.errors import ConfigError
from tests import faked_clock
from tests.test_fscheck import second_fs
from tests.test_runtime_units import _count_file, bash_with_runtime
from tests.wrapper_kit import (
    SYSTEM_PATH,
    Wrapped,
    attempts_of,
    fill_inbox,
    kill_group,
    make_job,
    needs_proc,
    queue_fields,
    session_procs,
    wait_for,
    wait_until_gone,
)


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


def _queue_job(tmp_path: Path, script: str, path: list[str] | None = None, **queue: object) -> Wrapped:
    return make_job(tmp_path, command=["sh", "-c", script, "sh", "{item}"], lock=False,
                    path=path, env={"T": str(tmp_path)},
                    queue=queue_fields(tmp_path, pattern="*.json", **queue))


# -- signals --------------------------------------------------------------------------

@pytest.mark.macos
@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_a_queue_wrapper_ends_the_commands_children_before_the_item_goes_back(
        tmp_path: Path, sig: int) -> None:
    # No timeout: the command (sh -c) has a child of its own that keeps the item open.
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    w = _queue_job(tmp_path, 'sleep 60 & echo $! >"$T/child"; wait')
    p = w.popen()
    wait_for(lambda: (tmp_path / "child").exists() and (tmp_path / "child").read_text().strip(),
             what="the command's child")
    child = int((tmp_path / "child").read_text())
    os.kill(p.pid, sig)
    p.communicate(timeout=30)
    assert p.returncode == 128 + sig
    # By the time the wrapper is gone, so is everything its command started...
    assert session_procs(p.pid) == []
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    # ... and only then is the item back in the inbox, for another run.
    assert _files(tmp_path / "q" / "inbox") == ["a.json"]
    [fin] = w.events("finish")
    assert (fin["outcome"], fin["item_to"]) == ("interrupted", "inbox")


@needs_proc
def test_a_child_that_ignores_term_is_killed_before_the_item_goes_back(tmp_path: Path) -> None:
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    w = _queue_job(tmp_path, "sh -c 'trap \"\" TERM; touch \"$T/up\"; sleep 60' & wait")
    p = w.popen(env={"SCHEDGEN_TEST_KILL_GRACE": "1"})  # not the 5 s a real run waits
    wait_for(lambda: (tmp_path / "up").exists(), what="the stubborn child")
    os.kill(p.pid, signal.SIGTERM)
    p.communicate(timeout=30)
    assert p.returncode == 143
    assert session_procs(p.pid) == []  # KILLed after the grace, before the wrapper left
    assert _files(tmp_path / "q" / "inbox") == ["a.json"]


def test_a_signal_between_the_fork_and_the_pid_waits_for_the_pid(tmp_path: Path) -> None:
    """Inside a critical section a signal is only noted; at its end the command the
    section started (known by then) is stopped with its whole group."""
    script = bash_with_runtime(tmp_path, '''
        trap 'sg_on_signal TERM 15' TERM
        sg_crit=1
        kill -TERM $$                      # lands "between" the fork and $!
        echo "deferred:$sg_signal"
        set -m
        sleep 60 &
        sg_cmd_pid=$!
        set +m
        echo "$sg_cmd_pid" >"$T/pid"
        sg_crit_end
        echo not reached
    ''')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert r.stdout == "deferred:TERM\n" and r.returncode == 143, r
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_signal_right_after_the_run_dir_is_made_leaves_a_whole_record(tmp_path: Path) -> None:
    # The EXIT trap meets no unset variable, whatever the moment (set -u).
    script = bash_with_runtime(tmp_path, '''
        sg_now
        sg_run_dir_new 1
        sg_outcome=running
        trap sg_on_exit EXIT
        exit 143
    ''')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert "unbound variable" not in r.stderr and r.returncode == 143, r
    [run] = (tmp_path / "logs" / "job" / "runs").iterdir()
    m = json.loads((run / "schedgen-manifest.json").read_text())
    assert m["outcome"] == "failed" and m["exit_code"] == 143 and m["finished_at"]
    events = [json.loads(x) for x in (tmp_path / "logs" / "job" / "events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["finish"]


def test_claim_dirs_a_killed_run_left_half_made_are_removed(tmp_path: Path) -> None:
    # kill -9 during the claim: a claim dir with no .claim yet, or with one not locked.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "processing" / "20000101T000000Z-1").mkdir(parents=True)
    (q / "processing" / "20000101T000000Z-2").mkdir()
    (q / "processing" / "20000101T000000Z-2" / ".claim").write_text("")
    w = _queue_job(tmp_path, "true")
    assert w.run().returncode == 0
    assert _files(q / "processing") == [] and _files(q / "processed") == ["a.json"]


# -- items that cannot be moved on -------------------------------------------------------

def _failing_mv(tmp_path: Path, where: str) -> Path:
    """A PATH dir whose mv fails for anything moved into `where` (root ignores chmod)."""
    bindir = tmp_path / "bad-bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "mv").write_text(f'#!/bin/sh\nfor a; do :; done\ncase $a in "{where}"*) '
                               f'echo "mv: cannot move: Permission denied" >&2; exit 1 ;; esac\n'
                               'exec /bin/mv "$@"\n')
    (bindir / "mv").chmod(0o755)
    return bindir


def test_an_item_that_cannot_reach_processed_stays_journaled_and_a_later_run_moves_it(
        tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    bad = _failing_mv(tmp_path, str(q / "processed"))
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', path=[str(bad), *SYSTEM_PATH])
    r = w.run()
    assert r.returncode == 74 and "could not move a.json" in r.stderr
    # The records say where the item is, not where it should have gone.
    [fin] = w.events("finish")
    assert fin["item_to"] == "processing" and fin["outcome"] == "ok"
    [m] = w.manifests()
    [claim] = _files(q / "processing")
    assert m["item_path"] == str(q / "processing" / claim / "a.json")
    assert b"\0da.json/\0" in (q / "processing" / claim / ".journal").read_bytes()
    assert _files(q / "processed") == []
    # The fault is fixed: the next run moves it on (as done: it is not run again).
    good = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"')
    assert good.run().returncode == 0
    [rec] = good.events("recover")
    assert (rec["item"], rec["state"], rec["item_to"]) == ("a.json", "done", "processed")
    assert _files(q / "processed") == ["a.json"] and _files(q / "processing") == []
    assert len((tmp_path / "ran").read_text().splitlines()) == 1


def test_done_items_stuck_in_several_flushes_are_all_moved_on_and_none_runs_again(
        tmp_path: Path) -> None:
    # Three items, one per chunk: each flush rewrites the journal, and must keep the done
    # records of the items stuck in the flushes before it.
    q = tmp_path / "q"
    names = ["a.json", "b.json", "c.json"]
    fill_inbox(q / "inbox", names)
    bad = _failing_mv(tmp_path, str(q / "processed"))
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', path=[str(bad), *SYSTEM_PATH], batch=0)
    assert w.run().returncode == 74
    [claim] = _files(q / "processing")
    assert _files(q / "processing" / claim) == names
    journal = (q / "processing" / claim / ".journal").read_bytes().split(b"\0")
    assert {b"da.json/", b"db.json/", b"dc.json/"} <= set(journal)
    good = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', batch=0)
    assert good.run().returncode == 0
    assert sorted((e["item"], e["state"]) for e in good.events("recover")) == [
        (n, "done") for n in names]
    assert _files(q / "processed") == names
    assert len((tmp_path / "ran").read_text().splitlines()) == 3


def test_a_journal_that_cannot_be_rewritten_ends_the_claiming_and_nothing_runs_twice(
        tmp_path: Path) -> None:
    # processed/ cannot be reached and the journal's rewrite (a rename) fails: the run
    # keeps the old journal, claims no more, returns what it has not started, exits 74.
    q = tmp_path / "q"
    names = [f"{i:02d}.json" for i in range(8)]
    fill_inbox(q / "inbox", names)
    bindir = tmp_path / "bad-bin"
    bindir.mkdir()
    (bindir / "mv").write_text(f'#!/bin/sh\nfor a; do :; done\ncase $a in "{q}/processed"*|*/.journal) '
                               'exit 1 ;; esac\nexec /bin/mv "$@"\n')
    (bindir / "mv").chmod(0o755)
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', path=[str(bindir), *SYSTEM_PATH], batch=0)
    r = w.run()
    assert r.returncode == 74 and "claims no more items" in r.stderr
    first = len((tmp_path / "ran").read_text().splitlines())
    assert first < len(names)
    good = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', batch=0)
    assert good.run().returncode == 0
    assert _files(q / "processed") == names and _files(q / "processing") == []
    ran = [Path(x).name for x in (tmp_path / "ran").read_text().splitlines()]
    assert sorted(ran) == names                      # each once, the stuck ones included
    assert not list((q / "processing").glob("*/.journal.new"))


def test_an_item_taken_by_its_own_command_leaves_no_record_for_a_new_one_of_its_name(
        tmp_path: Path) -> None:
    # The command consumes a.json and a producer drops a new a.json, which fails: the
    # first one's records must be gone from the claim's journal by the time the new one
    # is claimed into it, or the new one is taken for done (exit 0, into processed/).
    q = tmp_path / "q"
    script = ('case $(cat "$1") in consume) rm -f "$1"; echo fail >"$T/q/inbox/a.json" ;; '
              'fail) exit 1 ;; esac')
    fill_inbox(q / "inbox", ["a.json"])
    (q / "inbox" / "a.json").write_text("consume\n")
    w = _queue_job(tmp_path, script, batch=0)
    assert w.run().returncode == 1
    assert [(e["item"], e["item_to"], e["outcome"]) for e in w.events("finish")] == [
        ("a.json", "gone", "ok"), ("a.json", "inbox", "failed")]
    assert _files(q / "inbox") == ["a.json"] and _files(q / "processed") == []
    assert attempts_of(q, "a.json") == "1"


def test_a_keeper_that_cannot_journal_the_start_does_not_run_the_command(tmp_path: Path) -> None:
    # A full disk, say: the start record cannot be written. A command that ran without it
    # would run again, uncounted; so it is not run, the item goes back as it came, and the
    # run stops (74) with the rest of its chunk returned.
    q = tmp_path / "q"
    names = ["a.json", "b.json"]
    fill_inbox(q / "inbox", names)
    bindir = tmp_path / "bad-bin"
    bindir.mkdir()
    # The claim's mv, then its journal made unwritable (a directory in its place).
    (bindir / "mv").write_text('#!/bin/sh\nfor a; do :; done\n/bin/mv "$@" || exit\n'
                               f'case $a in "{q}/processing/"*) rm -f "$a.journal"; mkdir "$a.journal" ;; esac\n')
    (bindir / "mv").chmod(0o755)
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', path=[str(bindir), *SYSTEM_PATH], batch=0)
    r = w.run()
    assert r.returncode == 74 and "claims no more items" in r.stderr
    assert not (tmp_path / "ran").exists()
    assert _files(q / "inbox") == names and _files(q / "processing") == []
    assert attempts_of(q, "a.json") == ""
    [run] = w.run_dirs()
    assert "could not journal the start of a.json" in (run / "stderr.log").read_text()
    [fin] = w.events("finish")
    assert (fin["item"], fin["item_to"], fin["attempt"]) == ("a.json", "inbox", 1)
    good = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', batch=0)
    assert good.run().returncode == 0
    assert len((tmp_path / "ran").read_text().splitlines()) == 2


@pytest.mark.macos
def test_a_file_the_command_left_beside_its_item_goes_to_failed_not_the_inbox(
        tmp_path: Path) -> None:
    # It keeps the claim; the run that recovers it must not return it as an item to an
    # inbox whose pattern it does not match (nobody would claim it, ever).
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = _queue_job(tmp_path, 'echo log >"$1.log"', stale_after="1s")
    assert w.run().returncode == 0
    [claim] = _files(q / "processing")
    assert _files(q / "processing" / claim) == ["a.json.log"]
    time.sleep(1.1)
    assert w.run().returncode == 0
    [rec] = w.events("recover")
    assert (rec["item"], rec["state"], rec["item_to"], rec["attempt"]) == (
        "a.json.log", "foreign", "failed", 0)
    assert _files(q / "failed") == ["a.json.log"] and _files(q / "inbox") == []
    assert _files(q / "processing") == [] and _files(q / "processed") == ["a.json"]


@pytest.mark.parametrize("first", ["done", "gone"])
def test_a_file_left_under_the_name_of_an_item_gone_from_the_claim_is_not_that_item(
        tmp_path: Path, first: str) -> None:
    # a and c share a chunk. a leaves the claim first: done and moved on by a flush before
    # c starts (a second passed), or taken away by its own command. c's command then writes
    # a file named a.json beside its own item, and the wrapper alone is killed. The run
    # that recovers the claim must take that file for what it is (foreign, to failed/),
    # not for a done a (a second a in processed/).
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json", "c.json", "e.json", "f.json", "g.json"])
    a = "sleep 1.2" if first == "done" else 'rm "$1"'
    script = ('case "$1" in */a.json) ' + a + ' ;; */c.json) d=${1%/*}; echo side >"$d/a.json"; '
              ': >"$T/side"; sleep 1; : >"$T/c-done" ;; esac')
    w = _queue_job(tmp_path, script, stale_after="1s", max_attempts=1, batch=0)
    p = w.popen()
    wait_for(lambda: (tmp_path / "side").exists(), what="the side file")
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    wait_for(lambda: (tmp_path / "c-done").exists(), what="c's command to end")
    time.sleep(1.1)
    assert w.run().returncode == 0
    rec = {e["item"]: (e["state"], e["item_to"]) for e in w.events("recover")}
    assert rec["a.json"] == ("foreign", "failed"), rec
    assert (q / "failed" / "a.json").read_text() == "side\n"
    for d in ("processed", "inbox"):
        assert all(f.read_text() != "side\n" for f in (q / d).iterdir()), d
    assert _files(q / "processing") == []


def test_a_failed_item_that_cannot_go_back_keeps_its_attempt_when_the_chunk_is_flushed(
        tmp_path: Path) -> None:
    # 00 is done and its move to processed/ waits for the chunk's flush; 01, next in the
    # chunk, fails and cannot go back to the inbox, so the run stops (the rest go back)
    # and flushes 00 as it ends. The flush rewrites the claim's journal: 01's start and
    # failure must stay in it, so that the run that moves 01 on later counts that attempt.
    # 00 is flushed before 01 starts when a second passes between them: then the scene
    # is set again.
    script = 'case "$1" in */01.json) exit 3 ;; esac'
    names = [f"{i:02d}.json" for i in range(12)]
    for k in range(5):
        root = tmp_path / str(k)
        root.mkdir()
        q = root / "q"
        fill_inbox(q / "inbox", names)
        bad = _failing_mv(root, str(q / "inbox"))
        w = _queue_job(root, script, path=[str(bad), *SYSTEM_PATH], batch=0,
                       stop_on_failure=True)
        r = w.run()
        assert r.returncode == 3 and "could not move 01.json" in r.stderr
        order = [(e["event"], e.get("item")) for e in w.events() if e["event"] in ("claim", "finish")]
        if order.index(("finish", "00.json")) > order.index(("claim", "01.json")):
            break                                        # 00 was still waiting as 01 failed
    else:
        pytest.skip("a second passed between the two items each time")
    assert _files(q / "processed") == ["00.json"]
    [claim] = _files(q / "processing")
    assert {b"s01.json/", b"f01.json/"} <= set((q / "processing" / claim / ".journal").read_bytes().split(b"\0"))
    good = _queue_job(root, script, batch=0, max_attempts=5)
    good.run()
    # The waiting items could not go back either: they come back as claimed, uncounted.
    recovered = {e["item"]: (e["state"], e["item_to"]) for e in good.events("recover")}
    assert recovered.pop("01.json") == ("started", "inbox")
    assert set(recovered.values()) == {("claimed", "inbox")}


def test_a_long_name_taken_in_processed_is_moved_under_a_shortened_name(tmp_path: Path) -> None:
    q = tmp_path / "q"
    name = "x" * 245 + ".json"
    fill_inbox(q / "inbox", [name])
    (q / "processed").mkdir(parents=True)
    (q / "processed" / name).write_text("an older one")
    w = _queue_job(tmp_path, "true")
    assert w.run().returncode == 0
    moved = [p for p in _files(q / "processed") if p != name]
    assert len(moved) == 1 and len(moved[0].encode()) <= 255 and moved[0].endswith(".json")
    assert (q / "processed" / name).read_text() == "an older one"
    assert w.manifests()[0]["item_path"] == str(q / "processed" / moved[0])
    assert _files(q / "processing") == []


def _mv_shim(shim: Path, body: str) -> Path:
    """A stand-in mv in the folder shim: a bash script of body, which calls /bin/mv."""
    shim.mkdir()
    (shim / "mv").write_text("#!/bin/bash\n" + body)
    (shim / "mv").chmod(0o755)
    return shim


def test_a_recovery_killed_right_after_its_move_leaves_no_attempt_count(tmp_path: Path) -> None:
    # A dead worker's item, journaled done, had one failed attempt before. The recovering
    # run is killed the moment its mv has moved the item on: no count may stay behind
    # (a later file of that name would inherit it).
    shim = _mv_shim(tmp_path / "shim", '/bin/mv "$@"; st=$?\n'
                    'case "$*" in *processed*) [ ! -e "$MARK" ] || '
                    '{ rm -f "$MARK"; kill -KILL "$PPID"; } ;; esac\nexit "$st"\n')
    q = tmp_path / "q"
    w = make_job(tmp_path, command=["true"], path=[str(shim), *SYSTEM_PATH], lock=False,
                 env={"MARK": str(tmp_path / "mark")},
                 queue=queue_fields(tmp_path, batch=3, stale_after="1s"))
    claim = q / "processing" / "20260101T000000Z-1"
    claim.mkdir(parents=True)
    (claim / ".claim").write_text("0 1 elsewhere 20260101T000000Z-1 2\n")
    (claim / ".journal").write_bytes(b"\0ka.json/\0\0sa.json/\0\0da.json/\0")
    (claim / "a.json").write_text("{}")
    _count_file(tmp_path, "a.json", 1, claim / "a.json")
    (tmp_path / "mark").touch()
    assert w.run().returncode == -signal.SIGKILL
    assert (q / "processed" / "a.json").exists()
    assert list((q / "processing" / ".attempts").iterdir()) == []
    assert w.run().returncode == 0                       # and nothing else is left
    assert sorted(p.name for p in (q / "processing").iterdir()) == [".attempts"]



def _kill_at_mv(shim: Path, dest: str, before: bool) -> None:
    """A stand-in mv that KILLs the wrapper (its parent) once, when MARK exists and its
    last argument matches the case pattern dest: before the move or right after it."""
    kill = '[ ! -e "$MARK" ] || { rm -f "$MARK"; kill -KILL "$PPID"; exit 1; }'
    _mv_shim(shim, 'for last; do :; done\n'
             + (f'case $last in {dest}) {kill} ;; esac\n' if before else '')
             + '/bin/mv "$@"; st=$?\n'
             + ('' if before else f'case $last in {dest}) {kill} ;; esac\n')
             + 'exit "$st"\n')


def test_a_run_killed_between_counting_a_failure_and_moving_the_item_back_counts_it_once(
        tmp_path: Path) -> None:
    # The count of a failed attempt is written before the item moves back to the inbox;
    # the wrapper is killed in between. Recovery must not count that attempt again.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    _kill_at_mv(tmp_path / "shim", "*/inbox/?*", before=True)
    w = make_job(tmp_path, command=["false"], path=[str(tmp_path / "shim"), *SYSTEM_PATH],
                 lock=False, env={"MARK": str(tmp_path / "mark")},
                 queue=queue_fields(tmp_path, stale_after="1s", max_attempts=3))
    (tmp_path / "mark").touch()
    assert w.run().returncode == -signal.SIGKILL
    count, _ = (q / "processing" / ".attempts" / "a.json").read_text().split()
    assert count == "1"                                  # written, the item still claimed
    time.sleep(1.1)  # stale_after
    assert w.run().returncode == 1                       # recovered, then tried again
    [rec] = w.events("recover")
    assert (rec["state"], rec["attempt"], rec["item_to"]) == ("started", 1, "inbox")
    assert attempts_of(q, "a.json") == "2"
    assert _files(q / "inbox") == ["a.json"] and _files(q / "failed") == []


def test_a_run_killed_right_after_moving_an_item_back_under_a_new_name_leaves_its_count_there(
        tmp_path: Path) -> None:
    # A producer dropped a new a.json into the inbox while the item ran and failed: the
    # item goes back as a.<run id>.json, its count written under that name before the
    # move. Killed right after the move, the count is the item's, and a.json has none.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    _kill_at_mv(tmp_path / "shim", "*/inbox/a.?*.json", before=False)
    w = make_job(tmp_path, command='echo new >"$INBOX/a.json"; exit 1',
                 path=[str(tmp_path / "shim"), *SYSTEM_PATH], lock=False,
                 env={"MARK": str(tmp_path / "mark"), "INBOX": str(q / "inbox")},
                 queue=queue_fields(tmp_path, pattern="*.json", max_attempts=3))
    (tmp_path / "mark").touch()
    assert w.run().returncode == -signal.SIGKILL
    inbox = _files(q / "inbox")
    assert len(inbox) == 2 and (q / "inbox" / "a.json").read_text() == "new\n"
    [moved] = [n for n in inbox if n != "a.json"]
    assert sorted(p.name for p in (q / "processing" / ".attempts").iterdir()) == [moved]
    assert attempts_of(q, moved) == "1"


def test_a_new_file_of_the_name_of_an_item_in_progress_starts_with_no_count(tmp_path: Path) -> None:
    # X failed once (count 1). While X runs again, a producer drops a new a.json (Y); a
    # second worker takes Y: Y's first attempt is its first, not X's second.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "inbox" / "a.json").write_text("X")
    script = ('c=$(cat "$1"); echo "$c" >>"$T/ran"; '
              '[ "$c" != X ] || [ ! -e "$T/gate" ] || { touch "$T/in"; while [ ! -e "$T/go" ]; do sleep 0.05; done; }; '
              'exit 1')
    w = _queue_job(tmp_path, script, max_attempts=2)
    assert w.run().returncode == 1                       # X: attempt 1
    (tmp_path / "gate").touch()
    x = w.popen()                                        # X: attempt 2, held
    wait_for(lambda: (tmp_path / "in").exists(), what="X's second attempt")
    (q / "inbox" / "a.json").write_text("Y")
    assert w.run().returncode == 1                       # Y: attempt 1, fails
    (tmp_path / "go").touch()
    x.communicate(timeout=30)
    claims = [(e["item"], e["attempt"]) for e in w.events("claim")]
    assert claims == [("a.json", 1), ("a.json", 2), ("a.json", 1)], claims
    assert (q / "failed" / "a.json").read_text() == "X"   # X after its 2 attempts; Y back
    assert [(q / "inbox" / n).read_text() for n in _files(q / "inbox")] == ["Y"]


def test_a_signal_during_the_claim_stops_the_run_before_the_command_and_counts_nothing(
        tmp_path: Path) -> None:
    # TERM lands while the claim's mv runs (inside the critical section, so it waits):
    # the run stops before the command starts, and the item goes back uncounted.
    shim = _mv_shim(tmp_path / "shim", 'for last; do :; done\n'
                    'case $last in */processing/*/) kill -TERM "$PPID" ;; esac\n'
                    'exec /bin/mv "$@"\n')
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = make_job(tmp_path, command='echo ran >>"$T/log"; exit 1', path=[str(shim), *SYSTEM_PATH],
                 lock=False, env={"T": str(tmp_path)},
                 queue=queue_fields(tmp_path, max_attempts=2))
    for _ in range(3):
        assert w.run().returncode == 143
    assert not (tmp_path / "log").exists()               # the command never ran
    assert _files(q / "inbox") == ["a.json"] and _files(q / "failed") == []
    assert not (q / "processing" / ".attempts" / "a.json").exists()
    assert w.events("start") == [] and len(w.events("signal")) == 3

# -- a finished command is not run again ---------------------------------------------------

@pytest.mark.macos
@needs_proc
def test_a_wrapper_killed_after_its_command_finished_does_not_run_it_again(
        tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    # The command waits for a gate; the wrapper alone is killed (-9) meanwhile, then the
    # command finishes fine. Done as many times as max_attempts allows failures, and more.
    script = 'echo "$1" >>"$T/ran"; while [ ! -e "$T/gate" ]; do sleep 0.05; done'
    w = _queue_job(tmp_path, script, stale_after="1s", max_attempts=2)
    p = w.popen()
    wait_for(lambda: (tmp_path / "ran").exists(), what="the command to start")
    os.kill(p.pid, signal.SIGKILL)
    p.communicate()
    (tmp_path / "gate").touch()
    assert wait_until_gone(p.pid, timeout=20) == []
    time.sleep(1.1)  # stale_after is 1s: the claim is looked at once it is that old
    r = w.run()
    assert r.returncode == 0, r.stderr
    [rec] = w.events("recover")
    assert (rec["state"], rec["item_to"]) == ("done", "processed")
    assert (tmp_path / "ran").read_text().splitlines() == [str(q / "processing" / rec["claim"] / "a.json")]
    assert _files(q / "processed") == ["a.json"] and _files(q / "failed") == []


# -- the lock -------------------------------------------------------------------------------

def _holder(tmp_path: Path) -> Wrapped:
    # QUICK=1 in the run's environment makes a run that ends at once (and succeeds).
    return make_job(tmp_path, command='[ -z "${QUICK-}" ] || exit 0; touch "$T/up"; sleep 30',
                    env={"T": str(tmp_path)})


@needs_proc
@pytest.mark.parametrize(("which", "how"), [("job.lock", "deleted"), ("job.lock", "replaced"),
                                            (".job.lock.keep", "replaced")])
def test_the_lock_holds_when_a_name_is_deleted_or_replaced_while_held(
        tmp_path: Path, which: str, how: str) -> None:
    w = _holder(tmp_path)
    p = w.popen()
    name = tmp_path / "locks" / which
    try:
        wait_for(lambda: (tmp_path / "up").exists(), what="the holder")
        if how == "deleted":
            name.unlink()                                # a tmp cleaner
        else:
            shutil.copy(name, tmp_path / "copy")
            os.replace(tmp_path / "copy", name)          # a new file under the old name
        r = w.run()
        assert r.returncode == 75 and "busy" in r.stderr
        assert len(w.events("start")) == 1
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate()
    r = w.run(env={"QUICK": "1"})  # once the holder is gone, the lock is free
    assert r.returncode == 0 and len(w.events("start")) == 2
    locks = tmp_path / "locks"
    assert (locks / "job.lock").samefile(locks / ".job.lock.keep")   # one file again


def test_a_lock_folder_copied_without_its_hard_links_is_joined_again(tmp_path: Path) -> None:
    # cp -R, or rsync -a without -H, with times kept: the names are apart in a folder that
    # looks unchanged. Every run had stopped with 78 ("keeps changing").
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0 and w.run().returncode == 0
    locks = tmp_path / "locks"
    shutil.copytree(locks, tmp_path / "copy", copy_function=shutil.copy2)
    shutil.rmtree(locks)
    (tmp_path / "copy").rename(locks)
    assert not (locks / "job.lock").samefile(locks / ".job.lock.keep")
    r = w.run()
    assert r.returncode == 0, r.stderr
    assert (locks / "job.lock").samefile(locks / ".job.lock.keep")


@pytest.mark.macos
@pytest.mark.parametrize("mode", [0o1777, 0o770, 0o702])
def test_a_lock_dir_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    w = _holder(tmp_path)
    (tmp_path / "locks").mkdir(mode=0o700)
    (tmp_path / "locks").chmod(mode)
    r = w.run()
    assert r.returncode == 78 and "can be written by others" in r.stderr
    assert not (tmp_path / "up").exists()
    [e] = w.events("precondition")
    assert e["what"] == "lock"


def test_a_lock_dir_opened_up_is_refused_once_anything_in_it_changes(tmp_path: Path) -> None:
    # The mode costs a fork (find): it is looked at again when an entry of the folder
    # changed since it was last found private, which is what anyone else would have to do.
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0                     # looked at; the lock file marked
    (tmp_path / "locks").chmod(0o1777)
    assert w.run().returncode == 0                     # nothing in it changed
    (tmp_path / "locks" / "planted").touch()           # someone else's file
    r = w.run()
    assert r.returncode == 78 and "can be written by others" in r.stderr
    (tmp_path / "locks").chmod(0o700)
    assert [w.run().returncode for _ in range(2)] == [0, 0]


@needs_proc
def test_swapping_the_lock_names_in_an_opened_up_folder_is_refused(tmp_path: Path) -> None:
    # Another job's lock pair put in place of a held one (what a user who may write the
    # folder could do) would give the next run a free lock: the folder is newer, so refused.
    slow = make_job(tmp_path, "slow", command='[ -e "$T/go" ] || exit 0; touch "$T/up"; sleep 30',
                    env={"T": str(tmp_path)})
    other = make_job(tmp_path, "other", command=["true"])
    assert other.run().returncode == 0 and slow.run().returncode == 0
    locks = tmp_path / "locks"
    locks.chmod(0o1777)
    (tmp_path / "go").touch()
    p = slow.popen()
    try:
        wait_for(lambda: (tmp_path / "up").exists(), what="the holder")
        (locks / "slow.lock").rename(locks / "held")
        (locks / ".slow.lock.keep").rename(locks / ".held.keep")
        (locks / "other.lock").rename(locks / "slow.lock")
        (locks / ".other.lock.keep").rename(locks / ".slow.lock.keep")
        r = slow.run()
        assert r.returncode == 78 and "can be written by others" in r.stderr
        assert len(slow.events("start")) == 2            # the first run, then the holder
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate()


def test_a_symlink_planted_as_the_lock_file_is_refused(tmp_path: Path) -> None:
    w = _holder(tmp_path)
    (tmp_path / "locks").mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    (tmp_path / "locks" / "job.lock").symlink_to(target)
    r = w.run()
    assert r.returncode == 78 and "symlink" in r.stderr
    assert not target.exists() and not (tmp_path / "up").exists()


# -- the clock --------------------------------------------------------------------------------

def test_a_clock_stepped_back_never_prunes_the_run_that_just_happened(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 2})
    runs = w.log_dir / "runs"
    for name in ("20990101T000000Z-11", "20990101T000001Z-12"):  # made while the clock ran ahead
        (runs / name).mkdir(parents=True)
        (runs / name / "schedgen-manifest.json").write_text('{\n  "outcome": "ok",\n  "smoke": false\n}\n')
    assert w.run().returncode == 0
    [start] = w.events("start")
    assert (runs / start["run_id"]).is_dir()
    # Named after the newest: in its second when the name sorts after it, else the next.
    assert start["run_id"] > "20990101T000001Z-12"
    assert start["run_id"][:16] in ("20990101T000001Z", "20990101T000002Z")
    assert [d.name for d in w.run_dirs()] == ["20990101T000001Z-12", start["run_id"]]
    assert not w.manifests()[1]["started_at"].startswith("2099")  # the clock's own time


@pytest.mark.parametrize("stray", ["README", "latest"])
def test_a_name_that_is_no_run_in_runs_neither_hides_the_newest_nor_is_pruned(
        tmp_path: Path, stray: str) -> None:
    # A README, or a "latest" link to the newest run, sorts after the run IDs: taken for the
    # newest, it left no floor, and a run of a clock stepped back was pruned as it ended.
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 2})
    runs = w.log_dir / "runs"
    for name in ("20990101T000000Z-11", "20990101T000001Z-12"):  # made while the clock ran ahead
        (runs / name).mkdir(parents=True)
        (runs / name / "schedgen-manifest.json").write_text('{\n  "outcome": "ok",\n  "smoke": false\n}\n')
    if stray == "README":
        (runs / "README").write_text("notes\n")
    else:
        (runs / "latest").symlink_to(runs / "20990101T000001Z-12")
    for _ in range(3):
        assert w.run().returncode == 0
    ids = [e["run_id"] for e in w.events("start")]
    assert ids == sorted(ids) and ids[0] > "20990101T000001Z-12"
    assert [d.name for d in sorted(runs.iterdir())] == [*ids[1:], stray]


@pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime")
def test_a_clock_stepped_back_after_a_run_names_the_next_one_after_it(tmp_path: Path) -> None:
    # The run ahead of the clock leaves its ID in .last-run, which the next run goes by
    # (the runs folder is unchanged since): the floor holds there too.
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 2})
    ahead = faked_clock.run("2099-01-01 00:00:00", w.argv(), env=w.env(),
                            capture_output=True, text=True, timeout=60)
    assert ahead.returncode == 0, ahead.stderr
    time.sleep(0.05)                    # past the file system's clock grain
    assert w.run().returncode == 0
    first, second = (e["run_id"] for e in w.events("start"))
    assert first.startswith("20990101T00000") and second > first
    assert [d.name for d in w.run_dirs()] == [first, second]
    assert (w.log_dir / ".last-run").read_text().split()[:2] == [second, "2"]


@pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime")
def test_a_run_killed_after_the_clock_stepped_back_is_not_outranked(tmp_path: Path) -> None:
    # A run ahead of the clock notes its ID; the clock steps back; the next run is killed
    # once its directory is made (no note of its own). File times come from the stepped
    # clock, so that directory may look older than the note: the run after must still
    # see it, be named after it, and be the one pruning keeps.
    # "up" once the sleep is there: a kill then finds every process of the run
    w = make_job(tmp_path, command='[ -z "${HOLD-}" ] || { sleep 30 & touch "$T/up"; wait; }',
                 env={"T": str(tmp_path)}, logs={"keep_runs": 1})
    ahead = faked_clock.run(time.time() + 600, w.argv(), env={**w.env(), "TZ": "UTC"},
                            capture_output=True, text=True, timeout=60)
    assert ahead.returncode == 0, ahead.stderr
    p = w.popen(env={"HOLD": "1"})
    try:
        wait_for(lambda: (tmp_path / "up").exists(), what="the run to start")
    finally:
        kill_group(p.pid)
        p.communicate()
    assert wait_until_gone(p.pid) == []                  # its command held the lock too
    note = w.log_dir / ".last-run"
    assert note.read_text().split() == ["-"]             # struck out by the run behind it
    # The kernel's clock stepped back with it: the folder's time from that mkdir would be
    # before the note's (faketime moves only the processes' clock, so it is set here).
    before = note.stat().st_mtime_ns - 5 * 10**9
    os.utime(w.log_dir / "runs", ns=(before, before))
    assert w.run().returncode == 0
    ids = [e["run_id"] for e in w.events("start")]
    assert len(ids) == 3 and ids == sorted(ids)          # each named after the one before
    assert [d.name for d in w.run_dirs()] == [ids[2]]    # the last run is the one kept


def test_a_claim_made_while_the_clock_ran_ahead_is_recovered(tmp_path: Path) -> None:
    q = tmp_path / "q"
    claim = q / "processing" / "20990101T000000Z-1"
    claim.mkdir(parents=True)
    (claim / ".claim").write_text("4070908800 1 somehost 20990101T000000Z-1 2\n")
    (claim / ".journal").write_bytes(b"\0ka.json/\0\0sa.json/\0")
    (claim / "a.json").write_text("{}")
    w = _queue_job(tmp_path, "true", stale_after="1h")
    assert w.run().returncode == 0
    [rec] = w.events("recover")
    assert (rec["item"], rec["state"], rec["attempt"]) == ("a.json", "started", 1)
    assert _files(q / "processed") == ["a.json"] and _files(q / "processing") == []


# -- the environment --------------------------------------------------------------------------

@pytest.mark.parametrize("text", ['TOKEN="hunter2-tail\nOTHER=1\n', "TOKEN=hunter2 secret-tail\n"])
def test_an_env_file_that_fails_to_source_is_exit_78_and_quotes_nothing(
        tmp_path: Path, text: str) -> None:
    env = tmp_path / "secret.env"
    env.write_text(text)
    w = make_job(tmp_path, command='touch "$T/ran"', env={"T": str(tmp_path)}, env_file=str(env))
    r = w.run("--cron")
    assert r.returncode == 78
    assert not (tmp_path / "ran").exists()
    log = (w.log_dir / "cron.log").read_text()
    assert "failed to load" in log and "tail" not in log and "hunter2" not in log
    [e] = w.events("precondition")
    assert e["what"] == "env_file"


@pytest.mark.parametrize("key,why", [
    *[(k, "runtime") for k in ("sg_lock_dir", "sg_events", "sg_job", "IFS", "SECONDS")],
    # GLOBIGNORE, say, turned on dotglob in the wrapper: its queue claimed hidden files;
    # FUNCNEST=1 stopped it before any record; UID and RANDOM never reached the command.
    *[(k, "bash sets or acts on itself") for k in (
        "GLOBIGNORE", "SHELLOPTS", "POSIXLY_CORRECT", "TMOUT", "FUNCNEST", "EXECIGNORE",
        "RANDOM", "UID", "SHLVL", "_")],
])
def test_runtime_and_bash_names_are_refused_as_env_keys(tmp_path: Path, key: str,
                                                        why: str) -> None:
    text = f'[jobs.x]\ncommand = ["true"]\nschedule = "@daily"\nenv = {{ {key} = "/tmp/evil" }}\n'
    with pytest.raises(ConfigError) as exc:
        loads(text, tmp_path / "jobs.toml")
    [problem] = exc.value.problems
    assert problem.where == "jobs.x.env" and key in problem.message
    assert why in problem.message


def test_a_log_folder_that_cannot_be_made_is_said_once(tmp_path: Path) -> None:
    # Its precondition event cannot be written either: no second message for that.
    (tmp_path / "file").write_text("")
    w = make_job(tmp_path, command=["true"], log_root=str(tmp_path / "file" / "logs"))
    r = w.run()
    assert r.returncode == 78
    assert "could not write the run records" not in r.stderr
    assert "Not a directory" not in r.stderr, r.stderr


@pytest.mark.macos
def test_a_processing_folder_linked_to_another_file_system_is_refused(tmp_path: Path) -> None:
    # The claim's mv across file systems is a copy: two runs could both get one file.
    other = Path(tempfile.mkdtemp(dir=second_fs(tmp_path)))
    try:
        w = _queue_job(tmp_path, "exit 0")
        fill_inbox(tmp_path / "q/inbox", ["a.json"])
        (other / "processing").mkdir()
        (tmp_path / "q/processing").symlink_to(other / "processing")
        r = w.run()
        assert r.returncode == 78 and "processing is on another file system" in r.stderr
        assert _files(tmp_path / "q/inbox") == ["a.json"]
    finally:
        shutil.rmtree(other)


@pytest.mark.macos
@pytest.mark.parametrize("where", ["events", "manifest"])
def test_records_that_cannot_be_written_make_the_run_exit_74(tmp_path: Path, where: str) -> None:
    # The command runs, but a run without its records is not a good one. Said once, on
    # stderr. events.jsonl: a full disk (/dev/full: every write is ENOSPC). The manifest:
    # made immutable by the command (a symlink or FIFO there would just be replaced).
    w = make_job(tmp_path, command=["sh", "-c", f"echo ran >>{tmp_path}/ran"])
    assert w.run().returncode == 0
    if where == "events":
        (w.log_dir / "events.jsonl").unlink()
        (w.log_dir / "events.jsonl").symlink_to("/dev/full")
    else:
        probe = tmp_path / "probe"
        probe.write_text("")
        if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
        subprocess.run(["chattr", "-i", str(probe)], check=True)
        w = make_job(tmp_path, command=["sh", "-c", f'echo ran >>{tmp_path}/ran; '
                     'chattr +i "$SCHEDGEN_ARTIFACT_DIR/schedgen-manifest.json"'])
    try:
        r = w.run()
    finally:
        subprocess.run(f"chattr -i {w.log_dir}/runs/*/schedgen-manifest.json", shell=True,
                       capture_output=True)
    assert r.returncode == 74, r.stderr
    assert r.stderr.count("could not write the run records") == 1
    assert (tmp_path / "ran").read_text().count("ran") == 2


@pytest.mark.parametrize("what", ["fifo", "symlink"])
def test_a_manifest_the_command_replaced_is_written_afresh(tmp_path: Path, what: str) -> None:
    # A FIFO would hang the run with its lock held; a symlink would be written through.
    target = tmp_path / "elsewhere"
    target.write_text("keep me\n")
    make = 'mkfifo "$d"' if what == "fifo" else f'ln -s {target} "$d"'
    w = make_job(tmp_path, command=["sh", "-c", 'd="$SCHEDGEN_ARTIFACT_DIR/schedgen-manifest.json"; '
                                    f'rm -f "$d"; {make}'])
    r = w.run(timeout=30)
    assert r.returncode == 0, r.stderr
    [m] = w.log_dir.glob("runs/*/schedgen-manifest.json")
    assert not m.is_symlink() and json.loads(m.read_text())["outcome"] == "ok"
    assert target.read_text() == "keep me\n"


def test_a_queue_item_done_on_a_full_disk_is_processed_and_the_run_says_74(tmp_path: Path) -> None:
    w = _queue_job(tmp_path, "exit 0", batch=0)
    fill_inbox(tmp_path / "q/inbox", ["a.json", "b.json"])
    w.log_dir.mkdir(parents=True, exist_ok=True)
    (w.log_dir / "events.jsonl").symlink_to("/dev/full")
    r = w.run()
    assert r.returncode == 74 and "could not write the run records" in r.stderr
    assert _files(tmp_path / "q/processed") == ["a.json", "b.json"]   # moved all the same
    assert _files(tmp_path / "q/inbox") == []


def test_a_job_name_is_written_into_events_as_json(tmp_path: Path) -> None:
    w = make_job(tmp_path, "odd_name-1", command=["true"])
    assert w.run().returncode == 0
    assert {e["job"] for e in w.events()} == {"odd_name-1"}


@pytest.mark.parametrize("what", ["fifo", "foreign"])
def test_a_keep_name_that_is_no_plain_file_of_ours_is_refused(tmp_path: Path, what: str) -> None:
    # A FIFO would hang the open for ever; a file of someone else's would let them hold it.
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0
    keep = tmp_path / "locks" / ".job.lock.keep"
    keep.unlink()
    if what == "fifo":
        os.mkfifo(keep)
    else:
        if os.getuid() != 0:
            pytest.skip("needs root to give the file away")
        keep.write_text("")
        os.chown(keep, 4002, 4002)
    r = w.run(timeout=20)
    assert r.returncode == 78 and "not a plain file of this user" in r.stderr


def test_a_lock_file_linked_to_another_file_is_refused(tmp_path: Path) -> None:
    # Names put in place while the folder was open (a hard link to another file of ours,
    # which macOS allows anyone to make) survive a later chmod 700: the extra name shows.
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("config\n")
    locks = tmp_path / "locks"
    for name in ("job.lock", ".job.lock.keep"):
        (locks / name).unlink()
        os.link(victim, locks / name)
    r = w.run()
    assert r.returncode == 78 and "more names than its own two" in r.stderr
    assert victim.read_text() == "config\n"


def test_a_mkdir_killed_once_it_made_the_run_directory_leaves_no_empty_one(
        tmp_path: Path) -> None:
    # A signal to the whole process group (Ctrl-C in the foreground, a supervisor) can
    # kill mkdir after it made the directory: the run must take that one, not name
    # another (-0002) and leave it empty.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "mkdir").write_text('#!/bin/bash\n/bin/mkdir "$@" || exit\n'
                                'case "$*" in */runs/*) kill -INT $$ ;; esac\n')
    (shim / "mkdir").chmod(0o755)
    w = make_job(tmp_path, command=["true"], path=[str(shim), *SYSTEM_PATH])
    for _ in range(2):                                   # without runs/, then with it
        r = w.run()
        assert r.returncode == 0, r.stderr
    dirs = w.run_dirs()
    assert [d.name for d in dirs] == [e["run_id"] for e in w.events("start")]
    assert all((d / "schedgen-manifest.json").exists() for d in dirs) and len(dirs) == 2
    assert not any(d.name.endswith("-0002") for d in dirs)


def _run_with_mkdir_once(tmp_path: Path, once: str) -> Wrapped:
    """One run of a plain job (runs/ there) with a stand-in mkdir that, the first time it
    is to make a run directory, first runs the bash text ($$ its own pid, "$@" its
    arguments), then calls /bin/mkdir. The run must still exit 0."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "mkdir").write_text(f'#!/bin/bash\ncase "$*" in */runs/*) [ -e "{tmp_path}/once" ] || '
                                f'{{ touch "{tmp_path}/once"; {once}; }} ;; esac\n'
                                'exec /bin/mkdir "$@"\n')
    (shim / "mkdir").chmod(0o755)
    w = make_job(tmp_path, command=["true"], path=[str(shim), *SYSTEM_PATH])
    (w.log_dir / "runs").mkdir(parents=True)
    r = w.run()
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "once").exists()
    return w


def test_a_mkdir_killed_before_it_made_the_run_directory_is_tried_again(tmp_path: Path) -> None:
    # Not a precondition failure (exit 78): the name is still free, so it is made again.
    w = _run_with_mkdir_once(tmp_path, "kill -TERM $$")
    [d] = w.run_dirs()
    assert (d / "schedgen-manifest.json").exists() and d.name == w.events("start")[0]["run_id"]


def test_a_run_directory_another_process_made_first_is_not_shared(tmp_path: Path) -> None:
    # Two runs of one pid and second (pid namespaces sharing a log folder): the one whose
    # mkdir finds the name taken goes on under the next name, not into the other's.
    w = _run_with_mkdir_once(tmp_path, '/bin/mkdir "$@"')
    other, ours = w.run_dirs()
    assert ours.name == f"{other.name}-0002" == w.events("start")[0]["run_id"]
    assert not (other / "schedgen-manifest.json").exists() and (ours / "schedgen-manifest.json").exists()


def test_a_queue_run_directory_another_process_made_first_is_not_shared(tmp_path: Path) -> None:
    # The queue makes its run directories ahead, several with one mkdir. One of the names
    # taken meanwhile (by a worker of the same pid in another pid namespace): none of the
    # batch is used, and every item still gets a directory of its own.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "mkdir").write_text(
        f'#!/bin/bash\ncase "$#:$2" in [2-9]:*/runs/*|[1-9][0-9]:*/runs/*) ;; *) exec /bin/mkdir "$@" ;; esac\n'
        f'if [ ! -e "{tmp_path}/once" ]; then\n'
        f'  echo "${{2##*/}}" >"{tmp_path}/once"; /bin/mkdir "$2"\nfi\n'
        'exec /bin/mkdir "$@"\n')
    (shim / "mkdir").chmod(0o755)
    names = [f"{i:02d}.json" for i in range(40)]
    w = make_job(tmp_path, command=["true"], path=[str(shim), *SYSTEM_PATH], lock=False,
                 queue=queue_fields(tmp_path, batch=0))
    fill_inbox(tmp_path / "q" / "inbox", names)
    (w.log_dir / "runs").mkdir(parents=True)
    r = w.run()
    assert r.returncode == 0, r.stderr
    if not (tmp_path / "once").exists():
        pytest.skip("no two run directories were made at once (each item in its own second)")
    taken = (tmp_path / "once").read_text().strip()
    ids = [e["run_id"] for e in w.events("start")]
    assert len(ids) == 40 == len(set(ids)) and taken not in ids
    with_manifest = {d.name for d in w.run_dirs() if (d / "schedgen-manifest.json").exists()}
    assert with_manifest == set(ids)
    assert sorted(p.name for p in (tmp_path / "q" / "processed").iterdir()) == names
