"""The runtime's functions, sourced straight from the runtime (templates/runtime/) and driven one
by one: run IDs, the claim, the journal, recovery, pruning, the lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest

from schedgen.render.artifacts import runtime_text
from tests.wrapper_kit import BASH, attempts_of, file_id

SETTINGS = """
set -u
sg_api=1 sg_job=job sg_log_dir=$T/logs/job sg_lock_dir=$T/locks sg_lock_name=job
sg_lock_wait=0 sg_busy_exit=75 sg_timeout=0 sg_env_file='' sg_working_dir='' sg_prog=''
sg_smoke_prog='' sg_has_smoke=0 sg_bash_command='' sg_max_size=1000000 sg_keep=2
sg_keep_runs=3 sg_rotate_every=1 sg_inbox=$T/q/inbox sg_processing=$T/q/processing
sg_processed=$T/q/processed sg_failed=$T/q/failed sg_pattern='*.json' sg_batch=0
sg_stale_after=1 sg_max_attempts=3
sg_env() { :; }
sg_command() { ${sg_exec-} true; }
sg_smoke_command() { :; }
"""


def bash_with_runtime(tmp_path: Path, snippet: str) -> str:
    """A bash script: the settings of a queue job under tmp_path, the runtime sourced,
    sg_init done, then snippet. $T is tmp_path."""
    runtime = tmp_path / "runtime.bash"
    runtime.write_text(runtime_text())
    for d in ("logs/job", "q/inbox", "q/processing/.attempts", "q/processed", "q/failed"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    return (f"T={tmp_path}\nexport T\n{SETTINGS}\n. {runtime}\nsg_init\n"
            + textwrap.dedent(snippet))


def sh(tmp_path: Path, snippet: str, **env: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([BASH, "-c", bash_with_runtime(tmp_path, snippet)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, **env})
    assert "unbound variable" not in r.stderr, r.stderr
    return r


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


# -- run IDs -----------------------------------------------------------------------------

def test_run_ids_are_unique_within_a_second_and_sort_as_strings(tmp_path: Path) -> None:
    r = sh(tmp_path, """
        sg_now
        for i in 1 2 3 4 5 6 7 8 9 10 11; do sg_new_id; echo "$sg_run_id"; done
    """)
    ids = r.stdout.split()
    assert len(set(ids)) == 11 and ids == sorted(ids)
    assert ids[1].endswith("-0002") and ids[10].endswith("-0011")


def test_a_run_id_skips_names_that_are_taken(tmp_path: Path) -> None:
    r = sh(tmp_path, """
        sg_now
        mkdir -p "$sg_runs/$sg_stamp-$sg_idpid" "$sg_processing/$sg_stamp-$sg_idpid-0002"
        sg_new_id; echo "$sg_run_id"
    """)
    assert r.stdout.strip().endswith("-0003")


def test_bash_s_mkdir_takes_the_next_name_when_one_is_taken_and_stays_off(tmp_path: Path) -> None:
    if not Path("/usr/lib/bash/mkdir").exists():
        pytest.skip("bash's loadable builtins are not installed")
    r = sh(tmp_path, """
        PATH=/usr/bin:/bin
        sg_builtins; echo "loaded $sg_lb $(type -t mkdir)"
        sg_now; sg_new_id; mkdir -p "$sg_runs/$sg_run_id"
        sg_run_dir_make; echo "$sg_run_id $(type -t mkdir)"
    """)
    loaded, made = r.stdout.splitlines()
    assert loaded == "loaded 1 file"                      # loaded, but off between calls
    run_id, kind = made.split()
    assert run_id.endswith("-0002") and kind == "file"
    assert (tmp_path / "logs/job/runs" / run_id).is_dir()


def test_run_ids_never_sort_before_the_newest_run_dir(tmp_path: Path) -> None:
    (tmp_path / "logs/job/runs/20990101T235959Z-5").mkdir(parents=True)
    r = sh(tmp_path, 'sg_now; sg_id_floor_set; sg_new_id; echo "$sg_run_id $sg_stamp"')
    run_id, stamp = r.stdout.split()
    assert run_id.startswith("20990102T000000Z-") and not stamp.startswith("2099")


def _plain(snippet: str) -> str:
    """The snippet as a plain job's (no queue), under its lock."""
    return "sg_inbox=''\n" + textwrap.dedent(snippet)


PAST = 1700000000  # a time the note was written at, before now


