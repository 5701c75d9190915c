"""A throwaway user's crontab behind the real `crontab` program, for the adopt tests.

`crontab` on PATH becomes `crontab -u USER`, so schedgen (run as root by the suite)
reads and writes that user's table with the real program; the real user's table is
never touched. The user is the suite's `cron_user` (tests/plugin.py).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import write_executable

REAL = "/usr/bin/crontab"


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
def user_crontab(cron_user: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[UserCrontab]:
    bin_dir = tmp_path / "crontab-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    tab = UserCrontab(cron_user, bin_dir)
    try:
        yield tab
    finally:
        tab.close()
