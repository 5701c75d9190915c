"""apply killed or stopped while it writes the crontab, and crontabs it cannot write back.

Real processes and real signals: schedgen runs as a user would (`python -m schedgen`),
the fake crontab (tests/fakes.py) waits before it reads the new table, and the test
kills or signals schedgen in that window.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schedgen.targets.wrappers import WrapperTarget
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, schedgen_process, write_config
from tests.test_apply_cron import FOREIGN, JOBS, foreign


@pytest.fixture
def cron(fake_crontab: FakeCrontab, tmp_path: Path) -> FakeCrontab:
    fake_crontab.set(FOREIGN)
    write_config(tmp_path / "jobs.toml", JOBS)
    return fake_crontab


def _start_apply(tmp_path: Path, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "schedgen", "apply"], cwd=tmp_path,
                            env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _until(what, timeout: float = 20.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_a_kill_9_of_apply_while_crontab_installs_leaves_a_whole_table(
        cron: FakeCrontab, tmp_path: Path) -> None:
    # `crontab -` would install whatever it had read when the pipe closed: here, nothing.
    p = _start_apply(tmp_path, FAKE_CRONTAB_WRITE_DELAY="1")
    _until(lambda: cron.writes())
    p.kill()
    p.wait()
    _until(lambda: b"# BEGIN schedgen namespace=default" in (cron.read() or b""))
    table = cron.read()
    assert table is not None
    assert foreign(table) == FOREIGN + b"\n"   # every line of the user's, as it was
    assert b"# END schedgen namespace=default\n" in table


def test_a_term_during_the_crontab_step_waits_for_it_then_exits_143_with_the_record_saved(
        cron: FakeCrontab, tmp_path: Path) -> None:
    p = _start_apply(tmp_path, FAKE_CRONTAB_WRITE_DELAY="0.5")
    _until(lambda: cron.writes())
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 143, err
    assert b"interrupted by SIGTERM; stopped after the step in progress" in err
    assert b"Not done:\n  nothing" in err   # the crontab step was the last, and it ended
    assert foreign(cron.read()) == FOREIGN + b"\n"
    # The record followed: the table and the job files are what it says, nothing pending.
    r = schedgen("diff", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_term_during_a_job_file_step_stops_before_the_crontab_and_puts_them_back(
        cron: FakeCrontab, tmp_path: Path, home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert schedgen("apply", cwd=tmp_path).returncode == 0
    wrappers = home / ".local/share/schedgen/wrappers"
    old = (wrappers / "alpha.sh").read_bytes()
    table = cron.read()
    write_config(tmp_path / "jobs.toml", JOBS.replace('"echo", "alpha"', '"echo", "alpha2"')
                 .replace("*/5 * * * *", "7 * * * *"))
    # A real SIGTERM to this process (apply runs in it, in the main thread) while the
    # new alpha.sh is written: held, then acted on before the crontab step.
    real = WrapperTarget.apply

    def apply_then_term(self, change, ctx) -> None:  # noqa: ANN001
        real(self, change, ctx)
        if change.path is not None and change.path.name == "alpha.sh":
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(WrapperTarget, "apply", apply_then_term)
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 143, r.stdout + r.stderr
    assert "interrupted by SIGTERM" in r.stderr
    assert "Put back as it was:" in r.stderr
    assert cron.read() == table
    assert (wrappers / "alpha.sh").read_bytes() == old   # old schedule, old command
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL   # handlers restored


def test_a_crontab_that_says_it_installed_but_did_not_is_a_failure(
        cron: FakeCrontab, tmp_path: Path, home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CRONTAB_DISCARD", "1")
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "crontab reported success, but the crontab it now lists is not the one" in r.stderr
    assert cron.read() == FOREIGN
    # The job files it wrote are gone again: none of them runs from an old table.
    assert not (home / ".local/share/schedgen/wrappers/alpha.sh").exists()


# What Debian's `crontab -l` prints for a table saved with CRLF line ends.
CRLF_LISTED = b"SHELL=/bin/bash\\r\n15 3 * * * /usr/bin/backup.sh\\r\n"


def test_a_crlf_table_is_refused_by_apply_and_named_by_diff(
        cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    cron.set(CRLF_LISTED)
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Windows (CRLF) line ends (lines 1, 2" in r.stderr
    assert cron.read() == CRLF_LISTED
    assert cron.writes() == []
    assert not (home / ".local/share/schedgen/wrappers/alpha.sh").exists()
    d = schedgen("diff", cwd=tmp_path)
    assert "warning: apply will refuse to write it:" in d.stdout + d.stderr


def test_a_literal_backslash_r_inside_a_line_is_not_taken_for_crlf(
        cron: FakeCrontab, tmp_path: Path) -> None:
    table = b"0 1 * * * tr -d '\\r' <a >b\n"
    cron.set(table)
    assert schedgen("apply", cwd=tmp_path).returncode == 0
    assert foreign(cron.read()) == table


def test_the_temp_file_a_killed_apply_left_beside_a_job_file_goes_with_its_next_write(
        cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    wrappers = home / ".local/share/schedgen/wrappers"
    wrappers.mkdir(parents=True)
    stale = wrappers / ".alpha.sh.k2j4h5g6.tmp"   # what a write stages, killed mid-write
    stale.write_text("#!/bin/bash\n# half a job fi")
    others = [wrappers / ".notes.k2j4h5g6.tmp", wrappers / ".alpha.sh.tmp"]
    for f in others:
        f.write_text("not ours")
    assert schedgen("apply", cwd=tmp_path).returncode == 0
    assert not stale.exists()
    assert all(f.read_text() == "not ours" for f in others)


def test_a_job_file_that_cannot_be_written_is_not_said_to_be_left_unrestored(
        cron: FakeCrontab, tmp_path: Path, home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A full disk at the second job file: the first is put back; the second was never
    # changed (a file is replaced whole or not at all), so nothing is "not put back".
    from schedgen.machine import ops

    real = ops.stage

    def full(path: Path, data: bytes, mode: int = 0o644) -> Path:
        if path.name == "beta.sh":
            raise OSError(28, "No space left on device")
        return real(path, data, mode)

    assert schedgen("apply", cwd=tmp_path).returncode == 0
    wrappers = home / ".local/share/schedgen/wrappers"
    old = {n: (wrappers / n).read_bytes() for n in ("alpha.sh", "beta.sh")}
    table = cron.read()
    write_config(tmp_path / "jobs.toml", JOBS.replace('"echo", "alpha"', '"echo", "alpha2"')
                 .replace('"echo beta"', '"echo beta2"'))
    monkeypatch.setattr(ops, "stage", full)   # beta.sh: every write fails, undo's too
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "cannot write" in r.stderr and "beta.sh: No space left on device" in r.stderr
    assert "Could not be put back" not in r.stderr
    assert "Put back as it was:" in r.stderr
    assert {n: (wrappers / n).read_bytes() for n in old} == old
    assert cron.read() == table


def test_a_kill_9_in_the_crontab_step_leaves_the_table_only_in_schedgens_private_folder(
        cron: FakeCrontab, tmp_path: Path) -> None:
    # The table is handed to crontab as a file; kill -9 leaves that file. It holds the
    # user's whole crontab, so it is in schedgen's private folder, and a later apply
    # removes it once it is old enough to be no apply's in progress.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = _start_apply(tmp_path, FAKE_CRONTAB_WRITE_DELAY="1", TMPDIR=str(tmp))
    _until(lambda: cron.writes())
    p.kill()
    p.wait()
    _until(lambda: b"# BEGIN schedgen namespace=default" in (cron.read() or b""))
    private = tmp / f"schedgen-{os.getuid()}"
    assert list(tmp.iterdir()) == [private]
    assert private.stat().st_mode & 0o777 == 0o700
    [left] = private.iterdir()
    assert left.stat().st_mode & 0o777 == 0o600 and FOREIGN in left.read_bytes()
    write_config(tmp_path / "jobs.toml", JOBS.replace("alpha", "alpha2"))
    # A process of its own: tempfile keeps the TMPDIR it saw first.
    assert schedgen_process("apply", "--prune", cwd=tmp_path,
                            env={"TMPDIR": str(tmp)}).returncode == 0
    assert left.exists()  # young: it could be an apply's of another state dir, in progress
    os.utime(left, (time.time() - 3600, time.time() - 3600))
    write_config(tmp_path / "jobs.toml", JOBS)
    assert schedgen_process("apply", "--prune", cwd=tmp_path,
                            env={"TMPDIR": str(tmp)}).returncode == 0
    assert list(private.iterdir()) == []
