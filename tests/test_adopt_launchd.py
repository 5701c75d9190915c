"""Import adopts the user's own LaunchAgent: apply unloads it and moves it aside,
uninstall puts it back byte for byte and loaded as it was (a fake launchctl: Linux)."""

from __future__ import annotations

import os
import plistlib
import subprocess
import tomllib
from pathlib import Path

from tests.fakes import FakeCrontab, FakeLaunchctl
from tests.helpers import schedgen

MINE = plistlib.dumps({"Label": "com.me.notes-backup",
                       "ProgramArguments": ["/usr/bin/true", "notes"],
                       "StartCalendarInterval": {"Hour": 2, "Minute": 30}})


def test_the_users_plist_is_unloaded_and_put_back(fake_launchctl: FakeLaunchctl,
                                                  fake_crontab: FakeCrontab, tmp_path: Path,
                                                  home: Path) -> None:
    agents = home / "Library/LaunchAgents"
    agents.mkdir(parents=True)
    mine = agents / "com.me.notes-backup.plist"
    mine.write_bytes(MINE)
    subprocess.run(["launchctl", "bootstrap", f"gui/{os.getuid()}", str(mine)], check=True)
    assert "com.me.notes-backup" in fake_launchctl.loaded()

    def run(*args: str):  # noqa: ANN202
        r = schedgen(*args, cwd=tmp_path)
        assert "Traceback" not in r.stderr, r.stderr
        return r

    r = run("import", "--from", "launchd", "-o", "jobs.toml")
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads((tmp_path / "jobs.toml").read_text())
    assert doc["jobs"]["notes-backup"]["adopts"] == "launchd: com.me.notes-backup.plist"
    d = run("diff")
    assert "com.me.notes-backup.plist (com.me.notes-backup)\n    replaced by job notes-backup: " \
           "apply unloads it" in d.stdout, d.stdout
    s = run("status", "--check")
    assert s.returncode == 1 and "your own plist it adopts still runs too" in s.stdout

    a = run("apply")
    assert a.returncode == 0, a.stdout + a.stderr
    kept = home / ".local/state/schedgen/adopted/launchd/default"
    assert (kept / mine.name).read_bytes() == MINE and not mine.exists()
    loaded = fake_launchctl.loaded()
    assert "com.me.notes-backup" not in loaded and "local.schedgen.notes-backup" in loaded
    assert run("status", "--check").returncode == 0
    assert run("diff").returncode == 0

    u = run("uninstall")
    assert u.returncode == 0, u.stdout + u.stderr
    assert mine.read_bytes() == MINE
    assert set(fake_launchctl.loaded()) == {"com.me.notes-backup"}
    assert not list(kept.iterdir())
