"""Log rotation by size (events.jsonl, cron.log, launchd logs) and pruning of run dirs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import faked_clock
from tests.wrapper_kit import Wrapped, fill_inbox, kill_group, make_job, queue_fields, wait_for

# Rotation and pruning use mv, find, ls and stat: all of them also under bash 3.2 and
# the BSD userland (some 3 s).
pytestmark = pytest.mark.macos

PAD = "x" * 99 + "\n"


def _names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def test_events_jsonl_rotates_at_max_size_keeping_keep_copies(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"max_size": 300, "keep": 2})
    generations = []
    for _ in range(8):
        assert w.run().returncode == 0
        generations.append(_names(w.log_dir))
    assert "events.jsonl.1" in generations[-1] and "events.jsonl.2" in generations[-1]
    assert not any("events.jsonl.3" in g for g in generations)
    for f in w.log_dir.glob("events.jsonl*"):
        for line in f.read_text().splitlines():
            json.loads(line)  # rotation never cuts a line
    # .1 is the newest copy: its events come after .2's.
    newest = json.loads((w.log_dir / "events.jsonl.1").read_text().splitlines()[0])
    older = json.loads((w.log_dir / "events.jsonl.2").read_text().splitlines()[-1])
    assert newest["run_id"] >= older["run_id"]


def test_launchd_and_cron_logs_are_rotated_and_small_ones_left_alone(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"max_size": "1KB", "keep": 3})
    w.log_dir.mkdir(parents=True)
    big = PAD * 11
    for name in ("launchd.out.log", "launchd.err.log"):
        (w.log_dir / name).write_text(big)
    (w.log_dir / "cron.log").write_text("small\n")
    (w.log_dir / "other.log").write_text(big)  # not ours to rotate
    assert w.run().returncode == 0
    names = _names(w.log_dir)
    assert "launchd.out.log.1" in names and "launchd.err.log.1" in names
    assert (w.log_dir / "launchd.out.log.1").read_text() == big
    assert (w.log_dir / "cron.log").read_text() == "small\n" and "cron.log.1" not in names
    assert "other.log.1" not in names


def test_cron_log_rotation_keeps_this_runs_output_whole(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["no-such-program-schedgen"], logs={"max_size": 200, "keep": 1})
    w.log_dir.mkdir(parents=True)
    (w.log_dir / "cron.log").write_text(PAD * 3)
    for _ in range(3):
        w.run("--cron")  # precondition failures: no rotation (nothing ran)
    w2 = make_job(tmp_path, command=["true"], logs={"max_size": 200, "keep": 1})
    assert w2.run("--cron").returncode == 0
    assert (w.log_dir / "cron.log.1").exists() and not (w.log_dir / "cron.log.2").exists()
    assert (w.log_dir / "cron.log.1").read_text().count("command not found") == 3


def test_keep_0_truncates_instead_of_keeping_copies(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"max_size": 100, "keep": 0})
    w.log_dir.mkdir(parents=True)
    (w.log_dir / "launchd.out.log").write_text(PAD * 5)
    assert w.run().returncode == 0
    assert (w.log_dir / "launchd.out.log").read_text() == ""
    assert not list(w.log_dir.glob("*.1"))


def test_empty_queue_runs_rotate_too(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], queue=queue_fields(tmp_path),
                 logs={"max_size": 400, "keep": 1})
    for _ in range(10):
        assert w.run().returncode == 0
    assert (w.log_dir / "events.jsonl.1").exists()
    assert (w.log_dir / "events.jsonl").stat().st_size < 400 + 200


def test_old_run_dirs_are_pruned_oldest_first(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 3})
    ids = []
    for _ in range(6):
        assert w.run().returncode == 0
        ids.append(w.events("start")[-1]["run_id"])
    assert [d.name for d in w.run_dirs()] == ids[-3:]


def test_a_running_runs_dir_is_never_pruned(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    slow = make_job(tmp_path, command=["bash", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done',
                                       str(gate)], lock=False, logs={"keep_runs": 1})
    p = slow.popen()
    try:
        wait_for(lambda: len(slow.run_dirs()) == 1, what="the slow run's directory")
        running = slow.run_dirs()[0]
        gate_free = make_job(tmp_path, command=["true"], lock=False, logs={"keep_runs": 1})
        for _ in range(3):
            assert gate_free.run().returncode == 0
        assert running.exists()  # older than keep_runs allows, but still running
        assert len(slow.run_dirs()) == 2
    finally:
        gate.touch()
        assert p.wait(timeout=30) == 0
    assert len(slow.run_dirs()) == 1


def test_a_crashed_runs_dir_is_pruned_in_turn(tmp_path: Path) -> None:
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f"touch {started}; sleep 30", lock=False,
                 logs={"keep_runs": 2})
    p = w.popen()
    wait_for(started.exists, what="the run to start")
    kill_group(p.pid)
    p.communicate()
    crashed = w.run_dirs()[0]
    assert w.manifests()[0]["outcome"] == "running"
    quick = make_job(tmp_path, command=["true"], lock=False, logs={"keep_runs": 2})
    for _ in range(2):
        quick.run()
    assert not crashed.exists()


@pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime")
@pytest.mark.parametrize("lock", [False, True])
@pytest.mark.parametrize("planted", ["9999999", "4194303-0002"])
def test_runs_of_one_second_go_after_a_crashed_run_whose_pid_sorts_later(
        tmp_path: Path, planted: str, lock: bool) -> None:
    # Every run in one frozen second. A crashed run of an older runtime (pid unpadded: as
    # text 9999999 sorts after any padded pid) or one whose pid was near the top before
    # the pids wrapped round: the runs after it are named after it, so pruning keeps them.
    w = make_job(tmp_path, command=["true"], lock=lock, logs={"keep_runs": 1})
    second = "20300101T000000Z"
    crashed = w.log_dir / "runs" / f"{second}-{planted}"
    crashed.mkdir(parents=True)
    (crashed / "schedgen-manifest.json").write_text(json.dumps(
        {"host": os.uname().nodename, "pid": 9999999, "outcome": "running", "smoke": False}))
    for _ in range(2):
        r = faked_clock.run("2030-01-01 00:00:00", w.argv(), env={**w.env(), "TZ": "UTC"},
                            capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    ids = [e["run_id"] for e in w.events("start")]
    assert ids == sorted(ids) and ids[0] > crashed.name        # each after the one before
    assert [d.name for d in w.run_dirs()] == [ids[1]]          # the crashed one pruned
    assert ids[0].startswith("20300101T000001Z-")              # the one second it took


def test_readers_sort_run_ids_by_time_then_pid_as_a_number() -> None:
    from schedgen.records.runs import newest_first

    old_then_new = ["20300101T000000Z-9986", "20300101T000000Z-10050",
                    "20300101T000000Z-10050-0002", "20300101T000000Z-0010051",
                    "20291231T235959Z-99999", "notes"]
    assert newest_first(old_then_new) == [
        "notes", "20300101T000000Z-0010051", "20300101T000000Z-10050-0002",
        "20300101T000000Z-10050", "20300101T000000Z-9986", "20291231T235959Z-99999"]


def test_batch_items_each_get_a_run_dir_and_keep_runs_applies(tmp_path: Path) -> None:
    fill_inbox(tmp_path / "q" / "inbox", [f"{i}.json" for i in range(5)])
    w = make_job(tmp_path, command=["true", "{item}"], logs={"keep_runs": 3},
                 queue=queue_fields(tmp_path, batch=0))
    assert w.run().returncode == 0
    assert [m["item"] for m in w.manifests()] == ["2.json", "3.json", "4.json"]


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_prune_judges_a_missing_or_incomplete_manifest_by_the_pid_in_its_name(
        tmp_path: Path) -> None:
    # No manifest yet, or one being written: the run (made ahead, or just made) is kept
    # while the process its ID names lives (here: this one). The same with a dead pid, or
    # a manifest cut to 0 bytes by a full disk, is litter and goes.
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 1})
    runs = w.log_dir / "runs"
    pid, dead = os.getpid(), _dead_pid()
    for name, manifest in [(f"20000101T000000Z-{pid}", None),
                           (f"20000101T000001Z-{pid}", '{\n  "outcome": "runn'),
                           (f"20000101T000002Z-{dead}", ""),
                           (f"20000101T000003Z-{dead}", None),
                           ("20000101T000004Z-3", '{\n  "outcome": "ok",\n  "smoke": false\n}\n')]:
        (runs / name).mkdir(parents=True)
        if manifest is not None:
            (runs / name / "schedgen-manifest.json").write_text(manifest)
    assert w.run().returncode == 0
    left = [d.name for d in w.run_dirs()]
    assert left[:2] == [f"20000101T000000Z-{pid}", f"20000101T000001Z-{pid}"]
    assert len(left) == 3  # and this run's own


def test_a_manifest_cut_to_0_bytes_is_pruned_in_turn(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 1})
    assert w.run().returncode == 0
    [first] = w.run_dirs()
    (first / "schedgen-manifest.json").write_text("")  # a full disk cut it short
    assert w.run().returncode == 0
    assert first not in w.run_dirs() and len(w.run_dirs()) == 1


def test_with_a_large_max_size_sizes_are_checked_every_few_runs(tmp_path: Path) -> None:
    # max_size 200 KB: one `find` every 3 runs (max_size / 64 KB), starting with the first.
    w = make_job(tmp_path, command=["true"], logs={"max_size": "200KB", "keep": 5})
    assert "sg_rotate_every=3" in w.text
    w.log_dir.mkdir(parents=True)
    big = PAD * 2100  # 210 KB
    rotated = []
    for _ in range(7):
        (w.log_dir / "launchd.err.log").write_text(big)
        assert w.run().returncode == 0
        rotated.append(not (w.log_dir / "launchd.err.log").exists())
    assert rotated == [True, False, False, True, False, False, True]


@pytest.mark.parametrize("count", ["08", "09", "fifo", "symlink", "sparse"])
def test_a_rotate_count_that_is_no_count_neither_stops_the_run_nor_its_pruning(
        tmp_path: Path, count: str) -> None:
    # "08" is a bad octal number to bash (it had ended the exit handler before pruning);
    # a FIFO would hang the run with its lock held; a symlink would be written through;
    # a terabyte of NULs, no newline, had been read whole (read skips NULs).
    w = make_job(tmp_path, command=["true"], logs={"max_size": "200KB", "keep_runs": 2})
    w.log_dir.mkdir(parents=True)
    f = w.log_dir / ".rotate-count"
    target = tmp_path / "elsewhere"
    target.write_text("x\n")
    if count == "fifo":
        os.mkfifo(f)
    elif count == "symlink":
        f.symlink_to(target)
    elif count == "sparse":
        with f.open("wb") as fh:
            fh.truncate(1 << 40)
    else:
        f.write_text(count + "\n")
    for _ in range(5):
        r = w.run(timeout=30)
        assert r.returncode == 0 and r.stderr == "", r.stderr
    assert len(w.run_dirs()) <= 2 + 2 // 8 + 1
    assert target.read_text() == "x\n"
    assert f.is_file() and not f.is_symlink()     # replaced by a count: no find every run


def test_the_rotation_lock_is_in_the_log_folder_not_the_lock_folder(tmp_path: Path) -> None:
    # A job without a lock never checks its lock folder; a symlink planted there as the
    # rotation lock had been followed, making a file wherever it pointed.
    w = make_job(tmp_path, command=["true"], lock=False, logs={"max_size": 300, "keep": 1})
    (tmp_path / "locks").mkdir(exist_ok=True)
    (tmp_path / "locks" / "job.rotate.lock").symlink_to(tmp_path / "victim")
    for _ in range(4):
        assert w.run().returncode == 0
    assert (w.log_dir / "events.jsonl.1").exists()          # it did rotate
    assert (w.log_dir / ".rotate.lock").is_file()
    assert not (tmp_path / "victim").exists()


# -- manifests rewritten in place ---------------------------------------------------------

def _valid_manifests(w: Wrapped) -> list[dict[str, Any]]:
    out = []
    for d in w.run_dirs():
        text = (d / "schedgen-manifest.json").read_bytes().decode("utf-8", "surrogateescape")
        assert text.count("\n") == 1 and text.endswith("\n"), text
        out.append(json.loads(text))
    return out


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_plain_runs_manifest_is_finished_in_place_and_stays_one_json_line(tmp_path: Path) -> None:
    # Made once (O_TRUNC), then written over without truncating it (no block freed and taken).
    w = make_job(tmp_path, command=["true"])
    trace = tmp_path / "trace"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(trace), *w.argv()],
                       env=w.env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    opens = [line for line in trace.read_text().splitlines()
             if "schedgen-manifest.json" in line and ("O_WRONLY" in line or "O_RDWR" in line)]
    assert len(opens) == 2 and "O_TRUNC" in opens[0] and "O_TRUNC" not in opens[1], opens
    [m] = _valid_manifests(w)
    assert m["outcome"] == "ok" and m["exit_code"] == 0 and m["finished_at"]


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_plain_run_under_its_lock_lists_runs_only_once_past_keep_runs(tmp_path: Path) -> None:
    # .last-run holds the newest run ID and the number of run directories, so a locked
    # run below keep_runs neither lists runs/ for its ID nor to prune.
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 3})
    runs = tmp_path / "logs" / "job" / "runs"

    def listings() -> int:
        trace = tmp_path / "trace"
        r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(trace), *w.argv()],
                           env=w.env(), capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return sum(1 for line in trace.read_text().splitlines()
                   if (f'"{runs}"' in line or f'"{runs}/"' in line) and "O_DIRECTORY" in line)

    assert w.run().returncode == 0
    assert listings() == 0 and listings() == 0           # runs 2 and 3: at keep_runs
    assert len(list(runs.iterdir())) == 3
    assert listings() > 0                                # run 4: one too many, pruned
    assert len(list(runs.iterdir())) == 3
    (tmp_path / "logs" / "job" / ".last-run").unlink()
    assert listings() > 0                                # no note: the folder is listed

@pytest.mark.macos
def test_a_commands_own_manifest_json_and_the_runs_manifest_both_stay(tmp_path: Path) -> None:
    # A build that leaves its artifact list as {artifact_dir}/manifest.json.
    art = '{"artifacts": ["app.tar.gz"]}'
    w = make_job(tmp_path, command=["sh", "-c", f"printf '%s\\n' '{art}' >\"$1/manifest.json\"",
                                    "build", "{artifact_dir}"])
    assert w.run().returncode == 0
    [d] = w.run_dirs()
    assert (d / "manifest.json").read_text() == art + "\n"
    [m] = w.manifests()
    assert (m["outcome"], m["run_id"]) == ("ok", d.name)
    # A queue job's done items have their manifests written again as they move on.
    q = queue_fields(tmp_path / "q2", batch=0)
    fill_inbox(Path(q["inbox"]), ["a.json", "b.json"])
    wq = make_job(tmp_path / "q2", "qj", command=["sh", "-c", f"printf '%s\\n' '{art}' >\"$1/manifest.json\"",
                                                  "build", "{artifact_dir}"], queue=q, lock=False)
    assert wq.run().returncode == 0
    assert [(d / "manifest.json").read_text() for d in wq.run_dirs()] == [art + "\n"] * 2
    assert [(m["item"], m["outcome"]) for m in wq.manifests()] == [("a.json", "ok"), ("b.json", "ok")]


def test_a_manifest_the_command_wrote_itself_is_replaced_not_overwritten(tmp_path: Path) -> None:
    # Longer than the wrapper's: written over in place, its tail would stay behind.
    w = make_job(tmp_path, command=["bash", "-c", 'printf "%0900d\\n" 7 >"$SCHEDGEN_ARTIFACT_DIR/schedgen-manifest.json"'])
    assert w.run().returncode == 0
    [m] = _valid_manifests(w)
    assert m["outcome"] == "ok"


def test_a_manifest_the_command_extended_past_a_nul_is_replaced(tmp_path: Path) -> None:
    # Ours, then a NUL and more: read up to the NUL it looks like ours, and written over
    # in place the rest would stay behind the new text.
    w = make_job(tmp_path, command=["bash", "-c", 'printf "\\0%0300d" 7 >>"$SCHEDGEN_ARTIFACT_DIR/schedgen-manifest.json"'])
    assert w.run().returncode == 0
    [m] = w.log_dir.glob("runs/*/schedgen-manifest.json")
    assert b"\0" not in m.read_bytes()
    assert json.loads(m.read_text())["outcome"] == "ok"


def test_a_huge_last_run_note_is_not_read_whole(tmp_path: Path) -> None:
    # A note someone filled (sparse, 1 TB): read whole, the run would take hours; read
    # for its one line, it is no note and the folder is listed.
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0
    note = w.log_dir / ".last-run"
    with note.open("wb") as f:      # no newline anywhere
        f.truncate(1 << 40)
    r = w.run(timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(list((w.log_dir / "runs").iterdir())) == 2
    assert note.stat().st_size == 1 << 40          # a note that is no note is left alone


@pytest.mark.parametrize("name", ["a." + "漢" * 11, "漢" * 80 + ".txt", "plain.json"])
@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
def test_manifests_of_items_renamed_on_a_collision_stay_valid(tmp_path: Path, name: str,
                                                             locale: str) -> None:
    # The name is taken in processed/ (and, for the failing job, in the inbox): the item is
    # renamed, shorter or longer in bytes than in characters, and its manifest rewritten.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", [name])
    (q / "processed").mkdir(parents=True)
    (q / "processed" / name).write_text("older")
    w = make_job(tmp_path, command=["true", "{item}"], queue=queue_fields(tmp_path, batch=0))
    assert w.run(env={"LC_ALL": locale}).returncode == 0
    [m] = _valid_manifests(w)
    assert m["outcome"] == "ok" and m["item"] == name and m["item_path"] != str(q / "processed" / name)
    assert Path(m["item_path"]).exists()

    # A failing item goes back to an inbox where its name was taken meanwhile.
    fill_inbox(q / "inbox", [name])
    taken = q / "inbox" / name
    failing = make_job(tmp_path, "bad", command=["bash", "-c", 'echo new >"$0"; exit 3', str(taken)],
                       queue=queue_fields(tmp_path, batch=1), lock=False)
    assert failing.run(env={"LC_ALL": locale}).returncode == 3
    [m] = _valid_manifests(failing)
    assert m["outcome"] == "failed" and m["item"] == name and Path(m["item_path"]) != taken
    assert Path(m["item_path"]).exists() and taken.read_text() == "new\n"
