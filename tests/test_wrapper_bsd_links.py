"""Moves out of a claim by link(2) and unlink under BSD mv: kills between the two steps,
and files that already share an item's inode."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.test_wrapper_faults import _bsd_path, _files, _queue_job
from tests.wrapper_kit import SYSTEM_PATH, fill_inbox


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


def test_under_bsd_mv_an_unsure_item_whose_move_to_failed_was_cut_short_is_not_said_linked(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    # Run 1 dies after journaling "l" and before the link: the item is unsure. Run 2, recovering
    # it, dies between linking it into failed/ and unlinking its claim's name: the item now has
    # one link more than "l" says, but that link is failed/'s, not the inbox's. Run 3 must not
    # record it as gone back to the inbox.
    bsd = _bsd_path(tmp_path_factory, monkeypatch, request)
    shim = _ln_killer(tmp_path / "shim", bsd)
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = _queue_job(tmp_path, 'echo "$1" >>"$T/ran"; exit 1', path=[str(shim), *bsd],
                   max_attempts=3, stale_after="1s")
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
    path = _bsd_path(tmp_path_factory, monkeypatch, request)
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    (q / "inbox" / "a.json").write_text("X")
    w = _queue_job(tmp_path, 'cat "$1" >>"$T/ran"; exit 1', path=path, max_attempts=3)
    (tmp_path / "mark").touch()
    race = 'case $1 in */inbox/a.json) [ ! -e "$MARK" ] || { rm -f "$MARK"; mkdir "$1"; } ;; esac'
    r = w.run(env={"BSD_SHIM_RACE": race, "MARK": str(tmp_path / "mark")})
    assert r.returncode == 1 and not (tmp_path / "mark").exists()   # it did land
    assert list((q / "inbox" / "a.json").iterdir()) == []
    [back] = [n for n in _files(q / "inbox") if n != "a.json"]
    assert (q / "inbox" / back).read_text() == "X"
    [fin] = w.events("finish")
    assert fin["item_to"] == "inbox" and w.manifests()[0]["item_path"] == str(q / "inbox" / back)
