"""apply / diff / status / uninstall for target systemd, with a fake `systemctl --user`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedgen import state
from tests.fakes import FakeSystemctl, fake_bin, fake_systemctl  # noqa: F401
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
namespace = "sd"
targets = ["systemd"]
label_prefix = "local.test"

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = "echo beta"
schedule = "30 6 1 * 1-5"
"""
A, B = "local.test.alpha", "local.test.beta"
UNITS = [f"{A}.service", f"{A}.timer", f"{B}.service", f"{B}.timer"]
FOREIGN = """[Unit]
Description=my own backup

[Service]
Type=oneshot
ExecStart=/usr/bin/true
"""


@pytest.fixture
def sd(fake_systemctl: FakeSystemctl, tmp_path: Path, home: Path) -> FakeSystemctl:  # noqa: F811
    write_config(tmp_path / "jobs.toml", JOBS)
    d = unit_dir(home)
    d.mkdir(parents=True)
    (d / "backup.service").write_text(FOREIGN)
    (d / "backup.timer").write_text("[Timer]\nOnCalendar=daily\n\n[Install]\nWantedBy=timers.target\n")
    (d / "timers.target.wants").mkdir()
    os.symlink(d / "backup.timer", d / "timers.target.wants/backup.timer")
    return fake_systemctl


def unit_dir(home: Path) -> Path:
    return home / ".config/systemd/user"


def run(tmp_path: Path, *args: str):  # noqa: ANN201
    r = schedgen(*args, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def foreign_intact(home: Path) -> None:
    d = unit_dir(home)
    assert (d / "backup.service").read_text() == FOREIGN
    assert (d / "backup.timer").exists()
    assert os.readlink(d / "timers.target.wants/backup.timer") == str(d / "backup.timer")


def verbs(sd: FakeSystemctl) -> list[str]:
    return [" ".join(a for a in c if a != "--user") for c in sd.mutating_calls()]


def test_install_writes_units_reloads_and_enables_the_timers(sd: FakeSystemctl, tmp_path: Path,
                                                             home: Path) -> None:
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    d = unit_dir(home)
    assert sorted(p.name for p in d.glob("local.test.*")) == sorted(UNITS)
    assert verbs(sd) == ["daemon-reload", f"enable --now {A}.timer",
                         "daemon-reload", f"enable --now {B}.timer"]
    # Each timer runs with the definition on disk, and is enabled for the next login.
    assert sd.armed() == {f"{A}.timer": (d / f"{A}.timer").read_text(),
                          f"{B}.timer": (d / f"{B}.timer").read_text()}
    assert (d / "timers.target.wants" / f"{A}.timer").is_symlink()
    assert "OnCalendar=*-*-* *:00/5:00" in (d / f"{A}.timer").read_text()
    rec = state.load("sd")
    assert {Path(e.path).name for e in rec.entries.values() if e.kind in ("service", "timer")} \
        == set(UNITS)
    foreign_intact(home)
