"""`schedgen doctor`: the shared checks, cron's and systemd's, each on its own, and the
whole command on this Linux host for a cron, a systemd and a launchd job."""

from __future__ import annotations

import getpass
import json
import os
from pathlib import Path

import pytest

from schedgen.config.load import load
from schedgen.config.model import Job
from schedgen.doctor import OK, PROBLEM, SKIPPED, WARNING, shared
from schedgen.targets.cron import doctor as cron
from schedgen.targets.systemd import doctor as systemd
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeMacTools, FakeSystemctl
from tests.helpers import schedgen, write_config

ROOT_USER = os.getuid() == 0  # root reads and writes anything: permission cases cannot fail


def job(tmp_path: Path, extra: str = "", command: str = '["true"]') -> Job:
    write_config(tmp_path / "jobs.toml", f"""
[defaults]
targets = ["cron"]

[jobs.j]
command = {command}
schedule = "0 * * * *"
{extra}
""")
    return load(tmp_path / "jobs.toml").jobs[0]


# --- shared

def test_program_on_the_jobs_path(tmp_path: Path) -> None:
    c = shared.program_on_path(job(tmp_path, command='["sh", "-c", "true"]'))
    assert c.verdict == OK and "sh is /" in c.detail
    c = shared.program_on_path(job(tmp_path, command='["no-such-program-x"]'), user_path="/bin")
    assert c.verdict == PROBLEM and c.remedy == ("install no-such-program-x, or give its full "
                                                 "path in `command` of job j")


def test_a_program_only_on_the_users_path(tmp_path: Path) -> None:
    d = tmp_path / "mybin"
    d.mkdir()
    (d / "tool").write_text("#!/bin/sh\n")
    (d / "tool").chmod(0o755)
    c = shared.program_on_path(job(tmp_path, command='["tool"]'), user_path=f"{d}:/usr/bin")
    assert c.verdict == PROBLEM
    assert c.detail.endswith("(exit 127) (cron and launchd do not read your shell's profile)")
    assert c.remedy.startswith(f'add "{d}" to `path` in jobs.toml')


