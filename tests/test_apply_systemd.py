"""apply / diff / status / uninstall for target systemd, with a fake `systemctl --user`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schedgen.machine import ownership as state
from tests.fakes import FakeSystemctl
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
def sd(fake_systemctl: FakeSystemctl, tmp_path: Path, home: Path) -> FakeSystemctl:
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


def installed(sd: FakeSystemctl, tmp_path: Path) -> None:
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    sd.clear_calls()


def test_reapply_changes_nothing(sd: FakeSystemctl, tmp_path: Path) -> None:
    installed(sd, tmp_path)
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "0 added, 0 changed, 0 removed, 7 unchanged" in r.stdout
    assert sd.mutating_calls() == []
    assert run(tmp_path, "diff").returncode == 0


def test_schedule_change_is_loaded_by_daemon_reload(sd: FakeSystemctl, tmp_path: Path,
                                                     home: Path) -> None:
    installed(sd, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace("30 6 1 * 1-5", "45 7 * * 1-5"))
    d = run(tmp_path, "diff")
    assert d.returncode == 1 and "0 to add, 1 to change, 0 to remove, 6 unchanged" in d.stdout
    assert "\n-OnCalendar=*-*-01 06:30:00\n-OnCalendar=Mon..Fri *-*-* 06:30:00\n" in d.stdout
    assert "\n+OnCalendar=Mon..Fri *-*-* 07:45:00\n" in d.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert verbs(sd) == ["daemon-reload"]  # an armed timer is re-armed by the reload
    assert sd.armed()[f"{B}.timer"] == (unit_dir(home) / f"{B}.timer").read_text()


def test_wrapper_change_touches_no_unit(sd: FakeSystemctl, tmp_path: Path) -> None:
    installed(sd, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace('"echo beta"', '"echo BETA"'))
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "1 changed" in r.stdout
    assert sd.mutating_calls() == []  # ExecStart names the same file


def test_service_change_reloads_the_manager(sd: FakeSystemctl, tmp_path: Path) -> None:
    installed(sd, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace('command = "echo beta"',
                                                      'command = "echo beta"\ndescription = "B"'))
    d = run(tmp_path, "diff")
    assert "unchanged timer" in d.stdout and "its service changed" in d.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert verbs(sd) == ["daemon-reload"]


def test_a_timer_disabled_by_hand_is_drift_and_apply_enables_it(sd: FakeSystemctl,
                                                                 tmp_path: Path) -> None:
    installed(sd, tmp_path)
    subprocess.run(["systemctl", "--user", "disable", "--now", f"{A}.timer"], check=True,
                   capture_output=True)
    st = run(tmp_path, "status", "--check")
    assert st.returncode == 1 and "timer: timer not enabled and active in systemd" in st.stdout
    sd.clear_calls()
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert verbs(sd) == ["daemon-reload", f"enable --now {A}.timer"]
    assert run(tmp_path, "status", "--check").returncode == 0


def test_no_user_manager_is_exit_3_and_nothing_is_written(sd: FakeSystemctl, tmp_path: Path,
                                                          home: Path) -> None:
    sd.no_bus()
    r = run(tmp_path, "apply")
    assert r.returncode == 3
    assert "no systemd user manager to talk to (Failed to connect to bus: No medium found)" \
        in r.stderr
    assert not list(unit_dir(home).glob("local.test.*"))
    assert not (home / ".local/share/schedgen").exists()  # no wrapper either
    assert state.load("sd").entries == {}
    foreign_intact(home)
    # diff still shows what would be installed, and says the state is unknown.
    d = run(tmp_path, "diff")
    assert d.returncode == 1
    assert "the state of systemd timers (enabled, active, running) is unknown" in d.stdout


def test_uninstall_disables_and_removes_only_ours(sd: FakeSystemctl, tmp_path: Path,
                                                  home: Path) -> None:
    installed(sd, tmp_path)
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert sorted(verbs(sd)) == sorted([f"disable --now {A}.timer", "daemon-reload",
                                        f"disable --now {B}.timer", "daemon-reload"])
    assert not list(unit_dir(home).glob("local.test.*"))
    assert not list((unit_dir(home) / "timers.target.wants").glob("local.test.*"))
    assert sd.armed() == {}
    assert state.load("sd").entries == {}
    foreign_intact(home)


def test_a_run_in_progress_is_never_stopped(sd: FakeSystemctl, tmp_path: Path,
                                            home: Path) -> None:
    installed(sd, tmp_path)
    sd.set_running(f"{B}.service", 4242)
    st = run(tmp_path, "status")
    assert f"{B}.service: running, PID 4242" in st.stdout
    write_config(tmp_path / "jobs.toml", JOBS.replace('command = "echo beta"',
                                                      'command = "echo beta"\ndescription = "B"'))
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "the next one uses the new unit" in r.stdout
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert f"left running: {B}.service is running (PID 4242)" in r.stdout
    assert not any(c[1:2] == ["stop"] or c[1:2] == ["kill"] for c in sd.calls())
    unit = sd.unit(f"{B}.service")
    assert unit is not None and unit["pid"] == 4242 and not unit.get("killed")


def test_units_not_written_by_schedgen_are_a_conflict(sd: FakeSystemctl, tmp_path: Path,
                                                      home: Path) -> None:
    mine = unit_dir(home) / f"{A}.timer"
    mine.write_text("[Timer]\nOnCalendar=hourly\n")
    r = run(tmp_path, "apply")
    assert r.returncode == 2 and str(mine) in r.stderr
    assert mine.read_text() == "[Timer]\nOnCalendar=hourly\n"
    assert sd.mutating_calls() == []
    r = run(tmp_path, "apply", "--force")
    assert r.returncode == 0 and "schedgen-managed" in mine.read_text()


def test_a_job_gone_from_the_config_is_orphaned_then_pruned(sd: FakeSystemctl, tmp_path: Path,
                                                            home: Path) -> None:
    installed(sd, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "orphan" in r.stdout
    assert (unit_dir(home) / f"{B}.timer").exists()
    r = run(tmp_path, "apply", "--prune")
    assert r.returncode == 0, r.stderr
    assert not (unit_dir(home) / f"{B}.timer").exists()
    assert f"{B}.timer" not in sd.armed() and f"{A}.timer" in sd.armed()
    foreign_intact(home)


def test_disabling_a_job_removes_its_units(sd: FakeSystemctl, tmp_path: Path,
                                           home: Path) -> None:
    installed(sd, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS + "enabled = false\n")
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert not (unit_dir(home) / f"{B}.service").exists()
    assert verbs(sd) == [f"disable --now {B}.timer", "daemon-reload"]


def test_enable_failure_takes_the_new_timer_back(sd: FakeSystemctl, tmp_path: Path,
                                                 home: Path) -> None:
    sd.fail_next("enable", 1, "Failed to enable unit: Access denied")
    r = run(tmp_path, "apply")
    assert r.returncode == 3
    assert "enable --now local.test.alpha.timer failed: Failed to enable unit: Access denied" \
        in r.stderr
    assert "the new timer was removed again" in r.stderr
    assert not (unit_dir(home) / f"{A}.timer").exists()
    assert f"timer:{unit_dir(home) / f'{A}.timer'}" not in state.load("sd").entries


def test_status_shows_the_timer_and_warns_when_lingering_is_off(sd: FakeSystemctl,
                                                                tmp_path: Path) -> None:
    installed(sd, tmp_path)
    sd.set_fired(f"{B}.timer", 1830320000, "success")
    sd.set_linger(False)
    st = run(tmp_path, "status")
    assert st.returncode == 0, st.stderr
    assert f"systemd    {B}.timer: active (waiting), enabled" in st.stdout
    assert "result success" in st.stdout and "last fired 2028-01-01T" in st.stdout
    assert "warning: lingering is off" in st.stdout
    sd.set_linger(True)
    assert "lingering" not in run(tmp_path, "status").stdout
    sd.set_linger(False, logged_in=False)  # loginctl's "not logged in or lingering"
    assert "warning: lingering is off" in run(tmp_path, "status").stdout
    js = json.loads(run(tmp_path, "status", "--json").stdout)
    beta = next(j for j in js["jobs"] if j["job"] == "beta")
    assert beta["systemd"]["next_elapse"] is not None  # the fake asks systemd-analyze


def test_dry_run_says_what_it_would_do_and_does_nothing(sd: FakeSystemctl, tmp_path: Path,
                                                        home: Path) -> None:
    r = run(tmp_path, "apply", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert f"would load: {A}.timer (enabled and started)" in r.stdout
    assert sd.mutating_calls() == [] and not list(unit_dir(home).glob("local.test.*"))


def test_diff_json_carries_the_units_state(sd: FakeSystemctl, tmp_path: Path) -> None:
    installed(sd, tmp_path)
    d = json.loads(run(tmp_path, "diff", "--json").stdout)
    timers = [c for c in d["changes"] if c["kind"] == "timer"]
    assert {c["unit"] for c in timers} == {f"{A}.timer", f"{B}.timer"}
    assert all(c["state"]["active"] == "active" and c["state"]["enabled"] == "enabled"
               for c in timers)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_installed_units_pass_systemd_analyze_verify(sd: FakeSystemctl, tmp_path: Path,
                                                     home: Path) -> None:
    installed(sd, tmp_path)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    units = [str(unit_dir(home) / u) for u in UNITS]
    proc = subprocess.run(["systemd-analyze", "--user", "verify", *units], capture_output=True,
                          text=True, env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_uninstall_without_a_user_manager_is_exit_3_and_removes_nothing(
        sd: FakeSystemctl, tmp_path: Path, home: Path) -> None:
    installed(sd, tmp_path)
    sd.no_bus()
    r = run(tmp_path, "uninstall")
    assert r.returncode == 3 and "Failed to connect to bus" in r.stderr
    assert sorted(p.name for p in unit_dir(home).glob("local.test.*")) == sorted(UNITS)
    assert len(state.load("sd").entries) == 7  # the runtime, two job files, four units


def test_diff_on_a_host_without_systemctl_shows_the_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.commands import apply

    monkeypatch.setattr("schedgen.targets.systemd.systemctl.available", lambda: False)
    cfg = write_config(tmp_path / "jobs.toml", JOBS)
    plan = apply.diff(cfg)
    assert plan.count("create") == 7 and not plan.in_sync
    assert [t for t, w in plan.unknown if "systemctl not found on PATH" in w] == ["systemd"]
    assert all(c.details.loaded is None for c in plan.changes if c.target == "systemd")


def test_a_timer_the_manager_never_loaded_is_still_disabled_on_removal(
        sd: FakeSystemctl, tmp_path: Path, home: Path) -> None:
    installed(sd, tmp_path)
    # As after a manager restart that did not start it: files and link there, nothing loaded.
    s = sd.state()
    s["units"].pop(f"{B}.timer")
    s["loaded"].pop(f"{B}.timer")
    sd._update(units=s["units"], loaded=s["loaded"])
    write_config(tmp_path / "jobs.toml", JOBS + "enabled = false\n")
    assert run(tmp_path, "apply").returncode == 0
    assert not (unit_dir(home) / "timers.target.wants" / f"{B}.timer").is_symlink()
    foreign_intact(home)


def test_status_of_an_every_job_has_no_calendar_time(sd: FakeSystemctl, tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS.replace('"*/5 * * * *"', '"@every 90m"'))
    installed(sd, tmp_path)
    st = run(tmp_path, "status")
    assert "systemd runs it every 1h30m from the timer's start" in st.stdout
    timer = (unit_dir(Path(os.environ["HOME"])) / f"{A}.timer").read_text()
    assert "OnActiveSec=1h 30min\nOnUnitActiveSec=1h 30min\n" in timer
    assert "Persistent" not in timer
