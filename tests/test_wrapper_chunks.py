"""Queue items in chunks: one mv claims several, done items are journaled and moved to
processed/ with one mv, run directories are made ahead within a second.

The forks saved must cost no guarantee: each item is still a run of its own, nothing is
lost, processed twice after success or overwritten, and a dead worker's chunk is sorted
out by its journal (done items to processed/, the started one counted as an attempt, the
others back as they were).
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.wrapper_kit import (
    SYSTEM_PATH,
    Wrapped,
    fill_inbox,
    kill_group,
    make_job,
    needs_proc,
    queue_fields,
    wait_for,
    wait_until_gone,
)

# Logs "start <name>" (O_APPEND); with $HANG present, item b.json waits; FAIL names an
# item that exits 9.
SCRIPT = ('n=${1##*/}; echo "start $n" >>"$LOG"; '
          'if [ "$n" = b.json ] && [ -e "$HANG" ]; then exec sleep 60; fi; '
          '[ "$n" != "${FAIL:-}" ] || exit 9')
# Twelve items: the first chunk of a lone worker is a quarter of them, a.json b.json c.json.
NAMES = [f"{c}.json" for c in "abcdefghijkl"]
RUN_ID = re.compile(r"\d{8}T\d{6}Z-\d+(-\d{4})?")


def _job(tmp_path: Path, path: list[str], script: str = SCRIPT, **queue: object) -> Wrapped:
    return make_job(tmp_path, command=["bash", "-c", script, "_", "{item}"], path=path,
                    env={"LOG": str(tmp_path / "log"), "HANG": str(tmp_path / "hang")},
                    lock=False, queue=queue_fields(tmp_path, pattern="*.json", **queue),
                    logs={"keep_runs": 500})


def _starts(tmp_path: Path) -> list[str]:
    f = tmp_path / "log"
    return [line.split(" ", 1)[1] for line in f.read_text().splitlines()] if f.exists() else []


def _manifests(w: Wrapped) -> list[dict[str, object]]:
    """The manifests there are (a worker killed with -9 may leave a run dir made ahead)."""
    return [json.loads((d / "schedgen-manifest.json").read_text()) for d in w.run_dirs()
            if (d / "schedgen-manifest.json").exists()]


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.exists() else []


def _counting_bin(root: Path, log: Path) -> Path:
    """Shims that log each call of mv, mkdir, rmdir, rm and date, then run the real one."""
    bindir = root / "counting-bin"
    bindir.mkdir()
    for tool in ("mv", "mkdir", "rmdir", "rm", "date"):
        real = shutil.which(tool, path=os.pathsep.join(SYSTEM_PATH))
        assert real, tool
        (bindir / tool).write_text(f'#!/bin/sh\necho {tool} >>"{log}"\nexec {real} "$@"\n')
        (bindir / tool).chmod(0o755)
    return bindir


def test_a_drain_forks_little_more_than_its_commands(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    bindir = _counting_bin(tmp_path, calls)
    names = [f"{i:04d}.json" for i in range(200)]
    fill_inbox(tmp_path / "q" / "inbox", names)
    w = make_job(tmp_path, command=["true", "{item}"], path=[str(bindir), *SYSTEM_PATH],
                 lock=False, queue=queue_fields(tmp_path, batch=0), logs={"keep_runs": 500})
    r = w.run()
    assert (r.returncode, r.stderr) == (0, "")
    assert _files(tmp_path / "q" / "processed") == names
    assert [m["item"] for m in w.manifests()] == names  # a run (dir, manifest) per item
    assert {m["outcome"] for m in w.manifests()} == {"ok"}
    n = collections.Counter(calls.read_text().split())
    # Chunks of at most 32 (and a quarter of what is left): 17 claims, 17 moves to
    # processed/, plus one when a second passes with done items waiting. Run dirs: a few
    # mkdirs per second (more while the batch size grows).
    seconds = len({e["ts"] for e in w.events()})
    assert n["date"] <= 1  # none where bash has EPOCHSECONDS
    assert n["mv"] <= 2 * 17 + seconds
    assert n["mkdir"] + n["rmdir"] <= 60
    assert n["rm"] <= 2  # the claim dir at the end (and nothing to prune)
    # Every run ID is unique, and they sort by time as strings (start-event order).
    ids = [e["run_id"] for e in w.events("start")]
    assert len(set(ids)) == 200 and ids == sorted(ids)
    assert all(RUN_ID.fullmatch(i) for i in ids)
    # No directory made ahead is left behind; each run's ID is its start second.
    assert [d.name for d in w.run_dirs()] == sorted(ids)
    for m in w.manifests():
        assert m["run_id"].startswith(m["started_at"].replace("-", "").replace(":", ""))


@needs_proc
def test_sigkill_mid_chunk_recovery_follows_the_journal(
        tmp_path: Path, tool_path: list[str]) -> None:
    # a.json done waits for the chunk's end to move, unless a second passed meanwhile
    # (done items then move before the next starts): under load that can happen, and the
    # scene is set again in a fresh folder.
    for attempt in range(5):
        root = tmp_path / f"try{attempt}"
        root.mkdir()
        q = root / "q"
        fill_inbox(q / "inbox", NAMES)
        w = _job(root, tool_path, stale_after="2s", batch=0)
        (root / "hang").touch()
        worker = w.popen()
        wait_for(lambda r=root: _starts(r) == ["a.json", "b.json"], what="b.json to start")
        [claim] = _files(q / "processing")
        kept = _files(q / "processing" / claim) == ["a.json", "b.json", "c.json"]
        t_claim = time.monotonic()
        kill_group(worker.pid)
        worker.communicate()
        assert wait_until_gone(worker.pid) == []
        if kept:
            break
    # a.json is done but waits for the chunk's end to move; c.json is claimed, not started.
    assert kept and _files(q / "processed") == []
    (root / "hang").unlink()
    wait_for(lambda: time.monotonic() - t_claim > 2.5, what="stale_after")

    r = w.run()
    assert r.returncode == 0, r.stderr
    rec = {e["item"]: (e["state"], e["item_to"], e["attempt"], e["claim"])
           for e in w.events("recover")}
    assert rec == {"a.json": ("done", "processed", 1, claim),
                   "b.json": ("started", "inbox", 1, claim),
                   "c.json": ("claimed", "inbox", 0, claim)}
    starts = collections.Counter(_starts(root))
    assert starts == {**{n: 1 for n in NAMES}, "b.json": 2}  # a.json never ran again
    assert _files(q / "processed") == NAMES and _files(q / "inbox") == []
    assert _files(q / "processing") == [] and _files(q / "processing" / ".attempts") == []
    attempts = {m["item"]: m["attempt"] for m in _manifests(w) if m["outcome"] == "ok"}
    assert attempts == {**{n: 1 for n in NAMES}, "b.json": 2}
    # Run dirs the killed worker made ahead stay empty until prune finds its pid gone.
    for d in w.run_dirs():
        assert (d / "schedgen-manifest.json").exists() or f"-{worker.pid:07d}-" in d.name


def test_a_failure_mid_chunk_returns_the_items_not_started_uncounted(tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", NAMES)
    w = _job(tmp_path, SYSTEM_PATH, batch=0, stop_on_failure=True)
    assert w.run(env={"FAIL": "b.json"}).returncode == 9
    assert _starts(tmp_path) == ["a.json", "b.json"]
    assert _files(q / "processed") == ["a.json"]
    assert _files(q / "inbox") == NAMES[1:]
    assert _files(q / "processing") == []
    assert _files(q / "processing" / ".attempts") == ["b.json"]  # c.json never ran
    assert [e["item"] for e in w.events("claim")] == ["a.json", "b.json"]
    # A done item's finish line is written once it has moved (at the chunk's end).
    assert sorted((e["item"], e["item_to"]) for e in w.events("finish")) == \
        [("a.json", "processed"), ("b.json", "inbox")]


@needs_proc
def test_term_mid_chunk_moves_the_done_items_and_returns_the_rest(tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", NAMES)
    w = _job(tmp_path, SYSTEM_PATH, batch=0)
    (tmp_path / "hang").touch()
    worker = w.popen()
    wait_for(lambda: _starts(tmp_path) == ["a.json", "b.json"], what="b.json to start")
    worker.send_signal(signal.SIGTERM)
    worker.communicate(timeout=20)
    assert worker.returncode == 143
    assert wait_until_gone(worker.pid) == []
    assert _files(q / "processed") == ["a.json"]
    assert _files(q / "inbox") == NAMES[1:]
    assert _files(q / "processing") == []
    assert _files(q / "processing" / ".attempts") == ["b.json"]
    assert [(m["item"], m["outcome"]) for m in w.manifests()] == \
        [("a.json", "ok"), ("b.json", "interrupted")]


def test_a_done_item_never_overwrites_a_file_that_reached_processed_meanwhile(
        tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", [f"{c}.json" for c in "abcdefgh"])  # chunks: a b, c d, ...
    # While a.json runs, a file of that name reaches processed/ (done items move at the
    # chunk's end, or sooner when a second has passed: either way after this).
    script = ('[ "${1##*/}" != a.json ] || { mkdir -p "$P"; echo newer >"$P/a.json"; }')
    w = make_job(tmp_path, command=["bash", "-c", script, "_", "{item}"], path=SYSTEM_PATH,
                 env={"P": str(q / "processed")}, lock=False,
                 queue=queue_fields(tmp_path, pattern="*.json", batch=2))
    assert w.run().returncode == 0
    assert (q / "processed" / "a.json").read_text() == "newer\n"
    m = w.manifests()[0]
    assert m["item"] == "a.json"
    kept = q / "processed" / f"a.{m['run_id']}.json"
    assert json.loads(kept.read_text()) == {"name": "a.json"}
    assert m["item_path"] == str(kept)  # the manifest follows the item
    assert _files(q / "processed") == sorted(["a.json", kept.name, "b.json"])


def test_prune_takes_a_run_dir_without_manifest_once_the_process_it_names_is_gone(
        tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    w = make_job(tmp_path, command=["true"], logs={"keep_runs": 1})
    runs = w.log_dir / "runs"
    live, dead = f"20000101T000000Z-{os.getpid()}", f"20000101T000000Z-{gone.pid}-0002"
    for name in (live, dead):
        (runs / name).mkdir(parents=True)
    assert w.run().returncode == 0
    left = [d.name for d in w.run_dirs()]
    assert left[0] == live and dead not in left and len(left) == 2


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_each_event_line_is_one_write_so_workers_never_interleave(tmp_path: Path) -> None:
    # Workers append to one events.jsonl (O_APPEND keeps a write whole). A chunk's finish
    # lines with long names pass 4 KB, where one printf of them all would go out as two
    # writes and another worker's line could land in between: one write per line.
    names = [f"{i:03d}-{'n' * 180}.json" for i in range(40)]
    fill_inbox(tmp_path / "q" / "inbox", names)
    w = make_job(tmp_path, command=["true", "{item}"], lock=False,
                 queue=queue_fields(tmp_path, batch=0), logs={"keep_runs": 500})
    trace = tmp_path / "trace"
    r = subprocess.run(["strace", "-f", "-y", "-qq", "-e", "trace=write", "-e", "signal=none",
                        "-o", str(trace), *w.argv()], env=w.env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    sizes = [int(line.rsplit("= ", 1)[1]) for line in trace.read_text().splitlines()
             if "events.jsonl>" in line and "= " in line]
    lines = (w.log_dir / "events.jsonl").read_bytes().splitlines(keepends=True)
    assert sorted(json.loads(x)["item"] for x in lines if b'"finish"' in x) == names
    assert sizes == [len(x) for x in lines]
