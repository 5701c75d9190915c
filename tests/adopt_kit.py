"""A throwaway user's crontab behind the real `crontab` program, for the adopt tests.

`crontab` on PATH becomes `crontab -u USER`, so schedgen (run as root by the suite)
reads and writes that user's table with the real program; the real user's table is
never touched. The user is made once per test process and removed at its end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import write_executable

REAL = "/usr/bin/crontab"


def unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why}: CI must run this test (.ci/run installs cron and runs as root)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def throwaway_user() -> Iterator[str]:
    if not os.path.exists(REAL):
        unavailable("no /usr/bin/crontab (Debian package cron)")
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        unavailable("a throwaway user's crontab needs root and useradd")
    name = f"sgadopt{os.getpid()}"
    try:
        pwd.getpwnam(name)
    except KeyError:
        for _ in range(50):  # another worker may hold /etc/passwd's lock a moment
            r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                                "/bin/sh", name], capture_output=True, text=True)
            if r.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"useradd {name}: {r.stderr}")
    yield name
    subprocess.run([REAL, "-u", name, "-r"], capture_output=True)
    for _ in range(50):
        if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
            break
        time.sleep(0.1)


class UserCrontab:
    def __init__(self, user: str, bin_dir: Path) -> None:
        self.user = user
        write_executable(bin_dir / "crontab", f'#!/bin/sh\nexec {REAL} -u {user} "$@"\n')
        subprocess.run([REAL, "-u", user, "-r"], capture_output=True)

    def read(self) -> bytes | None:
        r = subprocess.run([REAL, "-u", self.user, "-l"], capture_output=True)
        return r.stdout if r.returncode == 0 else None

    def set(self, table: bytes, where: Path) -> None:
        where.write_bytes(table)
        subprocess.run([REAL, "-u", self.user, str(where)], check=True)

    def close(self) -> None:
        subprocess.run([REAL, "-u", self.user, "-r"], capture_output=True)


@pytest.fixture
def user_crontab(throwaway_user: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[UserCrontab]:
    bin_dir = tmp_path / "crontab-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    tab = UserCrontab(throwaway_user, bin_dir)
    try:
        yield tab
    finally:
        tab.close()
