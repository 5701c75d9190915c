"""Apply stages the files it writes and puts them in place together, durable, before the
command that makes them live (docs/performance.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen.errors import SystemOpError
from schedgen.machine.ops import DryOps, Ops
from tests.fakes import FakeCrontab
from tests.helpers import write_config


def test_a_written_file_is_in_place_once_a_command_runs(tmp_path: Path) -> None:
    ops = Ops()
    job = tmp_path / "w" / "job.sh"
    ops.write(job, "new\n", 0o755)
    assert not job.exists()   # staged beside it, whole, not yet in place
    assert ops.run(["true"]).ok
    assert job.read_text() == "new\n" and job.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in job.parent.iterdir()] == ["job.sh"]   # no temp file left


def test_written_twice_the_last_content_counts_and_no_temp_file_is_left(
        tmp_path: Path) -> None:
    ops = Ops()
    f = tmp_path / "w" / "a"
    ops.write(f, "one", 0o644)
    ops.write(f, "two", 0o600)
    ops.commit()
    assert f.read_text() == "two" and f.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in f.parent.iterdir()) == ["a"]


def test_a_removal_comes_after_the_writes_before_it(tmp_path: Path) -> None:
    ops = Ops()
    keep, gone = tmp_path / "w" / "keep", tmp_path / "w" / "gone"
    gone.parent.mkdir()
    gone.write_text("old")
    ops.write(keep, "k", 0o644)
    ops.write(gone, "g", 0o644)
    ops.remove(gone)
    assert keep.read_text() == "k" and not gone.exists()
    assert sorted(p.name for p in keep.parent.iterdir()) == ["keep"]


def test_a_dry_run_stages_nothing(tmp_path: Path) -> None:
    ops = DryOps()
    ops.write(tmp_path / "w" / "a", "x", 0o644)
    ops.commit()
    assert not (tmp_path / "w").exists()


def test_a_file_that_cannot_be_put_in_place_is_an_error_and_leaves_no_temp_file(
        tmp_path: Path) -> None:
    ops = Ops()
    target = tmp_path / "d"
    target.mkdir()
    ops.write(target / "x", "x", 0o644)
    (target / "x").mkdir()   # a folder where the file goes: the rename fails
    with pytest.raises(SystemOpError, match="cannot put the files written in place"):
        ops.commit()
    assert sorted(p.name for p in target.iterdir()) == ["x"]


def test_files_flushed_early_and_written_after_are_all_durable_and_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.machine import fs

    asked: list[list[str]] = []
    real = fs.sync_files
    monkeypatch.setattr(fs, "sync_files", lambda files: (asked.append(sorted(map(str, files))),
                                                         real(files))[1])
    ops = Ops()
    early = [tmp_path / "w" / f"e{i}" for i in range(8)]
    for f in early:
        ops.write(f, f.name, 0o644)
    ops.flush_early()
    ops.write(tmp_path / "w" / "late", "late", 0o644)
    ops.write(early[0], "again", 0o644)  # written twice: the new content is not flushed yet
    ops.commit()
    assert [f.read_text() for f in early] == ["again", *(f.name for f in early[1:])]
    assert (tmp_path / "w" / "late").read_text() == "late"
    # the flush covered the first eight; the two written since are flushed at commit
    assert len(asked) == 1 and len(asked[0]) == (10 if shutil.which("sync") is None
                                                 or not sys.platform.startswith("linux")
                                                 else 2)
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == sorted(
        [f.name for f in early] + ["late"])


def test_a_flush_that_fails_leaves_the_files_to_commit(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.machine import fs

    monkeypatch.setattr(fs, "SYNC", ("/bin/false",))  # a `sync` that refuses the option
    asked: list[int] = []
    real = fs.sync_files
    monkeypatch.setattr(fs, "sync_files", lambda files: (asked.append(len(list(files))),
                                                         real(files))[1])
    ops = Ops()
    for i in range(6):
        ops.write(tmp_path / "w" / f"f{i}", str(i), 0o644)
    ops.flush_early()
    ops.commit()
    assert asked == [6]  # all of them, flushed at commit as without the early flush
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == [f"f{i}" for i in range(6)]


def _staging(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def test_a_folder_not_there_is_staged_whole_and_comes_in_one_rename(tmp_path: Path) -> None:
    ops = Ops()
    folder = tmp_path / "share" / "w"
    ops.write(folder / "a.sh", "a", 0o755)
    ops.write(folder / "b", "b", 0o600)
    ops.write(folder / "a.sh", "a2", 0o755)  # written twice: the last content counts
    assert not folder.exists()
    [staging] = _staging(folder.parent, "w")
    assert re.fullmatch(r"\.w\.[0-9a-f]{8}\.tmp", staging)
    assert sorted(p.name for p in (folder.parent / staging).iterdir()) == ["a.sh", "b"]
    ops.commit()
    assert sorted(p.name for p in folder.iterdir()) == ["a.sh", "b"]
    assert (folder / "a.sh").read_text() == "a2" and (folder / "a.sh").stat().st_mode & 0o777 == 0o755
    assert (folder / "b").stat().st_mode & 0o777 == 0o600
    assert _staging(folder.parent, "w") == []
    ops.write(folder / "c", "c", 0o644)  # there now: staged beside its path, as ever
    ops.commit()
    assert sorted(p.name for p in folder.iterdir()) == ["a.sh", "b", "c"]


def test_a_staging_folder_a_killed_apply_left_is_swept_not_anothers(tmp_path: Path) -> None:
    parent = tmp_path / "share"
    left = parent / ".w.0123abcd.tmp"
    left.mkdir(parents=True)
    (left / "job.sh").write_text("half")
    theirs = parent / ".w.89abcdef.tmp"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)  # another account's: left alone
    other_name = parent / ".wx.0123abcd.tmp"  # another folder's
    other_name.mkdir()
    ops = Ops()
    ops.write(parent / "w" / "job.sh", "whole", 0o755)
    ops.commit()
    assert (parent / "w" / "job.sh").read_text() == "whole"
    assert sorted(p.name for p in parent.iterdir()) == [".w.89abcdef.tmp", ".wx.0123abcd.tmp", "w"]


def test_a_folder_named_two_ways_keeps_the_files_staged_under_either(tmp_path: Path) -> None:
    """Two jobs' wrapper_dir, one through a link: the second staging folder's sweep took
    the first one (this account's, beside it) for a killed apply's leftovers, and its
    files were lost and the commit failed."""
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    ops = Ops()
    ops.write(tmp_path / "real" / "w" / "j1.sh", "1", 0o755)
    ops.write(tmp_path / "alias" / "w" / "j2.sh", "2", 0o755)
    ops.commit()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["w"]
    assert [(p.name, p.read_text()) for p in sorted((tmp_path / "real" / "w").iterdir())] == [
        ("j1.sh", "1"), ("j2.sh", "2")]


def test_a_folder_that_comes_meanwhile_gets_the_files_one_by_one(tmp_path: Path) -> None:
    ops = Ops()
    folder = tmp_path / "w"
    ops.write(folder / "a", "a", 0o644)
    folder.mkdir()
    (folder / "mine").write_text("kept")
    ops.commit()
    assert sorted(p.name for p in folder.iterdir()) == ["a", "mine"]
    assert (folder / "mine").read_text() == "kept" and _staging(tmp_path, "w") == []


def test_anything_done_in_a_staged_folder_puts_it_in_place_first(tmp_path: Path) -> None:
    ops = Ops()
    folder = tmp_path / "w"
    ops.write(folder / "a", "a", 0o644)
    ops.symlink(folder / "link", Path("a"))
    assert sorted(p.name for p in folder.iterdir()) == ["a", "link"]
    ops.write(tmp_path / "v" / "b", "b", 0o644)
    ops.mkdir(tmp_path / "v" / "sub")
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == ["b", "sub"]


def test_a_staged_folder_that_cannot_come_in_place_leaves_nothing_behind(tmp_path: Path) -> None:
    ops = Ops()
    folder = tmp_path / "w"
    ops.write(folder / "x", "x", 0o644)
    (folder / "x").mkdir(parents=True)  # the folder came, with a folder where the file goes
    with pytest.raises(SystemOpError, match="cannot put the files written in place"):
        ops.commit()
    assert _staging(tmp_path, "w") == []
    assert [p.name for p in folder.iterdir()] == ["x"] and (folder / "x").is_dir()


JOBS = "[defaults]\ntargets = [\"cron\"]\n" + "".join(
    f'\n[jobs.j{i}]\ncommand = ["echo", "{i}"]\nschedule = "{i} * * * *"\n' for i in range(12))


@pytest.mark.skipif(shutil.which("strace") is None or not sys.platform.startswith("linux"),
                    reason="needs strace on Linux")
def test_a_first_install_syncs_once_not_once_per_file(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS)
    log = tmp_path / "strace.log"
    r = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e",
                        "trace=fsync,fdatasync,syncfs,execve,rename", "-e", "signal=none",
                        sys.executable, "-m", "schedgen", "apply"], cwd=tmp_path,
                       env=os.environ.copy(), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    calls = log.read_text().splitlines()
    wrappers = home / ".local/share/schedgen/wrappers"
    assert len(list(wrappers.glob("j*.sh"))) == 12
    names = [m.group(1) for c in calls if (m := re.match(r"\d+\s+(\w+)\(", c))]
    # 13 files (12 jobs, the runtime): one syncfs; fsyncs only of the folders and the
    # record (and caches), never one per file.
    assert names.count("syncfs") == 1
    assert names.count("fsync") + names.count("fdatasync") <= 4
    # The folder was not there: its files were staged in a folder beside it, which comes
    # in place whole, in one rename (none per file), before crontab(1) runs ...
    first_crontab_write = next(i for i, c in enumerate(calls)
                               if "execve(" in c and "crontab" in c and '"-l"' not in c)
    renamed = [i for i, c in enumerate(calls)
               if "rename(" in c and '/.wrappers.' in c and f'"{wrappers}")' in c]
    assert len(renamed) == 1 and max(renamed) < first_crontab_write
    assert not [c for c in calls if "rename(" in c and f"{wrappers}/j" in c]
    # ... and after the flush (its own `sync --file-system`, begun as the crontab step
    # read the table again) has ended.
    flushed = next(i for i, c in enumerate(calls) if re.search(r"syncfs.*= 0$", c))
    assert flushed < min(renamed)


@pytest.mark.skipif(shutil.which("strace") is None or not sys.platform.startswith("linux"),
                    reason="needs strace on Linux")
def test_a_change_to_one_job_file_fsyncs_it_and_flushes_nothing_else(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS)
    assert subprocess.run([sys.executable, "-m", "schedgen", "apply"], cwd=tmp_path,
                          capture_output=True).returncode == 0
    write_config(tmp_path / "jobs.toml", JOBS.replace('["echo", "3"]', '["echo", "three"]'))
    log = tmp_path / "strace.log"
    r = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e",
                        "trace=fsync,fdatasync,syncfs", "-e", "signal=none",
                        sys.executable, "-m", "schedgen", "apply"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    names = [m.group(1) for c in log.read_text().splitlines()
             if (m := re.match(r"\d+\s+(\w+)\(", c))]
    assert "syncfs" not in names and names.count("fsync") >= 2   # the file, its folder
    assert "three" in (home / ".local/share/schedgen/wrappers/j3.sh").read_text()


def test_a_program_run_gives_its_output_and_status_and_one_that_hangs_is_cut_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.machine import ops

    r = ops.run(["sh", "-c", "cat; echo err >&2; exit 3"], input=b"in\xff")
    assert (r.returncode, r.stdout, r.stderr) == (3, "in\udcff", "err\n")
    monkeypatch.setattr(ops, "TIMEOUT", 0.5)
    with pytest.raises(SystemOpError, match="no answer after 0.5 seconds"):
        ops.run(["sleep", "30"])
    assert ops.run(["sh", "-c", "exit 0"]).ok  # waited for by its exit, not by polling