def test_a_program_by_its_path(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    assert "does not exist" in shared.program_on_path(
        job(tmp_path, command=f'["{script}"]')).detail
    script.write_text("#!/bin/sh\n")
    c = shared.program_on_path(job(tmp_path, command=f'["{script}"]'))
    assert c.verdict == PROBLEM and c.remedy == f"chmod +x {script}"
    script.chmod(0o755)
    assert shared.program_on_path(job(tmp_path, command=f'["{script}"]')).verdict == OK


def test_a_command_line_starting_with_a_shell_word(tmp_path: Path) -> None:
    assert shared.program_on_path(job(tmp_path, command='"cd /tmp && ls"')).verdict == SKIPPED
    c = shared.program_on_path(job(tmp_path, command='"LANG=C sort -u x"'))
    assert c.verdict == OK and c.detail.startswith("sort is ")


def test_working_dir_and_env_file(tmp_path: Path) -> None:
    j = job(tmp_path, f'working_dir = "{tmp_path}/w"\nenv_file = "{tmp_path}/e.env"')
    assert shared.working_dir(j).verdict == PROBLEM
    assert shared.env_file(j).remedy == f"create {tmp_path}/e.env, or fix `env_file` of job j"
    (tmp_path / "w").mkdir()
    (tmp_path / "e.env").write_text("A=1\n")
    assert shared.working_dir(j).verdict == OK and shared.env_file(j).verdict == OK
    if not ROOT_USER:
        (tmp_path / "e.env").chmod(0)
        assert shared.env_file(j).verdict == PROBLEM


def test_lock_dir_must_be_private(tmp_path: Path) -> None:
    j = job(tmp_path, f'lock_dir = "{tmp_path}/locks"')
    assert shared.lock_dir(j).detail.endswith("will be created (mode 0700) at the first run")
    (tmp_path / "locks").mkdir(mode=0o700)
    assert shared.lock_dir(j).verdict == OK
    (tmp_path / "locks").chmod(0o777)
    c = shared.lock_dir(j)
    assert c.verdict == PROBLEM and c.remedy == f"chmod 700 {tmp_path}/locks"
    assert shared.lock_dir(job(tmp_path, "lock = false")).detail == "the job takes no lock"


def test_log_dir_writable(tmp_path: Path) -> None:
    j = job(tmp_path, f'log_root = "{tmp_path}/logs"')
    assert shared.log_dir(j).detail == f"{tmp_path}/logs/j will be created at the first run"
    (tmp_path / "logs").write_text("a file, not a folder")
    c = shared.log_dir(j)
    assert c.verdict == PROBLEM and "cannot be created" in c.detail


def test_notify_by_mail_needs_a_mail_program_and_sendmail(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    extra = (f'path = ["{bin_dir}"]\n[jobs.j.notify]\non = ["failure"]\n'
             'command = ["mail", "-s", "failed", "me@example.org"]')
    j = job(tmp_path, extra)
    c = shared.notify_mail(j)
    assert c.verdict == PROBLEM and "notices are never sent" in c.detail
    (bin_dir / "mail").write_text("#!/bin/sh\n")
    (bin_dir / "mail").chmod(0o755)
    monkeypatch.setattr(shared, "SENDMAIL", (str(tmp_path / "no-sendmail"),))
    c = shared.notify_mail(j)
    assert c.verdict == PROBLEM and c.remedy.startswith("install a mail transfer agent")
    (bin_dir / "sendmail").write_text("#!/bin/sh\n")
    (bin_dir / "sendmail").chmod(0o755)
    assert shared.notify_mail(j).verdict == OK
    assert shared.notify_mail(job(tmp_path)).detail == "no notify command"


def test_notify_mail_names_the_sendmail_it_goes_through(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setattr(shared, "SENDMAIL", (str(tmp_path / "no-sendmail"),))
    j = job(tmp_path, f'path = ["{bin_dir}"]\n[jobs.j.notify]\nmail = "ops@example.com"')
    c = shared.notify_mail(j)
    assert c.verdict == PROBLEM and "notify.sendmail" in c.remedy
    (bin_dir / "sendmail").write_text("#!/bin/sh\n")
    (bin_dir / "sendmail").chmod(0o755)
    assert shared.notify_mail(j).detail == f"notify.mail goes through {bin_dir}/sendmail -t -i"
    j = job(tmp_path, f'path = ["{bin_dir}"]\n[jobs.j.notify]\nmail = "ops@example.com"\n'
                      f'sendmail = "{tmp_path}/nowhere/msmtp"')
    assert shared.notify_mail(j).verdict == PROBLEM


def test_job_timezone_and_host_zone(tmp_path: Path) -> None:
    assert shared.job_timezone(job(tmp_path, 'timezone = "Europe/Paris"')).verdict == OK
    assert shared.host_zone(tz="Mars/Olympus").verdict == PROBLEM
    assert shared.host_zone(tz="Asia/Tokyo").detail == "TZ=Asia/Tokyo"
    etc = tmp_path / "root" / "etc"
    etc.mkdir(parents=True)
    assert shared.host_zone(tmp_path / "root", tz="").verdict == WARNING
    (etc / "localtime").symlink_to("/usr/share/zoneinfo/No/Such")
    assert shared.host_zone(tmp_path / "root", tz="").verdict == PROBLEM
    zones = tmp_path / "root" / "usr/share/zoneinfo/Europe"
    zones.mkdir(parents=True)
    (zones / "Paris").write_bytes(b"TZif")
    (etc / "localtime").unlink()
    (etc / "localtime").symlink_to("/usr/share/zoneinfo/Europe/Paris")
    assert shared.host_zone(tmp_path / "root", tz="").detail == "Europe/Paris"


def test_clock() -> None:
    assert shared.clock(1_800_000_000).verdict == OK  # 2027
    c = shared.clock(0)
    assert c.verdict == PROBLEM and c.detail == "the clock says 1970-01-01 00:00 UTC"


# --- cron

def test_cron_daemon_running(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "1").mkdir(parents=True)
    (proc / "1" / "comm").write_text("systemd\n")
    c = cron.daemon_running(tmp_path)
    assert c.verdict == PROBLEM and c.remedy.startswith("start it and have it start at boot")
    (proc / "7").mkdir()
    (proc / "7" / "comm").write_text("busybox\n")
    (proc / "7" / "cmdline").write_bytes(b"busybox\0sh\0")
    assert cron.daemon_running(tmp_path).verdict == PROBLEM  # busybox, but not its crond
    (proc / "7" / "cmdline").write_bytes(b"crond\0-f\0")
    assert cron.daemon_running(tmp_path).detail == "busybox is running (pid 7)"
    (proc / "7" / "comm").write_text("sh\n")
    (proc / "812").mkdir()
    (proc / "812" / "comm").write_text("cron\n")
    assert cron.daemon_running(tmp_path).detail == "cron is running (pid 812)"


def test_crontab_allowed(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    assert cron.allowed("ann", tmp_path).verdict == OK
    (etc / "cron.deny").write_text("bob\n")
    assert cron.allowed("ann", tmp_path).verdict == OK
    c = cron.allowed("bob", tmp_path)
    assert c.verdict == PROBLEM and c.remedy == f"ask an administrator to remove bob from {etc}/cron.deny"
    (etc / "cron.allow").write_text("# who\nann\n")
    assert cron.allowed("ann", tmp_path).detail == f"ann is in {etc}/cron.allow"
    c = cron.allowed("carl", tmp_path)
    assert c.verdict == PROBLEM and c.remedy == f"ask an administrator to add carl to {etc}/cron.allow"


# --- systemd

def test_linger(fake_systemctl: FakeSystemctl) -> None:
    fake_systemctl.set_linger(False)
    c = systemd.linger()
    assert c.verdict == PROBLEM and c.remedy == f"loginctl enable-linger {getpass.getuser()}"
    fake_systemctl.set_linger(True)
    assert systemd.linger().verdict == OK


def test_user_manager(fake_systemctl: FakeSystemctl) -> None:
    assert systemd.manager().verdict == OK
    fake_systemctl.no_bus()
    c = systemd.manager()
    assert c.verdict == PROBLEM and "Failed to connect to bus" in c.detail


# --- the command on this host

THREE = """
[jobs.nightly]
targets = ["cron"]
command = ["sh", "-c", "true"]
schedule = "0 3 * * *"

[jobs.timer]
targets = ["systemd"]
command = ["sh", "-c", "true"]
schedule = "*/15 * * * *"

[jobs.mac]
targets = ["launchd"]
command = ["sh", "-c", "true"]
schedule = "0 9 * * 1-5"
"""


def test_doctor_on_this_host_for_cron_systemd_and_launchd(
        fake_crontab: FakeCrontab, fake_systemctl: FakeSystemctl,
        fake_launchctl: FakeLaunchctl, fake_mac_tools: FakeMacTools, tmp_path: Path) -> None:
    fake_systemctl.set_linger(False)
    write_config(tmp_path / "jobs.toml", THREE)
    r = schedgen("doctor", cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    out = r.stdout.splitlines()
    sections = [line for line in out if not line.startswith(" ")]
    assert sections[:4] == ["host", "job nightly (cron)", "job timer (systemd)", "job mac (launchd)"]
    body = "\n".join(out)
    for name in ("clock", "host time zone", "launchd domain", "cron daemon", "crontab allowed",
                 "systemd user manager"):
        assert f" {name}: " in body, name
    assert "  problem  linger: lingering is off" in body
    assert f"do: loginctl enable-linger {getpass.getuser()}" in body
    assert "  problem  launchd state: not installed" in body  # mac: never applied
    every = [line for line in out if line.startswith("  ") and not line.strip().startswith("do:")]
    assert all(line.split()[0] in ("ok", "problem", "warning", "skipped") for line in every)
    assert r.returncode == 1
    data = json.loads(schedgen("doctor", "nightly", "--json", cwd=tmp_path).stdout)
    assert {c["job"] for c in data["checks"]} == {None, "nightly"}
    assert {c["check"] for c in data["checks"] if c["job"] is None} >= {"cron daemon", "clock"}


def test_doctor_of_an_unknown_job_is_exit_2(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", THREE)
    r = schedgen("doctor", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "no job 'nope'" in r.stderr
