"""Moves out of a claim by link(2) and unlink under BSD mv: kills between the two steps,
and files that already share an item's inode."""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.plugin import macos_userland
from tests.test_wrapper_faults import _files, _queue_job
from tests.wrapper_kit import SYSTEM_PATH, Wrapped, attempts_of, fill_inbox, produce_reusing_names

# -- BSD mv -n: a look, then a rename ------------------------------------------------------
# macOS's mv -n looks whether the target is free and then renames over whatever is there
# by then: a producer's new file of an item's name, arriving in that instant, was
# replaced and lost (seen as a missing item under load). A queue run links instead.

def _bsd_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
              request: pytest.FixtureRequest) -> list[str]:
    return [str(macos_userland(tmp_path_factory, monkeypatch, request))]


# The producer, as BSD_SHIM_RACE: a new a.json lands in the inbox at the moment the tool
# moving the item there has looked (mv) or is about to link (ln), once.
_DROP = 'case $1 in */inbox/a.json) [ ! -e "$MARK" ] || { rm -f "$MARK"; echo new >"$1"; } ;; esac'


def _ln_killer(shim: Path, bsd: list[str]) -> Path:
    """A stand-in ln (over the BSD one) that KILLs its caller once, when $MARK exists and
    its target matches $KILL_AT: before linking ($KILL_WHEN=before) or right after."""
    kill = '[ ! -e "$MARK" ] || { rm -f "$MARK"; kill -KILL "$PPID"; exit 1; }'
    shim.mkdir()
    (shim / "ln").write_text(
        "#!/bin/bash\nfor last; do :; done\n"
        f'if [ "${{KILL_WHEN-}}" = before ]; then case $last in $KILL_AT) {kill} ;; esac; fi\n'
        f'"{bsd[0]}/ln" "$@"; st=$?\n'
        f'if [ "${{KILL_WHEN-}}" = after ]; then case $last in $KILL_AT) {kill} ;; esac; fi\n'
        'exit "$st"\n')
    (shim / "ln").chmod(0o755)
    return shim


def _raced_giving_back(tmp_path: Path, path: list[str], race: str
                       ) -> tuple[Wrapped, Path, subprocess.CompletedProcess[str]]:
    """One run of an item (a.json, "X") that fails and goes back to the inbox, with `race`
    run by the BSD shims once (while $MARK exists) as it goes; the job, its queue folder
    and the run."""
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "inbox" / "a.json").write_text("X")
    w = _queue_job(tmp_path, 'cat "$1" >>"$T/ran"; exit 1', path=path, max_attempts=3)
    (tmp_path / "mark").touch()
    return w, q, w.run(env={"BSD_SHIM_RACE": race, "MARK": str(tmp_path / "mark")})


def _killed_giving_back(tmp_path: Path, bsd: list[str], when: str
                        ) -> tuple[Wrapped, Path, dict[str, str]]:
    """A run of a failing item killed just `when` ("before", "after") it links the item
    back into the inbox; the job, its queue folder and the environment that kills."""
    w, q = _killable(tmp_path, bsd, 'echo "$1" >>"$T/ran"; exit 1', max_attempts=3,
                     stale_after="1s")
    (tmp_path / "mark").touch()
    env = {"MARK": str(tmp_path / "mark"), "KILL_WHEN": when, "KILL_AT": "*/inbox/*"}
    assert w.run(env=env).returncode == -signal.SIGKILL
    return w, q, env


def _killable(tmp_path: Path, bsd: list[str], script: str, **queue: object) -> tuple[Wrapped, Path]:
    """A queue job with one item, a.json, whose ln is _ln_killer's; and its queue folder."""
    shim = _ln_killer(tmp_path / "shim", bsd)
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    return _queue_job(tmp_path, script, path=[str(shim), *bsd], **queue), q