def test_a_locked_plain_run_takes_the_floor_and_count_from_last_run(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    (runs / "20270101T000000Z-5").mkdir(parents=True)  # listed, this would be the floor
    state = tmp_path / "logs/job/.last-run"
    state.write_text(f"{f'20990101T235959Z-7 41 {PAST}':<63}\n")
    t = runs.stat().st_mtime
    os.utime(state, (t + 1, t + 1))                      # written after the folder changed
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; sg_new_id; echo "$sg_run_id $sg_nruns"'))
    run_id, count = r.stdout.split()
    assert run_id > "20990101T235959Z-7" and count == "41"
    assert run_id[:16] in ("20990101T235959Z", "20990102T000000Z")


def test_last_run_is_not_trusted_once_the_runs_folder_changed(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    runs.mkdir(parents=True)
    state = tmp_path / "logs/job/.last-run"
    state.write_text(f"{f'20990101T235959Z-7 41 {PAST}':<63}\n")
    t = state.stat().st_mtime
    (runs / "20270101T000000Z-5").mkdir()
    os.utime(runs, (t + 1, t + 1))                       # a directory made (or removed) since
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"'))
    assert r.stdout.split() == ["20270101T000000Z", "1"]
    same = state.stat().st_mtime_ns
    os.utime(runs, ns=(same, same))                      # the same time: a change too
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"'))
    assert r.stdout.split() == ["20270101T000000Z", "1"]


def test_a_plain_run_in_the_second_of_a_run_whose_name_sorts_after_its_own_goes_after_it(
        tmp_path: Path) -> None:
    # Names of one second sort by pid as text ("-99999999" after any pid here): a run
    # that came later must still sort later, so it is named a second after.
    runs = tmp_path / "logs/job/runs"
    runs.mkdir(parents=True)
    r = sh(tmp_path, _plain("""
        sg_now
        mkdir "$sg_runs/$sg_stamp-99999999"
        sg_id_floor_set; sg_new_id; echo "$sg_stamp-99999999 $sg_run_id"
    """))
    newest, ours = r.stdout.split()
    assert ours > newest and _second_after(newest, ours)
    # From .last-run the same (the folder unchanged since the note).
    state = tmp_path / "logs/job/.last-run"
    r = sh(tmp_path, _plain("""
        sg_now
        printf '%-63s\\n' "$sg_stamp-99999999 1 $sg_epoch" >"$sg_last_run"
        touch -d @$((sg_epoch + 2)) "$sg_last_run"
        sg_id_floor_set; sg_new_id; echo "$sg_stamp-99999999 $sg_run_id $sg_nruns"
    """))
    newest, ours, count = r.stdout.split()
    assert ours > newest and _second_after(newest, ours) and count == "1" and state.exists()


def _second_after(a: str, b: str) -> bool:
    at = [datetime.strptime(x[:16], "%Y%m%dT%H%M%SZ") for x in (a, b)]
    return (at[1] - at[0]).total_seconds() == 1


def test_a_plain_run_whose_clock_is_behind_stays_in_the_newest_runs_second(
        tmp_path: Path) -> None:
    # "-0000001" sorts before any other pid: the run goes in that second, not the next, so
    # that runs while the clock is behind do not step a second further each time.
    (tmp_path / "logs/job/runs/20990101T000000Z-0000001").mkdir(parents=True)
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; sg_new_id; echo "$sg_run_id"'))
    assert r.stdout.strip().startswith("20990101T000000Z-")
    assert r.stdout.strip() > "20990101T000000Z-0000001"


def test_runs_of_one_second_after_a_step_do_not_step_again_one_by_one(tmp_path: Path) -> None:
    # Five runs, one after another, all in the same second S (the clock is set), behind a
    # name that sorts after theirs: the first steps to S+1, the next ones stay there (at
    # most one more step, where a pid gains a digit), not S+2, S+3...
    runs = tmp_path / "logs/job/runs"
    (runs / "20261201T120000Z-99999999").mkdir(parents=True)
    made = []
    for _ in range(5):
        r = sh(tmp_path, _plain("""
            sg_now; sg_stamp=20261201T120000Z
            sg_id_floor_set; sg_new_id; mkdir "$sg_runs/$sg_run_id"; echo "$sg_run_id"
        """))
        made.append(r.stdout.strip())
    assert made == sorted(made) and made[0] > "20261201T120000Z-99999999"
    assert {m[:16] for m in made} <= {"20261201T120001Z", "20261201T120002Z"}


def test_a_pid_that_comes_back_in_the_same_second_takes_the_next_suffix(tmp_path: Path) -> None:
    # As in containers that share a log folder, each wrapper pid 1: S-1, S-1-0002, then
    # S-1-0003, which sorts after them (no step to the next second).
    r = sh(tmp_path, _plain("""
        sg_now
        mkdir -p "$sg_runs/$sg_stamp-$sg_idpid" "$sg_runs/$sg_stamp-$sg_idpid-0002"
        sg_id_floor_set; sg_new_id; echo "$sg_stamp-$sg_idpid-0003 $sg_run_id"
    """))
    want, got = r.stdout.split()
    assert got == want


def test_queue_runs_of_one_second_are_not_named_a_second_later(tmp_path: Path) -> None:
    # Workers run side by side: their order within a second is the pids', as it may be.
    (tmp_path / "logs/job/runs").mkdir(parents=True)
    r = sh(tmp_path, """
        sg_now
        mkdir "$sg_runs/$sg_stamp-99999999"
        sg_id_floor_set; sg_new_id; echo "$sg_stamp $sg_run_id"
    """)
    stamp, ours = r.stdout.split()
    assert ours.startswith(f"{stamp}-")


def test_a_plain_run_notes_its_id_and_the_count_after_pruning(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    for k in range(6):                                   # keep_runs 3: the batch limit is 3
        d = runs / f"2026010{k}T000000Z-9"
        d.mkdir(parents=True)
        (d / "schedgen-manifest.json").write_text('{"outcome": "ok", "smoke": false}\n')
    r = sh(tmp_path, _plain("""
        sg_now; sg_id_floor_set; sg_new_id; sg_run_dir_make; sg_last_id=$sg_run_id
        sg_nruns=$((sg_nruns + 1))
        sg_prune; sg_last_run_note; echo "$sg_run_id"
    """))
    line = (tmp_path / "logs/job/.last-run").read_text()
    run_id, count, at = line.split()
    assert len(line) == 64 and [run_id, count] == [r.stdout.strip(), "3"]
    assert abs(int(at) - time.time()) < 60                # when it was written
    assert len(list(runs.iterdir())) == 3


def test_a_clock_behind_the_note_strikes_it_out_and_lists_the_folder(tmp_path: Path) -> None:
    # File times come from that clock too: once it stepped back, a directory made since
    # could look older than the note.
    runs = tmp_path / "logs/job/runs"
    (runs / "20270101T000000Z-5").mkdir(parents=True)
    state = tmp_path / "logs/job/.last-run"
    ahead = int(time.time()) + 3600
    state.write_text(f"{f'20990101T235959Z-7 41 {ahead}':<63}\n")
    t = runs.stat().st_mtime
    os.utime(state, (t + 1, t + 1))
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"'))
    assert r.stdout.split() == ["20270101T000000Z", "1"] and r.stderr == ""
    assert state.read_text().split() == ["-"]


@pytest.mark.parametrize("bad", ["20990101T235959Z-7 08 1700000000", "20990101T235959Z-7 4x 17",
                                 "20990101T235959Z-7 41", "- 41 1700000000", "", "x" * 200])
def test_a_note_that_is_not_ours_is_passed_over(tmp_path: Path, bad: str) -> None:
    runs = tmp_path / "logs/job/runs"
    (runs / "20270101T000000Z-5").mkdir(parents=True)
    state = tmp_path / "logs/job/.last-run"
    state.write_text(bad + "\n")
    t = runs.stat().st_mtime
    os.utime(state, (t + 1, t + 1))
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"'))
    assert r.stdout.split() == ["20270101T000000Z", "1"] and r.stderr == ""


def test_a_fifo_in_place_of_the_note_is_never_opened(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    (runs / "20270101T000000Z-5").mkdir(parents=True)
    os.mkfifo(tmp_path / "logs/job/.last-run")            # an open of it would hang
    r = sh(tmp_path, _plain("""
        sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"
        sg_last_id=20270101T000001Z-6; sg_last_run_note; echo noted
    """))
    assert r.stdout.split() == ["20270101T000000Z", "1", "noted"] and r.stderr == ""


def test_a_dangling_symlink_first_in_runs_does_not_stop_pruning(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    runs.mkdir(parents=True)
    (runs / "+latest").symlink_to(tmp_path / "nowhere")  # sorts before the run IDs
    for k in range(6):
        d = runs / f"2026010{k}T000000Z-9"
        d.mkdir()
        (d / "schedgen-manifest.json").write_text('{"outcome": "ok", "smoke": false}\n')
    r = sh(tmp_path, _plain('sg_now; sg_id_floor_set; echo "$sg_id_floor $sg_nruns"; sg_prune'))
    assert r.stdout.split() == ["20260105T000000Z", "7"]
    assert sorted(p.name for p in runs.iterdir() if p.is_dir()) == [
        "20260103T000000Z-9", "20260104T000000Z-9", "20260105T000000Z-9"]


# -- the claim and the journal ----------------------------------------------------------------

def test_a_claim_takes_a_chunk_with_one_mv_and_notes_it(tmp_path: Path) -> None:
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("b.json", "a.json", "c.txt", "d.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    r = sh(tmp_path, """
        sg_claim_chunk
        echo "$sg_chunk_n ${sg_chunk[*]}"
        cat "$sg_claim_dir/.claim"
        ls -A "$sg_claim_dir"
    """)
    lines = r.stdout.splitlines()
    assert lines[0] == "1 a.json"  # a quarter of the 3 candidates, in byte order
    epoch, pid, _host, claim_id, kind = lines[1].split()
    assert int(epoch) > 0 and claim_id.endswith(pid) or f"-{pid}-" in claim_id
    assert kind == "2"                              # its journal names what it claims
    assert sorted(lines[2:]) == [".claim", ".journal", "a.json"]
    claim = tmp_path / "q/processing" / claim_id
    assert (claim / ".journal").read_bytes() == b"\0ka.json/\0"
    assert _files(tmp_path / "q/inbox") == ["b.json", "c.txt", "d.json"]


# mv as another worker racing for the first name: it takes a.json first.
_RIVAL = '''
mv() { case $* in *"$sg_inbox/a.json"*) command mv "$sg_inbox/a.json" "$T/rival.json" ;; esac; command mv "$@"; }
'''


def test_a_name_another_worker_took_is_struck_out_and_a_file_left_under_it_is_not_an_item(
        tmp_path: Path) -> None:
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("a.json", "b.json", "c.json", "d.json", "e.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    r = sh(tmp_path, _RIVAL + """
        sg_cands=( "$sg_inbox"/*.json ); sg_nc=${#sg_cands[@]}; sg_ci=0
        sg_claim_chunk
        echo "$sg_chunk_n ${sg_chunk[0]}"
        echo "$sg_claim_dir"
        : >"$sg_claim_dir/a.json"      # b's command writes a file named like the other item
    """)
    count, claim_dir = r.stdout.splitlines()
    assert count == "1 b.json"
    claim = Path(claim_dir)
    assert (claim / ".journal").read_bytes() == b"\0ka.json/\0\0kb.json/\0\0xa.json/\0"
    # The run dies; a later one recovers its claim by the journal.
    (claim / ".claim").write_text("0" + (claim / ".claim").read_text()[10:])
    r = sh(tmp_path, "sg_now; sg_recover")
    assert r.returncode == 0, r.stderr
    events = [json.loads(x) for x in (tmp_path / "logs/job/events.jsonl").read_text().splitlines()]
    assert {e["item"]: (e["state"], e["item_to"]) for e in events} == {
        "a.json": ("foreign", "failed"), "b.json": ("claimed", "inbox")}
    assert _files(tmp_path / "q/failed") == ["a.json"]
    assert _files(tmp_path / "q/inbox") == ["b.json", "c.json", "d.json", "e.json"]


def test_a_journal_that_cannot_be_opened_stops_the_claim_before_anything_moves(
        tmp_path: Path) -> None:
    # Not only a full disk: a journal that cannot be opened at all (here a folder in its
    # place; root writes through modes). `! { ...; } >>journal` would have passed it.
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("a.json", "b.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    r = sh(tmp_path, """
        sg_now; sg_open_claim; rm "$sg_journal"; mkdir "$sg_journal"
        sg_cands=( "$sg_inbox"/*.json ); sg_nc=${#sg_cands[@]}; sg_ci=0
        sg_claim_chunk; echo "rc=$? n=$sg_chunk_n bad=$sg_jbad"
    """)
    assert r.stdout.split() == ["rc=1", "n=0", "bad=1"]
    assert _files(tmp_path / "q/inbox") == ["a.json", "b.json"]


def test_a_round_that_others_took_whole_leaves_no_name_in_the_next_rounds_records(
        tmp_path: Path) -> None:
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("a.json", "b.json", "c.json", "d.json", "e.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    # The rival takes the whole first round (a, b); the second round is c alone.
    r = sh(tmp_path, """
        mv() { if [ ! -e "$T/took" ]; then : >"$T/took"; command mv "$sg_inbox/a.json" "$sg_inbox/b.json" "$T/"; fi; command mv "$@"; }
        sg_cands=( "$sg_inbox"/*.json ); sg_nc=${#sg_cands[@]}; sg_ci=0
        sg_claim_chunk
        echo "$sg_chunk_n ${sg_chunk[0]}"
        echo "$sg_journal"
    """)
    count, journal = r.stdout.splitlines()
    assert count == "1 c.json"
    assert Path(journal).read_bytes() == b"\0ka.json/\0\0kb.json/\0\0xa.json/\0\0xb.json/\0\0kc.json/\0"


def test_names_struck_out_then_claimed_again_are_items(tmp_path: Path) -> None:
    # k, x, k: the name came back to the inbox and this claim took it the second time.
    dead = tmp_path / "q/processing/20000101T000000Z-1"
    dead.mkdir(parents=True)
    (dead / ".claim").write_text("0 1 h 20000101T000000Z-1 2\n")
    (dead / ".journal").write_bytes(b"\0ka.json/\0kb.json/\0\0xa.json/\0\0kab.json/\0ka.json/\0")
    for n in ("a.json", "b.json", "ab.json"):
        (dead / n).write_text("{}")
    r = sh(tmp_path, "sg_now; sg_recover")
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "q/inbox") == ["a.json", "ab.json", "b.json"]
    assert _files(tmp_path / "q/failed") == []


def test_a_claim_that_cannot_strike_out_a_name_sends_its_chunk_back_and_claims_no_more(
        tmp_path: Path) -> None:
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("a.json", "b.json", "c.json", "d.json", "e.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    # The journal can take the k records but not the x (in place of a full disk: root
    # writes through modes, so the journal becomes a folder as the move begins).
    r = sh(tmp_path, _RIVAL.replace('command mv "$@"; }',
                                    'command mv "$sg_journal" "$T/j"; mkdir "$sg_journal"; command mv "$@"; }') + """
        sg_cands=( "$sg_inbox"/*.json ); sg_nc=${#sg_cands[@]}; sg_ci=0
        sg_claim_chunk; echo "rc=$? n=$sg_chunk_n bad=$sg_jbad"
    """)
    assert r.stdout.split() == ["rc=1", "n=0", "bad=1"]
    assert "could not write" in r.stderr
    assert _files(tmp_path / "q/inbox") == ["b.json", "c.json", "d.json", "e.json"]

def test_a_keeper_that_cannot_make_the_output_files_runs_nothing_and_says_74(tmp_path: Path) -> None:
    # (A full disk, or no inodes left, after the run directory was made.) Not the
    # command's failure: it never ran.
    r = sh(tmp_path, 'sg_command() { echo ran >"$T/ran"; }; sg_item_name=""; '
                     'sg_run_dir=$T/gone; (sg_keeper); echo "rc=$?"')
    assert r.stdout.split() == ["rc=74"]
    assert "cannot create stdout.log and stderr.log" in r.stderr
    assert not (tmp_path / "ran").exists()


# -- failed-attempt counts ---------------------------------------------------------------

def _count_file(tmp_path: Path, name: str, count: int, of: Path) -> None:
    """A count kept for `name`: `count` failed attempts of the file `of` (by its inode and
    size)."""
    d = tmp_path / "q/processing/.attempts"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(f"{count} {file_id(of)}\n")
    st = of.stat()
    os.utime(d / name, ns=(st.st_atime_ns, st.st_mtime_ns))   # as sg_move writes it


def _back(tmp_path: Path, snippet: str) -> subprocess.CompletedProcess[str]:
    # a.json failed in claim c (its journal says so); the inbox holds what the test put.
    (tmp_path / "q/processing/c").mkdir(parents=True)
    (tmp_path / "q/processing/c/a.json").write_text("mine")
    (tmp_path / "q/processing/c/.journal").write_bytes(b"\0ka.json/\0\0sa.json/\0\0fa.json/\0")
    return sh(tmp_path, 'sg_run_id=20260101T000000Z-7\n' + snippet
              + '; echo "to=$sg_item_to moved=${sg_moved##*/}"')


def _taken(tmp_path: Path, count: int = 0) -> None:
    """A new a.json in the inbox (with failed attempts of its own, if given)."""
    (tmp_path / "q/inbox").mkdir(parents=True)
    (tmp_path / "q/inbox/a.json").write_text("new")
    if count:
        _count_file(tmp_path, "a.json", count, tmp_path / "q/inbox/a.json")


def _counts(tmp_path: Path) -> dict[str, str]:
    """Each kept count, checked to be the count of the inbox file of its name."""
    d = tmp_path / "q/processing/.attempts"
    return {p.name: attempts_of(tmp_path / "q", p.name) for p in d.iterdir()} if d.exists() else {}


NEW_NAME = "a.20260101T000000Z-7.json"
MINE = 'sg_count_of "$T/q/processing/c/a.json" a.json; '


def test_a_count_is_the_files_not_the_names(tmp_path: Path) -> None:
    # A count under a.json that is another file's (by its inode) is not this one's.
    _taken(tmp_path, count=2)
    (tmp_path / "q/processing/c").mkdir(parents=True)
    (tmp_path / "q/processing/c/a.json").write_text("mine")
    r = sh(tmp_path, 'for f in "$T/q/inbox/a.json" "$T/q/processing/c/a.json"; do '
                     'sg_count_of "$f" a.json; echo "$sg_attempt $sg_cnt_mine"; done')
    assert r.stdout.splitlines() == ["2 1", "0 0"]


@pytest.mark.parametrize(("shift", "mine"), [(0, "2 1"), (5, "0 0"), (-5, "0 0"), (3600, "0 0")])
def test_a_count_is_of_the_file_with_its_inode_and_modification_time(
        tmp_path: Path, shift: int, mine: str) -> None:
    # Same inode (a file system hands a freed inode out again at once) but another
    # modification time, later, earlier (copied with its times from an older file) or in
    # the future: a new file, which starts from 0. Its own count goes with it.
    _taken(tmp_path, count=2)
    item = tmp_path / "q/inbox/a.json"
    t = item.stat().st_mtime_ns + shift * 10**9
    os.utime(item, ns=(t, t))
    r = sh(tmp_path, 'sg_count_of "$T/q/inbox/a.json" a.json; echo "$sg_attempt $sg_cnt_mine"')
    assert r.stdout.splitlines() == [mine]


@pytest.mark.parametrize(("text", "mine"), [("new!", "0 0"), ("wen", "2 1")])
def test_a_count_is_of_the_file_with_its_size_too(tmp_path: Path, text: str, mine: str) -> None:
    # A new file given the old one's inode (freed and handed out again) and its time (tar,
    # rsync -t, curl -R keep a producer's times) but other content: told apart by its size.
    # Of the same size it is taken for the same file (docs/wrapper.md says so).
    _taken(tmp_path, count=2)
    item = tmp_path / "q/inbox/a.json"
    st = item.stat()
    with item.open("r+") as f:     # the same inode, as a reused one would be
        f.truncate(0)
        f.write(text)
    os.utime(item, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = sh(tmp_path, 'sg_count_of "$T/q/inbox/a.json" a.json; echo "$sg_attempt $sg_cnt_mine"')
    assert r.stdout.splitlines() == [mine]


def test_a_files_id_is_its_size_in_bytes_whatever_the_jobs_environment(tmp_path: Path) -> None:
    # GNU ls scales its size column by BLOCK_SIZE / LS_BLOCK_SIZE, which a job's env may
    # set (the wrapper exports it into itself): "3.0K" had been no id, so no count.
    f = tmp_path / "item"
    f.write_bytes(b"x" * 3000)
    r = sh(tmp_path, f'sg_ino "{f}"; echo "$sg_i"', BLOCK_SIZE="human-readable",
           LS_BLOCK_SIZE="1K")
    assert r.stdout.split() == [file_id(f)]


def test_an_item_its_command_rewrote_goes_back_with_its_count(tmp_path: Path) -> None:
    # The command replaced its item (sed -i: a new inode, another size) and failed: the
    # count written names the file as it is now, so the next claim takes it.
    c, a = "$T/q/processing/.attempts/a.json", "$T/q/processing/c/a.json"
    r = _back(tmp_path, f'mkdir -p "$T/q/processing/.attempts"; sg_ino "{a}"; printf "1 %s\\n" "$sg_i" >"{c}"; '
              f'touch -r "{a}" "{c}"; ' + MINE + 'echo "was=$sg_attempt"; '
              f'echo rewritten >"$T/new"; mv "$T/new" "{a}"; sg_item_back "{a}" a.json 2 1')
    assert r.stdout.split() == ["was=1", "to=inbox", "moved=a.json"], r.stderr
    assert _counts(tmp_path) == {"a.json": "2"}     # checked against the file's inode and size


def test_a_count_that_cannot_be_written_keeps_the_item_where_it_is(tmp_path: Path) -> None:
    # A full disk as the count is written (/dev/full: every write is ENOSPC): moved back
    # without it, the item would start from 0 again, for ever. It stays in the claim, its
    # attempt journaled, a fault said; a later run counts it.
    (tmp_path / "q/processing/.attempts").mkdir(parents=True)
    (tmp_path / "q/processing/.attempts/a.json").symlink_to("/dev/full")
    r = _back(tmp_path, MINE + 'sg_item_back "$T/q/processing/c/a.json" a.json 2 1; '
              'echo "rc=$? fault=$sg_fault"')
    assert r.stdout.split()[0] == "rc=1" and "fault=1" in r.stdout
    assert "could not write the failed-attempt count of a.json" in r.stderr
    assert (tmp_path / "q/processing/c/a.json").read_text() == "mine"
    assert _files(tmp_path / "q/inbox") == []
    assert not os.path.lexists(tmp_path / "q/processing/.attempts/a.json")


def test_an_item_back_with_a_future_time_keeps_its_count(tmp_path: Path) -> None:
    # Its count takes the item's time, so a clock ahead does not restart it every run.
    (tmp_path / "q/processing/c").mkdir(parents=True)
    item = tmp_path / "q/processing/c/a.json"
    item.write_text("{}")
    t = time.time() + 3600
    os.utime(item, (t, t))
    r = sh(tmp_path, 'sg_item_back "$T/q/processing/c/a.json" a.json 1 1; '
                     'sg_count_of "$T/q/inbox/a.json" a.json; echo "$sg_attempt $sg_cnt_mine"')
    assert r.stdout.splitlines() == ["1 1"]


def test_counts_of_files_that_are_gone_are_swept_and_the_others_kept(tmp_path: Path) -> None:
    for d in ("inbox", "processing/c"):
        (tmp_path / "q" / d).mkdir(parents=True)
    (tmp_path / "q/inbox/a.json").write_text("a")
    (tmp_path / "q/processing/c/b.json").write_text("b")
    _count_file(tmp_path, "a.json", 1, tmp_path / "q/inbox/a.json")
    _count_file(tmp_path, "b.json", 2, tmp_path / "q/processing/c/b.json")
    _count_file(tmp_path, "gone.json", 2, tmp_path / "q/inbox/a.json")   # withdrawn
    _count_file(tmp_path, ".hidden.json", 1, tmp_path / "q/inbox/a.json")
    sh(tmp_path, "sg_counts_sweep")
    assert sorted(p.name for p in (tmp_path / "q/processing/.attempts").iterdir()) == [
        "a.json", "b.json"]


def test_a_claim_reads_the_counts_of_its_items_then(tmp_path: Path) -> None:
    # Read as it claims (under the returns' lock when counts are kept): while an item
    # waits its turn, another item's count may come to be kept under its name.
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in "abcdefgh":
        (tmp_path / f"q/inbox/{n}.json").write_text(n)     # 8 names: a chunk of 2
    _count_file(tmp_path, "a.json", 2, tmp_path / "q/inbox/a.json")
    _count_file(tmp_path, "b.json", 5, tmp_path / "q/inbox/c.json")   # not b's own
    r = sh(tmp_path, 'sg_now; sg_claim_chunk; echo "${sg_chunk[*]}|${sg_chunk_att[*]}|${sg_chunk_mine[*]}"')
    assert r.stdout.split("\n")[0] == "a.json b.json|2 0|1 0", r.stderr

def test_release_returns_a_waiting_item_with_the_count_read_as_it_was_claimed(tmp_path: Path) -> None:
    # a.json waits its turn in the claim; meanwhile another a.json comes back to the inbox
    # with its own count under the name. A stopped run returns ours with ours.
    (tmp_path / "q/inbox").mkdir(parents=True)
    (tmp_path / "q/inbox/a.json").write_text("mine")
    _count_file(tmp_path, "a.json", 1, tmp_path / "q/inbox/a.json")
    r = sh(tmp_path, """
        sg_now; sg_claim_chunk
        echo other >"$T/other"; mv "$T/other" "$T/q/inbox/a.json"
        sg_ino "$T/q/inbox/a.json"; printf '2 %s\\n' "$sg_i" >"$T/q/processing/.attempts/a.json"
        sg_release; echo "${sg_chunk_att[*]}" """)
    assert r.stdout.split() == ["1"], r.stderr
    [back] = [n for n in _files(tmp_path / "q/inbox") if n != "a.json"]
    assert (tmp_path / "q/inbox" / back).read_text() == "mine"
    assert _counts(tmp_path) == {"a.json": "2", back: "1"}

def test_an_item_back_has_its_count_written_and_journaled_before_it_moves(tmp_path: Path) -> None:
    r = _back(tmp_path, MINE + 'sg_item_back "$T/q/processing/c/a.json" a.json 2 1 "$T/q/processing/c/.journal"')
    assert r.stdout.split() == ["to=inbox", "moved=a.json"]
    assert _counts(tmp_path) == {"a.json": "2"}
    assert (tmp_path / "q/processing/c/.journal").read_bytes() == b"\0ka.json/\0\0sa.json/\0\0fa.json/\0\0ca.json/a.json/\0"


@pytest.mark.parametrize(("counted", "count"), [("1", "2"), ("0", "3")])
def test_an_item_back_under_a_new_name_leaves_the_other_files_count_alone(
        tmp_path: Path, counted: str, count: str) -> None:
    _taken(tmp_path, count=1)
    r = _back(tmp_path, MINE + f'sg_item_back "$T/q/processing/c/a.json" a.json {count} {counted}')
    assert r.stdout.split() == ["to=inbox", f"moved={NEW_NAME}"]
    assert _counts(tmp_path) == {"a.json": "1", NEW_NAME: count}
    assert (tmp_path / "q/inbox/a.json").read_text() == "new"


def test_an_item_back_under_a_new_name_takes_its_own_count_off_the_old_one(tmp_path: Path) -> None:
    _taken(tmp_path)
    _back(tmp_path, "")   # the claim only
    _count_file(tmp_path, "a.json", 1, tmp_path / "q/processing/c/a.json")   # ours, under a.json
    r = sh(tmp_path, 'sg_run_id=20260101T000000Z-7; ' + MINE
           + 'sg_item_back "$T/q/processing/c/a.json" a.json 2 1; echo "${sg_moved##*/}"')
    assert r.stdout.split() == [NEW_NAME]
    assert _counts(tmp_path) == {NEW_NAME: "2"}


def test_a_name_taken_in_the_instant_before_the_move_gets_no_count(tmp_path: Path) -> None:
    # A producer drops a.json between sg_move's look and its mv: the count written for
    # a.json is taken back, and the item goes under a new name with it.
    r = _back(tmp_path, """
        mv() { [ -e "$T/dropped" ] || { : >"$T/dropped"; echo new >"$T/q/inbox/a.json"; }; command mv "$@"; }
        sg_item_back "$T/q/processing/c/a.json" a.json 2 1""")
    assert r.stdout.split() == ["to=inbox", f"moved={NEW_NAME}"], r.stderr
    assert _counts(tmp_path) == {NEW_NAME: "2"}
    assert (tmp_path / "q/inbox/a.json").read_text() == "new\n"


def test_an_item_that_cannot_go_back_leaves_no_count(tmp_path: Path) -> None:
    _taken(tmp_path, count=1)
    r = _back(tmp_path, 'mv() { return 1; }; sg_item_back "$T/q/processing/c/a.json" a.json 2 1 || echo stuck')
    assert "stuck" in r.stdout
    assert _counts(tmp_path) == {"a.json": "1"}                 # the inbox file's own
    assert (tmp_path / "q/processing/c/a.json").read_text() == "mine"


def test_a_count_is_dropped_only_while_it_is_still_the_items(tmp_path: Path) -> None:
    _taken(tmp_path, count=1)
    (tmp_path / "q/processing/c").mkdir(parents=True)
    (tmp_path / "q/processing/c/a.json").write_text("mine")
    r = sh(tmp_path, 'sg_count_drop a.json 999999999; ls "$T/q/processing/.attempts"')
    assert r.stdout.split() == ["a.json"]                       # another file's: left
    ino = file_id(tmp_path / "q/inbox/a.json")
    r = sh(tmp_path, f'sg_count_drop a.json {ino}; ls "$T/q/processing/.attempts"')
    assert r.stdout.split() == []


def test_the_journal_reads_done_started_failed_and_counts_written(tmp_path: Path) -> None:
    j = tmp_path / "j"
    # Each record "\0<r>/\0"; one cut short by a full disk ("da.jso", no "/") is none, and
    # does not swallow the next one.
    j.write_bytes(b"\0sa.json/\0\0da.json/\0\0sb b.json/\0\0fb b.json/\0\0cb.1.json/b b.json/\0"
                  b"\0sc.json/\0\0dc.jso\0sd.json/\0\0kd.json/\0")
    r = sh(tmp_path, f'sg_journal_read {j}; echo "$sg_jdone|$sg_jstarted|${{sg_jc[*]}}|$sg_jclaimed"')
    assert r.stdout.splitlines() == [
        "/a.json/|/a.json/b b.json/b b.json/c.json/d.json/|b.1.json/b b.json|/d.json/"]
    # Records without their "/" (all of them cut short) are none.
    j.write_bytes(b"sa.json\0da.json\0cb.1.json/b.json\0\0cc.1.json/c.json/\0")
    r = sh(tmp_path, f'sg_journal_read {j}; echo "$sg_jdone|$sg_jstarted|${{sg_jc[*]}}"')
    assert r.stdout.splitlines() == ["/|/|c.1.json/c.json"]


def test_a_count_without_the_files_id_is_no_ones(tmp_path: Path) -> None:
    _taken(tmp_path)
    d = tmp_path / "q/processing/.attempts"
    d.mkdir(parents=True)
    (d / "a.json").write_text("2\n")
    os.utime(d / "a.json", ns=(0, (tmp_path / "q/inbox/a.json").stat().st_mtime_ns))
    r = sh(tmp_path, 'sg_count_of "$T/q/inbox/a.json" a.json; echo "$sg_attempt $sg_cnt_mine"')
    assert r.stdout.split() == ["0", "0"]


@pytest.mark.parametrize(("pattern", "name", "inbox", "want"), [
    ("*.json", "a.json", 1, "a.T.json"),
    ("*.tar.gz", "a.tar.gz", 1, "a.T.tar.gz"),        # the last extension alone would not match
    ("*.tar.gz", "a.tar.gz", 0, "a.tar.T.gz"),        # processed/ and failed/: no pattern to keep
    ("*-ready", "a-ready", 1, "a.T-ready"),
    ("*.done.json", "x.done.json", 1, "x.T.done.json"),
    ("job-*", "job-1.json", 1, "job-1.T.json"),
    ("a.json", "a.json", 1, ""),                      # no tagged name matches: not moved
])
def test_a_name_taken_in_the_inbox_is_tagged_so_that_it_still_matches_the_pattern(
        tmp_path: Path, pattern: str, name: str, inbox: int, want: str) -> None:
    r = sh(tmp_path, f"sg_pattern='{pattern}'\n"
                     f"if sg_tagged '{name}' .T {inbox}; then echo \"$sg_tn\"; else echo; fi")
    assert r.stdout.splitlines() == [want]


def test_a_tagged_long_name_stays_within_255_bytes_and_matches(tmp_path: Path) -> None:
    name = "x" * 248 + ".tar.gz"
    r = sh(tmp_path, f"sg_pattern='*.tar.gz'\nsg_tagged {name} .20261201T120000Z-99999 1; echo \"$sg_tn\"")
    [got] = r.stdout.splitlines()
    assert len(got) == 255 and got.endswith(".20261201T120000Z-99999.tar.gz")


def test_an_ending_too_long_to_keep_beside_a_tag_gives_no_name(tmp_path: Path) -> None:
    name = "a" + "x" * 249 + ".json"
    pattern = "*" + "x" * 240 + ".json"
    r = sh(tmp_path, f"sg_pattern='{pattern}'\n"
                     f"if sg_tagged {name} .20261201T120000Z-99999 1; then echo \"$sg_tn\"; else echo none; fi")
    assert r.stdout.splitlines() == ["none"] and r.stderr == ""


def test_an_item_whose_move_was_cut_short_tries_its_own_name_again(tmp_path: Path) -> None:
    # mv killed before the rename (a signal to the group): the name is still free, so the
    # item is not given a tagged name it does not need.
    r = sh(tmp_path, """
    : >"$T/a.json"; mkdir -p "$T/to"
    mkdir -p "$T/bin"; printf '#!/bin/sh\\n[ -e "$T/once" ] && exec /bin/mv "$@"; : >"$T/once"; kill -9 $$\\n' >"$T/bin/mv"
    chmod +x "$T/bin/mv"; PATH=$T/bin:$PATH
    sg_run_id=R; sg_move "$T/a.json" "$T/to" && echo "$sg_moved"
    """)
    assert r.stdout.splitlines() == [f"{tmp_path}/to/a.json"]


# A claim holding done items a.json and b.json, journaled by their keepers, and a stand-in
# mv that fails for anything moved into processed/ (and, with FAIL_ALL, for anything).
_FLUSH_SCENE = r"""
mkdir -p "$T/bin"
cat >"$T/bin/mv" <<'MV'
#!/bin/sh
for a; do :; done
[ -z "${FAIL_ALL-}" ] || exit 1
case $a in "$T/q/processed"*) exit 1 ;; esac
exec /bin/mv "$@"
MV
chmod +x "$T/bin/mv"
PATH=$T/bin:$PATH
sg_now; sg_open_claim
: >"$sg_claim_dir/a.json"; : >"$sg_claim_dir/b.json"
printf '\0sa.json/\0\0da.json/\0\0sb.json/\0\0db.json/\0' >"$sg_journal"
done_item() {   # NAME: the next done item waiting for sg_flush
  sg_done[sg_nd]=$1 sg_d_run[sg_nd]=$sg_run_id sg_d_start[sg_nd]=$sg_iso sg_d_fin[sg_nd]=$sg_iso
  sg_d_epoch[sg_nd]=$sg_epoch sg_d_dur[sg_nd]=0 sg_d_att[sg_nd]=1 sg_d_mine[sg_nd]=0
  sg_nd=$((sg_nd + 1))
}
"""


def test_done_items_that_cannot_move_stay_journaled_through_later_flushes(tmp_path: Path) -> None:
    # a is stuck in one flush, b in the next: the second rewrite keeps a's record too, or
    # the run that moves them on would take a for not started and run it again.
    r = sh(tmp_path, _FLUSH_SCENE + """
    done_item a.json; sg_flush; sg_journal_keep
    done_item b.json; sg_flush; sg_journal_keep
    tr '\\0' ' ' <"$sg_journal"; echo; ls -A "$sg_claim_dir"
    """)
    out = r.stdout.splitlines()
    assert out[0].split() == ["ka.json/", "da.json/", "kb.json/", "db.json/"]
    assert ".journal.new" not in out


@pytest.mark.parametrize("how", ["rename fails", "cannot write"])
def test_a_journal_that_cannot_be_rewritten_stays_whole_and_the_run_claims_no_more(
        tmp_path: Path, how: str) -> None:
    # Truncated in place and then written, a kill or a full disk in between would leave
    # the stuck item unjournaled. Now the old journal stays (its records of items gone
    # cannot mislead recovery, since this run claims no more into that claim).
    (tmp_path / "q/inbox").mkdir(parents=True)
    (tmp_path / "q/inbox/c.json").write_text("{}")
    fault = 'export FAIL_ALL=1' if how == "rename fails" else 'mkdir "$sg_journal.new"'
    r = sh(tmp_path, _FLUSH_SCENE + fault + """
    done_item a.json; sg_flush; sg_journal_keep
    unset FAIL_ALL; rmdir "$sg_journal.new" 2>/dev/null
    printf '%s|' "$sg_jbad" "$sg_fault"; tr '\\0' ' ' <"$sg_journal"; echo
    sg_ck=0 sg_chunk_n=0
    if sg_next_item; then echo "claimed $sg_item_name"; else echo "no more"; fi
    """)
    out = r.stdout.splitlines()
    assert out[0].split("|")[:2] == ["1", "1"]
    assert out[0].split("|")[2].split() == ["sa.json/", "da.json/", "sb.json/", "db.json/"]
    assert out[1] == "no more"
    assert "could not write" in r.stderr and "claims no more" in r.stderr
    assert (tmp_path / "q/inbox/c.json").exists()


def test_a_run_that_dies_as_it_forks_its_keeper_leaves_its_item_uncounted(tmp_path: Path) -> None:
    # Killed between the claim and the keeper's first step, the command never started:
    # recovery returns the item as claimed, not as a failed attempt.
    (tmp_path / "q/inbox").mkdir(parents=True)
    (tmp_path / "q/inbox/a.json").write_text("{}")
    r = sh(tmp_path, 'sg_keeper() { kill -KILL "$sg_wrapper_pid"; }; sg_main')
    assert r.returncode == -signal.SIGKILL
    [claim] = [d for d in (tmp_path / "q/processing").iterdir() if d.name != ".attempts"]
    assert (claim / "a.json").exists() and b"sa.json" not in (claim / ".journal").read_bytes()
    (claim / ".claim").write_text("0" + (claim / ".claim").read_text()[10:])   # made long ago
    r = sh(tmp_path, "sg_now; sg_recover; cat $T/logs/job/events.jsonl")
    [rec] = [json.loads(x) for x in r.stdout.splitlines() if '"recover"' in x]
    assert (rec["state"], rec["attempt"], rec["item_to"]) == ("claimed", 0, "inbox")
    assert _files(tmp_path / "q/inbox") == ["a.json"]
    assert not (tmp_path / "q/processing/.attempts/a.json").exists()

def test_recover_follows_the_journal_and_leaves_live_claims_alone(tmp_path: Path) -> None:
    q = tmp_path / "q"
    dead = q / "processing" / "20000101T000000Z-1"
    dead.mkdir(parents=True)
    (dead / ".claim").write_text("946684800 1 h 20000101T000000Z-1 2\n")
    (dead / ".journal").write_bytes(b"\0ka.json/\0kb.json/\0kc.json/\0\0sa.json/\0\0da.json/\0\0sb.json/\0")
    for n in ("a.json", "b.json", "c.json"):
        (dead / n).write_text("{}")
    live = q / "processing" / "20000101T000000Z-2"
    live.mkdir()
    (live / ".claim").write_text("946684800 2 h 20000101T000000Z-2 2\n")
    (live / "x.json").write_text("{}")
    holder = subprocess.Popen(["flock", str(live / ".claim"), "sleep", "30"],
                              start_new_session=True)
    try:
        import time
        deadline = time.monotonic() + 10
        while subprocess.run(["flock", "-n", str(live / ".claim"), "true"]).returncode == 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        r = sh(tmp_path, "sg_now; sg_recover")
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    assert _files(q / "processed") == ["a.json"]
    assert _files(q / "inbox") == ["b.json", "c.json"]
    assert attempts_of(q, "b.json") == "1"
    assert not (q / "processing/.attempts/c.json").exists()  # claimed, never started
    assert not dead.exists() and _files(live) == ["x.json"]
    events = [json.loads(x) for x in (tmp_path / "logs/job/events.jsonl").read_text().splitlines()]
    assert {e["item"]: e["state"] for e in events} == {
        "a.json": "done", "b.json": "started", "c.json": "claimed"}
    assert r.returncode == 0


@pytest.mark.parametrize(("pattern", "host"), [("*.dat", "h"), ("*.json", "my host")])
def test_recover_takes_for_items_only_what_the_claim_journaled_as_claimed(
        tmp_path: Path, pattern: str, host: str) -> None:
    # A claim journals its names: what else is in it, its command left beside its item
    # (hidden files too). Those go to failed/, recorded as foreign; the items keep their
    # journal's word, whatever the pattern is now (a.json.log matches *.json: no item).
    q = tmp_path / "q"
    dead = q / "processing" / "20000101T000000Z-1"
    dead.mkdir(parents=True)
    (dead / ".claim").write_text(f"946684800 1 {host} 20000101T000000Z-1 2\n")
    (dead / ".journal").write_bytes(b"\0ka.json/\0kb.json/\0\0sa.json/\0\0da.json/\0")
    for n in ("a.json", "b.json", "a.json.log", ".a.json.tmp"):
        (dead / n).write_text("{}")
    r = sh(tmp_path, f"sg_pattern='{pattern}'; sg_now; sg_recover")
    assert r.returncode == 0
    events = [json.loads(x) for x in (tmp_path / "logs/job/events.jsonl").read_text().splitlines()]
    states = {e["item"]: (e["state"], e["item_to"]) for e in events}
    assert states.pop("a.json") == ("done", "processed")
    assert states.pop("b.json") == ("claimed", "inbox")
    assert states.pop(".a.json.tmp") == ("foreign", "failed")
    assert states.pop("a.json.log") == ("foreign", "failed")
    assert not dead.exists()


def test_a_claim_with_a_hidden_file_left_is_kept_for_recovery(tmp_path: Path) -> None:
    # Emptied of items but not of what a command left: kept (dated 0), not half removed.
    (tmp_path / "q/inbox").mkdir(parents=True)
    r = sh(tmp_path, """
    sg_now; sg_open_claim
    : >"$sg_claim_dir/.a.json.tmp"
    cat "$sg_claim_dir/.claim"
    sg_close_claim
    cat "$sg_claim_dir/.claim"; ls -A "$sg_claim_dir"
    """)
    before, *lines = r.stdout.splitlines()
    assert lines[0].startswith("0 ") and lines[0].endswith(" 2")
    assert len(lines[0]) == len(before)       # written over in place: never cut, never empty
    assert lines[0].split() == ["0", *before.split()[1:]]
    assert sorted(lines[1:]) == [".a.json.tmp", ".claim", ".journal"]


def test_release_returns_the_items_not_started_uncounted(tmp_path: Path) -> None:
    (tmp_path / "q/inbox").mkdir(parents=True)
    for n in ("a.json", "b.json", "c.json", "d.json", "e.json"):
        (tmp_path / "q/inbox" / n).write_text("{}")
    r = sh(tmp_path, """
        sg_cands=( "$sg_inbox"/*.json ); sg_nc=${#sg_cands[@]}; sg_ci=0
        sg_claim_chunk
        sg_ck=1
        sg_release
        sg_close_claim
        echo "$sg_chunk_n"
    """)
    assert r.stdout.strip() == "2"
    assert _files(tmp_path / "q/inbox") == ["b.json", "c.json", "d.json", "e.json"]
    # a.json counted as started by the caller; here it stays in the claim (not ours to move)
    assert _files(tmp_path / "q/processing") != []


# -- pruning -----------------------------------------------------------------------------

def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_prune_keeps_the_newest_and_the_living(tmp_path: Path) -> None:
    runs = tmp_path / "logs/job/runs"
    done = '{\n  "outcome": "ok",\n  "smoke": false\n}\n'
    live = f'{{"host": "h", "pid": {os.getpid()}, "outcome": "running", "smoke": false}}\n'
    names = {"20000101T000000Z-1": done, "20000101T000001Z-2": live, "20000101T000002Z-3": done,
             "20000101T000003Z-4": done, "20000101T000004Z-5": done, f"20000101T000005Z-{_dead_pid()}": None}
    for name, text in names.items():
        (runs / name).mkdir(parents=True)
        if text is not None:
            (runs / name / "schedgen-manifest.json").write_text(text)
    r = sh(tmp_path, "sg_prune", HOSTNAME="h")
    assert r.returncode == 0
    # keep_runs 3: the newest three, less an empty one of a dead pid, plus the live one.
    assert _files(runs) == ["20000101T000001Z-2", "20000101T000003Z-4", "20000101T000004Z-5"]


# -- the lock -------------------------------------------------------------------------------

def test_the_lock_makes_a_second_name_and_refuses_a_busy_one(tmp_path: Path) -> None:
    r = sh(tmp_path, 'sg_lock_dir_ok; sg_take_lock; ls -A "$sg_lock_dir"; '
                     '[ "$sg_lock_file" -ef "$sg_lock_keep" ] && echo linked')
    assert r.stdout.split() == [".job.lock.keep", "job.lock", "linked"], r.stderr
    holder = subprocess.Popen(["flock", str(tmp_path / "locks/.job.lock.keep"), "sleep", "30"],
                              start_new_session=True)
    try:
        import time
        deadline = time.monotonic() + 10
        while subprocess.run(["flock", "-n", str(tmp_path / "locks/job.lock"), "true"]).returncode == 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        (tmp_path / "locks/job.lock").unlink()
        r = sh(tmp_path, "sg_take_lock; echo got it")
        assert r.returncode == 75 and "got it" not in r.stdout
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    r = sh(tmp_path, 'sg_take_lock; [ "$sg_lock_file" -ef "$sg_lock_keep" ] && echo relinked')
    assert r.stdout.strip() == "relinked" and r.returncode == 0


# -- the watchdog ------------------------------------------------------------------------

def test_a_watchdog_stopped_after_it_marked_the_run_leaves_no_mark(tmp_path: Path) -> None:
    # One that passed its time just as the command ended had left .timeout in the run
    # directory of a run that ended well (about one run in 30 at the boundary).
    r = sh(tmp_path, """
        sg_run_dir=$T/run; mkdir "$sg_run_dir"
        set -m; sg_watchdog() { trap '' TERM; : >"$sg_run_dir/.timeout"; sleep 300; }
        sg_watchdog & sg_wd_pid=$!; set +m
        while [ ! -e "$sg_run_dir/.timeout" ]; do sleep 0.05; done
        p=$sg_wd_pid
        sg_wd_stop
        kill -0 "$p" 2>/dev/null && echo alive
        ls -A "$sg_run_dir"; echo "[$sg_wd_pid]"
    """)
    assert r.stdout.split() == ["[]"], r.stdout + r.stderr


@pytest.mark.parametrize("where", ["count", "claim"])
def test_a_number_with_a_leading_0_in_the_queues_records_is_no_number(
        tmp_path: Path, where: str) -> None:
    # "08" is a bad octal number to bash's arithmetic, which ends the script: every run
    # of the queue had exited 1 until the file was removed.
    item = tmp_path / "q/inbox/a.json"
    r = sh(tmp_path, "")        # the folders
    item.write_text("{}")
    if where == "count":
        (tmp_path / "q/processing/.attempts/a.json").write_text("08\n")
        r = sh(tmp_path, 'sg_count_of "$T/q/inbox/a.json" a.json; echo "$sg_attempt $sg_cnt_mine"')
        assert r.returncode == 0 and r.stdout.split() == ["0", "0"], r.stderr
    else:
        claim = tmp_path / "q/processing/20270101T000000Z-5"
        claim.mkdir()
        (claim / ".claim").write_text("08 5 host 20270101T000000Z-5 2\n")
        (claim / ".journal").write_bytes(b"")
        r = sh(tmp_path, "sg_now; sg_recover; echo done")
        assert r.returncode == 0 and r.stdout.split()[-1:] == ["done"], r.stderr
