"""A new user's first hour, end to end: their crontab, the real `crontab` and cron daemon.

A crontab of 8 lines (a comment, SHELL, MAILTO, HOME, an every-minute heartbeat with
`\\%`, a `*/5`, an `@reboot`, and a line whose `%` feeds stdin, which import leaves to
cron) → import → diff → apply → cron fires the heartbeat, and it runs once per firing
(counted: the original line is off) → the other lines byte-exact, the backup there →
uninstall → the crontab is back byte for byte.

The table is a throwaway user's (tests/adopt_kit.py), so cron runs its jobs as that
user: the test hands the files schedgen wrote as root to that user, as they would be
had the user run schedgen. It waits for one real firing (at most about a minute).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adopt_kit import UserCrontab, user_crontab  # noqa: F401
from tests.helpers import schedgen
from tests.test_e2e_cron import cron_daemon  # noqa: F401

pytestmark = pytest.mark.e2e
WAIT = 130  # seconds: cron reads a changed table at the next minute, then runs the job


@pytest.fixture
def user_home(cron_user: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:  # noqa: F811
    h = Path(tempfile.mkdtemp(prefix="sgjourney", dir="/tmp"))  # the user must reach it
    h.chmod(0o755)
    shutil.chown(h, cron_user)
    monkeypatch.setenv("HOME", str(h))
    try:
        yield h
    finally:
        shutil.rmtree(h, ignore_errors=True)


def test_import_apply_fires_once_and_uninstall_gives_the_crontab_back(
        cron_daemon: None, user_crontab: UserCrontab, user_home: Path,  # noqa: F811
        cron_user: str) -> None:  # noqa: F811
    h = user_home
    table = (f"# my crontab\nSHELL=/bin/sh\nMAILTO=me@example.com\nHOME={h}\n"
             "* * * * * date +\\%Y\\%m\\%d\\%H\\%M >> ~/beat.log\n"
             "*/5 * * * * ~/bin/sync.sh\n"
             "@reboot echo up >> ~/boot.log\n"
             "0 9 * * 1 echo hi | mail -s weekly me%report body\n").encode()
    user_crontab.set(table, h / "original")

    def run(*args: str):  # noqa: ANN202
        r = schedgen(*args, cwd=h)
        assert "Traceback" not in r.stderr, r.stderr
        return r

    r = run("import", "--from", "cron", "-o", "jobs.toml")
    assert r.returncode == 0, r.stderr
    assert "MAILTO=me@example.com" in r.stderr and "line 8: skipped" in r.stderr
    d = run("diff")
    assert d.returncode == 1 and d.stdout.count("apply comments it out") == 3, d.stdout
    a = run("apply")
    assert a.returncode == 0, a.stderr
    backup = h / ".local/state/schedgen/crontab-before-schedgen"
    assert backup.read_bytes() == table and f"`crontab {backup}` puts it back" in a.stdout
    subprocess.run(["chown", "-R", cron_user, str(h)], check=True)

    installed = user_crontab.read()
    assert installed is not None
    lines = installed.decode().split("\n")
    assert lines[:4] == table.decode().split("\n")[:4]  # the user's own, byte-exact
    assert lines[7] == "0 9 * * 1 echo hi | mail -s weekly me%report body"
    assert all(ln.startswith("#schedgen-adopted ns=default job=") for ln in lines[4:7])
    active = [ln for ln in lines if ln and not ln.startswith("#") and "=" not in ln.split()[0]]
    assert len(active) == 4, active  # one line per job: 3 of schedgen's, the one left to cron

    runs = h / ".local/state/schedgen/logs/beat/runs"
    deadline = time.monotonic() + WAIT
    fired = None
    while fired is None and time.monotonic() < deadline:
        for m in runs.glob("*/schedgen-manifest.json"):
            data = json.loads(m.read_text() or "{}")
            if data.get("finished_at"):
                fired = data
        time.sleep(0.5)
    assert fired is not None, f"cron did not run the heartbeat's job file within {WAIT}s"
    assert fired["exit_code"] == 0, fired
    time.sleep(1)  # an original line firing the same minute would have written by now
    beats = (h / "beat.log").read_text().split()
    assert beats and len(beats) == len(set(beats)), beats  # never two in one minute

    assert run("status", "--check").returncode == 0
    u = run("uninstall")
    assert u.returncode == 0, u.stderr
    assert user_crontab.read() == table  # byte for byte