def test_under_bsd_mv_a_file_dropped_under_an_items_name_as_it_goes_back_is_kept(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    w, q, r = _raced_giving_back(tmp_path, _bsd_path(tmp_path_factory, monkeypatch, request),
                                 _DROP)
    assert r.returncode == 1 and not (tmp_path / "mark").exists()   # it did land
    inbox = _files(q / "inbox")
    assert len(inbox) == 2 and (q / "inbox" / "a.json").read_text() == "new\n"
    [back] = [n for n in inbox if n != "a.json"]
    assert (q / "inbox" / back).read_text() == "X" and attempts_of(q, back) == "1"
    assert not (q / "processing" / ".attempts" / "a.json").exists()   # new, no count
    [fin] = w.events("finish")
    assert fin["item_to"] == "inbox" and w.manifests()[0]["item_path"] == str(q / "inbox" / back)


def test_under_bsd_mv_a_run_killed_between_linking_an_item_back_and_unlinking_it_runs_it_once(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # The item is in the inbox and still in the dead run's claim: recovery removes the
    # claim's name (the inbox's is the item), never gives it back a second time.
    w, q, env = _killed_giving_back(tmp_path, _bsd_path(tmp_path_factory, monkeypatch, request),
                                    "after")
    [claim] = _files(q / "processing")
    assert (q / "processing" / claim / "a.json").samefile(q / "inbox" / "a.json")
    time.sleep(1.1)  # stale_after
    assert w.run(env=env).returncode == 1                # recovered, then its 2nd attempt
    [rec] = w.events("recover")
    assert (rec["item"], rec["state"], rec["item_to"]) == ("a.json", "linked", "inbox")
    assert len((tmp_path / "ran").read_text().splitlines()) == 2
    assert _files(q / "inbox") == ["a.json"] and attempts_of(q, "a.json") == "2"
    assert _files(q / "processing") == [] and _files(q / "failed") == []


def test_under_bsd_mv_a_run_killed_before_linking_an_item_back_leaves_it_in_failed(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Journaled as on its way, not linked: that cannot be told from an item that got
    # there and was taken away since, so it is not given back (it could run twice).
    w, q, env = _killed_giving_back(tmp_path, _bsd_path(tmp_path_factory, monkeypatch, request),
                                    "before")
    assert _files(q / "inbox") == []
    time.sleep(1.1)
    assert w.run(env=env).returncode == 0
    [rec] = w.events("recover")
    assert (rec["item"], rec["state"], rec["item_to"]) == ("a.json", "unsure", "failed")
    assert _files(q / "failed") == ["a.json"] and _files(q / "inbox") == []
    assert len((tmp_path / "ran").read_text().splitlines()) == 1
    assert list((q / "processing" / ".attempts").iterdir()) == []   # its count swept
    assert _files(q / "processing") == []


def test_under_bsd_mv_an_unsure_item_whose_move_to_failed_was_cut_short_is_not_said_linked(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Run 1 dies after journaling "l" and before the link: the item is unsure. Run 2, recovering
    # it, dies between linking it into failed/ and unlinking its claim's name: the item now has
    # one link more than "l" says, but that link is failed/'s, not the inbox's. Run 3 must not
    # record it as gone back to the inbox.
    bsd = _bsd_path(tmp_path_factory, monkeypatch, request)
    w, q = _killable(tmp_path, bsd, 'echo "$1" >>"$T/ran"; exit 1', max_attempts=3, stale_after="1s")
    mark = tmp_path / "mark"
    mark.touch()
    env = {"MARK": str(mark), "KILL_WHEN": "before", "KILL_AT": "*/inbox/*"}
    assert w.run(env=env).returncode == -signal.SIGKILL
    time.sleep(1.1)
    mark.touch()
    env = {"MARK": str(mark), "KILL_WHEN": "after", "KILL_AT": "*/failed/*"}
    assert w.run(env=env).returncode == -signal.SIGKILL
    [claim] = _files(q / "processing")
    assert (q / "processing" / claim / "a.json").samefile(q / "failed" / "a.json")
    time.sleep(1.1)
    assert w.run(env={}).returncode == 0
    assert _files(q / "inbox") == [] and _files(q / "failed") == ["a.json"]
    assert _files(q / "processing") == []
    [rec] = w.events("recover")
    assert rec["item"] == "a.json" and rec["item_to"] == "failed", rec
    assert len((tmp_path / "ran").read_text().splitlines()) == 1


@pytest.mark.parametrize("which", ["gnu", "macos"])
def test_a_failed_item_whose_file_the_producer_linked_into_the_inbox_again_keeps_its_count(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, which: str) -> None:
    # A producer that delivers by link(2) (never over a file) delivers its file again while
    # the first delivery runs: the inbox then holds the item's own inode under its name.
    # Before the BSD change the item went back under a new name with its count (two
    # deliveries, the failed attempt counted); it must not vanish into the new delivery
    # with its attempt uncounted. GNU behaviour must be as before.
    path = SYSTEM_PATH if which == "gnu" else _bsd_path(tmp_path_factory, monkeypatch, request)
    q = tmp_path / "q"
    (q / "inbox").mkdir(parents=True)
    src = tmp_path / "src.json"
    src.write_text("{}")
    os.link(src, q / "inbox" / "a.json")
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"; ln "$T/src.json" "$T/q/inbox/a.json"; exit 1',
                   path=path, max_attempts=3)
    assert w.run().returncode == 1
    inbox = _files(q / "inbox")
    assert len(inbox) == 2, inbox
    counts = sorted((q / "processing" / ".attempts" / n).exists() for n in inbox)
    assert counts == [False, True]
    [fin] = w.events("finish")
    assert fin["item_to"] == "inbox"


def test_under_bsd_mv_a_folder_made_under_an_items_name_as_it_goes_back_does_not_swallow_it(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # A folder of the item's name lands in the inbox after the name was seen free: link(2)
    # into a folder puts the item inside it (inbox/a.json/a.json), where no run ever claims
    # it, while its record says inbox/a.json. GNU mv -T refuses; the item must go back
    # under a new name instead, as a file a run claims.
    race = 'case $1 in */inbox/a.json) [ ! -e "$MARK" ] || { rm -f "$MARK"; mkdir "$1"; } ;; esac'
    w, q, r = _raced_giving_back(tmp_path, _bsd_path(tmp_path_factory, monkeypatch, request),
                                 race)
    assert r.returncode == 1 and not (tmp_path / "mark").exists()   # it did land
    assert list((q / "inbox" / "a.json").iterdir()) == []
    [back] = [n for n in _files(q / "inbox") if n != "a.json"]
    assert (q / "inbox" / back).read_text() == "X"
    [fin] = w.events("finish")
    assert fin["item_to"] == "inbox" and w.manifests()[0]["item_path"] == str(q / "inbox" / back)


_CHAOS_CMD = r"""c=$(cat "$1")
mkdir "$T/run/$c" 2>/dev/null || echo "CONCURRENT $c" >>"$T/log"
if [ -e "$T/seen/$c" ]; then echo "ok $c" >>"$T/log"; st=0
else : >"$T/seen/$c"; echo "fail $c" >>"$T/log"; st=1; fi
sleep 0.05
rmdir "$T/run/$c"
exit $st"""


@pytest.mark.slow
def test_under_bsd_mv_workers_killed_at_random_never_run_an_item_twice_nor_lose_one(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Producers reuse three names; each file fails once, then succeeds; workers are
    # SIGKILLed at random (ln slowed, so that kills land between a link and its unlink).
    # No file may run twice at once, succeed twice, or vanish.
    bsd = _bsd_path(tmp_path_factory, monkeypatch, request)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ln").write_text(f'#!/bin/sh\n"{bsd[0]}/ln" "$@"; st=$?; sleep 0.02; exit $st\n')
    (shim / "ln").chmod(0o755)
    q = tmp_path / "q"
    (q / "inbox").mkdir(parents=True)
    for d in ("run", "seen"):
        (tmp_path / d).mkdir()
    w = _queue_job(tmp_path, _CHAOS_CMD, path=[str(shim), *bsd], max_attempts=5,
                   stale_after="1s", batch=0)
    contents = [f"c{i}" for i in range(30)]
    produced = threading.Event()
    rng = random.Random(int(os.environ.get("CHAOS_SEED", "0")) or None)

    def produce() -> None:
        produce_reusing_names(q / "inbox", tmp_path, contents, 3, produced)

    def work() -> None:
        deadline = time.monotonic() + 90
        while not produced.is_set() and time.monotonic() < deadline:
            p = w.popen()
            try:
                p.wait(timeout=rng.uniform(0.05, 0.4))
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
            p.communicate()

    threads = [threading.Thread(target=produce)] + [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    # Drain, no kills: past stale_after, every claim is recovered.
    for _ in range(15):
        time.sleep(1.1)
        w.run()
        if not _files(q / "inbox") and not _files(q / "processing"):
            break
    log = (tmp_path / "log").read_text().splitlines()
    assert [x for x in log if x.startswith("CONCURRENT")] == []
    ok = collections.Counter(x.split()[1] for x in log if x.startswith("ok "))
    assert [c for c, n in ok.items() if n > 1] == []
    assert _files(q / "inbox") == [] and _files(q / "processing") == []
    processed = collections.Counter((q / "processed" / n).read_text() for n in _files(q / "processed"))
    failed = {(q / "failed" / n).read_text() for n in _files(q / "failed")}
    assert [c for c, n in processed.items() if n > 1] == []
    assert [c for c in contents if c not in processed and c not in failed] == []
    assert [c for c in processed if ok[c] != 1] == []


def test_under_bsd_mv_a_done_item_linked_under_a_new_name_in_processed_is_not_linked_again(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Its name is taken in processed/, so it goes there as a.<run>.json; killed between the
    # link and the unlink. The recovering run must take it as there (as it does under its
    # own name), not link it once more as a.<its run>.json: one item, two files in processed/.
    bsd = _bsd_path(tmp_path_factory, monkeypatch, request)
    shim = _ln_killer(tmp_path / "shim", bsd)
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "inbox" / "a.json").write_text("X")
    (q / "processed").mkdir()
    (q / "processed" / "a.json").write_text("old")
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"', path=[str(shim), *bsd], stale_after="1s")
    mark = tmp_path / "mark"
    mark.touch()
    env = {"MARK": str(mark), "KILL_WHEN": "after", "KILL_AT": "*/processed/a.*.json"}
    assert w.run(env=env).returncode == -signal.SIGKILL
    assert len(_files(q / "processed")) == 2
    time.sleep(1.1)
    assert w.run(env={}).returncode == 0
    assert _files(q / "processing") == [] and _files(q / "inbox") == []
    done = sorted((q / "processed" / n).read_text() for n in _files(q / "processed"))
    assert done == ["X", "old"], _files(q / "processed")
    assert len((tmp_path / "ran").read_text().splitlines()) == 1


def test_under_bsd_mv_an_item_claimed_from_the_inbox_right_after_its_link_is_not_linked_twice(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Another run takes the item from the inbox (a rename) the instant it is linked there,
    # before the run that linked it looks again: that run must not take it for not there
    # and link it into the inbox a second time (two runs of one item, at once).
    bsd = _bsd_path(tmp_path_factory, monkeypatch, request)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ln").write_text(
        "#!/bin/bash\nfor last; do :; done\n"
        f'"{bsd[0]}/ln" "$@"; st=$?\n'
        'case $last in */inbox/*) [ ! -e "$MARK" ] || { rm -f "$MARK"; mv "$last" "$T/taken"; } ;; esac\n'
        'exit "$st"\n')
    (shim / "ln").chmod(0o755)
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"; exit 1', path=[str(shim), *bsd], max_attempts=3)
    (tmp_path / "mark").touch()
    assert w.run(env={"MARK": str(tmp_path / "mark")}).returncode == 1
    assert (tmp_path / "taken").exists()
    assert _files(q / "inbox") == [] and _files(q / "processing") == []
    [fin] = w.events("finish")
    assert fin["item_to"] == "inbox"
