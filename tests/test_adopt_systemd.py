"""Import adopts the user's own systemd timer: apply turns it off and moves it aside,
uninstall puts it back byte for byte and enabled as it was. A real user live_manager."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.helpers import schedgen
from tests.sdmanager import UserManager

TIMER = b"[Unit]\nDescription=nightly notes\n\n[Timer]\nOnCalendar=*-*-* 02:30:00\n\n" \
        b"[Install]\nWantedBy=timers.target\n"
SERVICE = b"[Unit]\nDescription=Back up the notes\n\n[Service]\nType=oneshot\n" \
          b"ExecStart=/usr/bin/true notes\n"



def test_the_users_timer_is_turned_off_and_put_back(live_manager: UserManager,
                                                    tmp_path: Path) -> None:
    units = live_manager.home / ".config/systemd/user"
    units.mkdir(parents=True)
    (units / "notes-backup.timer").write_bytes(TIMER)
    (units / "notes-backup.service").write_bytes(SERVICE)
    live_manager.run("daemon-reload")
    live_manager.run("enable", "--now", "notes-backup.timer")

    def run(*args: str):  # noqa: ANN202
        r = schedgen(*args, cwd=tmp_path)
        assert "Traceback" not in r.stderr, r.stderr
        return r

    r = run("import", "--from", "systemd", "-o", "jobs.toml")
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads((tmp_path / "jobs.toml").read_text())
    assert doc["jobs"]["notes-backup"]["adopts"] == "systemd: notes-backup.timer"
    d = run("diff")
    assert "notes-backup.timer (notes-backup.service)\n    replaced by job notes-backup: " \
           "apply disables and stops it" in d.stdout, d.stdout
    s = run("status", "--check")
    assert s.returncode == 1 and "your own timer it adopts still runs too" in s.stdout

    a = run("apply")
    assert a.returncode == 0, a.stdout + a.stderr
    kept = live_manager.home / ".local/state/schedgen/adopted/systemd/default"
    assert (kept / "notes-backup.timer").read_bytes() == TIMER
    assert (kept / "notes-backup.service").read_bytes() == SERVICE
    assert not (units / "notes-backup.timer").exists()
    timers = live_manager.run("list-timers", "--all", "--no-legend").stdout
    assert "local.schedgen.notes-backup.timer" in timers and " notes-backup.timer" not in timers
    assert run("status", "--check").returncode == 0
    assert run("diff").returncode == 0

    u = run("uninstall")
    assert u.returncode == 0, u.stdout + u.stderr
    assert (units / "notes-backup.timer").read_bytes() == TIMER
    assert (units / "notes-backup.service").read_bytes() == SERVICE
    assert live_manager.run("is-enabled", "notes-backup.timer", check=False).stdout.strip() == \
        "enabled"
    assert live_manager.run("is-active", "notes-backup.timer", check=False).stdout.strip() == "active"
    assert not list(kept.iterdir())
