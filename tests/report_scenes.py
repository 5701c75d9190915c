"""Scenes for `schedgen report`, from real wrapper runs under faketime: a fresh install
(one hour of runs) and a month with failures. Runs too many to make for real repeat a
real run's events at other times (tests/records_kit.py); the failures that have a log to
show are real runs.

`python -m tests.report_scenes docs/report.png` makes the month's page in a temporary
home (fake crontab) and screenshots it with headless Chromium: the picture in the docs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import NamedTuple

from schedgen.machine import ownership as state
from tests import faked_clock
from tests.helpers import write_config
from tests.records_kit import at, replicate
from tests.test_outcomes import run_at

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
COMMAND = ('case "${MODE:-ok}" in fail) echo "fetch: connection refused (db.internal:5432)" >&2; '
           'echo "giving up after 3 tries" >&2; exit 3;; '
           'slow) echo "copying..."; sleep 30;; *) echo fine;; esac')

FRESH_NOW = "2026-01-09 12:00:00"
FRESH = """
[defaults]
targets = ["cron"]
log_root = "{root}/logs"
lock_dir = "{root}/locks"
wrapper_dir = "{root}/wrappers"

[jobs.sync]
description = "Mirror the inbox"
command = '{command}'
schedule = "* * * * *"
timeout = "1s"

[jobs.nightly]
command = "true"
schedule = "30 2 * * *"
"""

MONTH_NOW = "2026-02-01 12:00:00"
MONTH = """
[defaults]
targets = ["cron"]
log_root = "{root}/logs"
lock_dir = "{root}/locks"
wrapper_dir = "{root}/wrappers"

[jobs.hourly]
description = "Refresh the cache"
command = '{command}'
schedule = "0 * * * *"
timeout = "1s"

[jobs.nightly]
description = "Back up the database"
command = '{command}'
schedule = "0 2 * * *"
timeout = "1s"

[jobs.burst]
description = "Import the uploads"
command = '{command}'
schedule = "0 9 * * *"
timeout = "1s"
"""


class Scene(NamedTuple):
    config: Path
    page: Path
    stdout: str
    # job -> [(UTC time "YYYY-mm-dd HH:MM:SS", outcome)] of the real runs
    real: dict[str, list[tuple[str, str]]]


def _install(root: Path, text: str, installed: str) -> Path:
    config = write_config(root / "jobs.toml", text.format(root=root, command=COMMAND))
    subprocess.run([sys.executable, "-m", "schedgen", "apply", "-c", str(config)], check=True,
                   capture_output=True)
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at=installed)
    state.save(record)
    return config


def _runs(root: Path, job: str, runs: list[tuple[str, str]]) -> None:
    for when, mode in runs:
        code = run_at(root, job, when, MODE=mode)
        assert code == {"ok": 0, "fail": 3, "slow": 124}[mode], (job, when, mode, code)


def _report(root: Path, config: Path, now: str, *args: str) -> tuple[Path, str]:
    # Beside the logs: failures link to their log files.
    out = root / "logs" / "report.html"
    r = faked_clock.run(now, [sys.executable, "-m", "schedgen", "report",
                              "--out", str(out), "-c", str(config), *args], frozen=True,
                        capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    assert r.returncode == 0, r.stderr
    return out, r.stdout


def fresh(root: Path) -> Scene:
    """Installed an hour ago: `sync` every minute (55 copies of a real run, then five real
    ones: ok, failed, timeout, ok, failed), `nightly` not run yet."""
    config = _install(root, FRESH, "2026-01-09T11:00:00Z")
    real = [("2026-01-09 11:55:02", "ok"), ("2026-01-09 11:56:01", "fail"),
            ("2026-01-09 11:57:01", "slow"), ("2026-01-09 11:58:02", "ok"),
            ("2026-01-09 11:59:01", "fail")]
    _runs(root, "sync", real)
    replicate(root / "logs" / "sync", 55, at("2026-01-09 11:00:02"), timedelta(minutes=1))
    page, out = _report(root, config, FRESH_NOW)
    return Scene(config, page, out, {"sync": real})


def month(root: Path) -> Scene:
    """Thirty days: `hourly` (720 copies, one in 50 failed, then a real failure),
    `nightly` (25 copies, one in 7 failed, then five real nights with two failures and a
    timeout; Feb 1 02:00 missed) and `burst` (daily at 09:00: copies, then on Jan 28 four
    failures and two timeouts within 25 minutes, its firing and five runs by hand, then an
    ok run)."""
    config = _install(root, MONTH, "2026-01-02T11:00:00Z")
    real = {
        "hourly": [("2026-02-01 11:00:01", "fail")],
        "nightly": [("2026-01-27 02:00:01", "fail"), ("2026-01-28 02:00:02", "ok"),
                    ("2026-01-29 02:00:01", "slow"), ("2026-01-30 02:00:01", "fail"),
                    ("2026-01-31 02:00:02", "ok")],
        "burst": [("2026-01-28 09:00:01", "fail"), ("2026-01-28 09:05:01", "fail"),
                  ("2026-01-28 09:10:01", "slow"), ("2026-01-28 09:15:01", "fail"),
                  ("2026-01-28 09:20:01", "slow"), ("2026-01-28 09:25:01", "fail"),
                  ("2026-01-31 09:00:02", "ok")],
    }
    for job, runs in real.items():
        _runs(root, job, runs)
    ok, failed = ("ok", 0), ("failed", 3)
    replicate(root / "logs" / "hourly", 719, at("2026-01-02 12:00:01"), timedelta(hours=1),
              outcomes=(ok,) * 49 + (failed,))
    replicate(root / "logs" / "nightly", 25, at("2026-01-02 02:00:01"), timedelta(days=1),
              outcomes=(ok,) * 6 + (failed,))
    replicate(root / "logs" / "burst", 25, at("2026-01-03 09:00:02"), timedelta(days=1))
    page, out = _report(root, config, MONTH_NOW)
    return Scene(config, page, out, real)


def screenshot(page: Path, png: Path, height: int = 800) -> None:
    assert CHROMIUM is not None, "chromium is not installed (.ci/run installs it)"
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--window-size=1280,{height}",
                        f"--screenshot={png}", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and png.exists(), r.stderr[-2000:]


def main() -> None:
    import pytest

    from tests.fakes import FakeCrontab
    from tests.plugin import isolated

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/report.png").resolve()
    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        root = Path(d)
        (root / "guard").mkdir()
        mp.setenv("TZ", "UTC")
        with isolated(root, root / "guard", FakeCrontab):
            scene = month(root)
            screenshot(scene.page, out, 1000)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
