"""Reading installed files to compare them (apply and diff in sync, status) writes nothing:
not even the access time of each job file (a disk write per job on a relatime mount)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from pathlib import Path

import pytest

from schedgen.errors import SystemOpError
from schedgen.machine import ops
from schedgen.machine.ops import read_file
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, schedgen_process, write_config

OLD, NEWER = 1_000_000_000, 2_000_000_000  # access time before modification: relatime updates


def _aged(path: Path) -> Path:
    path.write_text("#!/bin/bash\n")
    path.chmod(0o755)
    os.utime(path, ns=(OLD, NEWER))
    return path


def test_reading_an_installed_file_leaves_its_access_time(tmp_path: Path) -> None:
    control = _aged(tmp_path / "control")
    control.read_bytes()
    if os.stat(control).st_atime_ns == OLD:
        pytest.skip("this file system does not update access times on reads")
    job = _aged(tmp_path / "job.sh")
    assert read_file(job) == ("#!/bin/bash\n", 0o755)
    assert os.stat(job).st_atime_ns == OLD


def test_a_file_of_another_owner_is_read_the_ordinary_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # O_NOATIME is refused (EPERM) on a file the reader does not own (root may use it).
    real_open = os.open

    def strict(path: object, flags: int, *a: object) -> int:
        if flags & getattr(os, "O_NOATIME", 0):
            raise OSError(errno.EINVAL if "einval" in str(path) else errno.EPERM, "refused")
        return real_open(path, flags, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(ops.os, "open", strict)
    assert read_file(_aged(tmp_path / "job.sh")) == ("#!/bin/bash\n", 0o755)
    # a file system that does not know the flag
    assert read_file(_aged(tmp_path / "einval.sh")) == ("#!/bin/bash\n", 0o755)


def test_absent_and_folder(tmp_path: Path) -> None:
    assert read_file(tmp_path / "none") == (None, None)
    with pytest.raises(SystemOpError, match="is a directory"):
        read_file(tmp_path)


@pytest.mark.parametrize("command", [("diff",), ("status",), ("apply",), ("apply", "--force"),
                                     ("check",), ("uninstall",)])
def test_a_fifo_at_a_job_files_path_stops_no_command(fake_crontab: FakeCrontab, tmp_path: Path,
                                                     home: Path, command: tuple[str, ...]) -> None:
    # Opening a FIFO for reading waits for a writer: a command reading the job file
    # would hang for ever (with the apply lock held). It is no file of schedgen's.
    write_config(tmp_path / "jobs.toml", '[jobs.m]\ncommand = "true"\nschedule = "@hourly"\n'
                 'targets = ["cron"]\n')
    assert schedgen("apply", cwd=tmp_path).returncode == 0
    job = home / ".local/share/schedgen/wrappers/m.sh"
    job.unlink()
    os.mkfifo(job)
    try:
        r = schedgen_process(*command, cwd=tmp_path, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"schedgen {' '.join(command)} hung on a FIFO at {job}")
    finally:
        with contextlib.suppress(OSError):  # a hung reader let go
            os.close(os.open(job, os.O_WRONLY | os.O_NONBLOCK))
    assert "Traceback" not in r.stderr
    assert r.returncode != 0 and f"{job} is not a regular file" in r.stdout + r.stderr
    assert job.is_fifo()


def test_a_device_is_not_read(tmp_path: Path) -> None:
    # /dev/zero linked at a job file's path would be read for ever
    (tmp_path / "job.sh").symlink_to("/dev/zero")
    with pytest.raises(SystemOpError, match="is not a regular file"):
        read_file(tmp_path / "job.sh")
    # a masked systemd unit (a link to /dev/null) reads empty, as it did
    (tmp_path / "x.timer").symlink_to(os.devnull)
    assert read_file(tmp_path / "x.timer")[0] == ""
