"""`--target T` means "for target T" on every command."""

from __future__ import annotations

import plistlib
from pathlib import Path

from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config

CRON_ONLY = """
[defaults]
targets = ["cron"]

[jobs.daily]
command = ["echo", "daily"]
schedule = "15 6 * * *"

[jobs.odd]
command = ["echo", "odd"]
schedule = "0-58 0-22 1-30 1-11 *"   # more dicts than schedgen writes to a plist

[jobs.off]
command = ["echo", "off"]
schedule = "@hourly"
enabled = false
"""


def test_render_target_launchd_renders_plists_for_cron_only_jobs(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CRON_ONLY)
    r = schedgen("render", "-c", str(cfg), "--target", "launchd", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    plist = tmp_path / "o/launchd/local.schedgen.daily.plist"
    data = plistlib.loads(plist.read_bytes())
    assert data["StartCalendarInterval"] == [{"Hour": 6, "Minute": 15}]
    assert (tmp_path / "o/wrappers/daily.sh").exists()
    assert not (tmp_path / "o/cron").exists()  # for launchd only
    assert "skipped: jobs.odd: not rendered for launchd: launchd:" in r.stderr
    assert "skipped: jobs.off: not rendered for launchd: disabled" in r.stderr
    assert not (tmp_path / "o/launchd/local.schedgen.odd.plist").exists()


def test_render_target_with_nothing_renderable_says_why_and_exits_2(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CRON_ONLY.split("[jobs.daily]")[0]
                       + CRON_ONLY[CRON_ONLY.index("[jobs.odd]"):])
    r = schedgen("render", "-c", str(cfg), "--target", "launchd", "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "nothing to render for launchd" in r.stderr and "jobs.odd" in r.stderr
    assert "jobs.off: not rendered for launchd: disabled" in r.stderr
    assert not (tmp_path / "o").exists()


def test_diff_apply_status_for_a_target_nothing_goes_to_exit_2(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CRON_ONLY)
    for cmd in ("diff", "apply", "status"):
        r = schedgen(cmd, "-c", str(cfg), "--target", "launchd")
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert "--target launchd: no enabled job of namespace default goes to launchd" in r.stderr
    assert fake_crontab.writes() == []
    assert schedgen("diff", "-c", str(cfg), "--target", "cron").returncode == 1
