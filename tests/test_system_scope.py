"""System scope: jobs installed for the machine (/etc/cron.d, LaunchDaemons, system units),
run as their `user`, applied by root only.

Every test's system folders are under its own root ($SCHEDGEN_SYSTEM_ROOT, set by the
home fixture). The end-to-end test gives the real cron daemon its file through that
root: <root>/etc/cron.d is a link to the real /etc/cron.d, where only the test's own
file (a namespace of this test process) is written, and removed at the end.
"""

from __future__ import annotations

import json
import os
import plistlib
import pwd
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedgen import paths
from schedgen.machine import ownership
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeMacTools, FakeSystemctl
from tests.helpers import schedgen, write_config
from tests.test_e2e_cron import cron_daemon  # noqa: F401 (a fixture)

WAIT = 130  # seconds: cron reads /etc/cron.d at the next minute, then runs the job


@pytest.fixture(scope="module")
def sys_user() -> Iterator[str]:
    """A throwaway account with a home of its own (cron starts a job there), removed after."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd (Debian package passwd)")
    name = f"sgsys{os.getpid()}"
    home = Path(tempfile.mkdtemp(prefix="schedgen-home-", dir="/tmp"))
    home.chmod(0o755)
    for _ in range(50):  # another worker may hold /etc/passwd's lock a moment
        r = subprocess.run(["useradd", "--system", "--home-dir", str(home), "--no-create-home",
                            "--shell", "/bin/sh", name], capture_output=True, text=True)
        if r.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"useradd {name}: {r.stderr}")
    os.chown(home, pwd.getpwnam(name).pw_uid, -1)
    try:
        yield name
    finally:
        for _ in range(50):
            if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
                break
            time.sleep(0.1)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def open_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A system root the job's user can walk into (a test's tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="schedgen-sys-", dir="/tmp"))
    root.chmod(0o755)
    monkeypatch.setenv("SCHEDGEN_SYSTEM_ROOT", str(root))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def config(tmp: Path, user: str, namespace: str = "sys", targets: str = '["cron"]',
           extra: str = "") -> Path:
    return write_config(tmp / "jobs.toml", f"""
[defaults]
namespace = "{namespace}"
targets = {targets}

[jobs.tick]
description = "schedgen system-scope test"
command = ["sh", "-c", "id -un; echo tick"]
schedule = "* * * * *"
scope = "system"
user = "{user}"
{extra}""")


def root_of() -> Path:
    return Path(os.environ["SCHEDGEN_SYSTEM_ROOT"])


# --- the config ------------------------------------------------------------------------

def test_scope_and_user_are_checked(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", """
[jobs.a]
command = "true"
schedule = "@daily"
scope = "system"

[jobs.b]
command = "true"
schedule = "@daily"
user = "root"

[jobs.c]
command = "true"
schedule = "@daily"
scope = "machine"

[jobs.d]
command = "true"
schedule = "@daily"
scope = "system"
user = "no body"

[jobs.e]
command = "true"
schedule = "@daily"
scope = "system"
user = "root"
targets = ["kubernetes"]
kubernetes = { image = "busybox" }
""")
    r = schedgen("validate", "-c", str(cfg))
    assert r.returncode == 2
    assert 'jobs.a.user: missing (required with scope = "system"' in r.stderr
    assert 'jobs.b.user: only for scope = "system"' in r.stderr
    assert "jobs.c.scope: 'machine' is not a valid scope: use 'user' or 'system'" in r.stderr
    assert "jobs.d.user: 'no body' is not a valid user name" in r.stderr
    assert 'jobs.e.scope: target kubernetes: scope = "system" has no meaning' in r.stderr


def test_a_system_job_gets_the_machines_folders_unless_given(tmp_path: Path) -> None:
    from schedgen.config.load import load

    cfg = config(tmp_path, "root", extra='\n[jobs.mine]\ncommand = "true"\nschedule = "@daily"\n'
                                          '\n[jobs.other]\ncommand = "true"\nschedule = "@daily"\n'
                                          'scope = "system"\nuser = "daemon"\n'
                                          'log_root = "/srv/logs"\n')
    jobs = {j.name: j for j in load(cfg).jobs}
    root = root_of()
    assert jobs["tick"].wrapper_dir == root / "usr/local/libexec/schedgen"
    assert jobs["tick"].log_root == root / "var/log/schedgen"
    assert jobs["tick"].lock_dir == root / "var/lib/schedgen/locks/root"
    assert jobs["other"].log_root == Path("/srv/logs")
    assert jobs["other"].lock_dir == root / "var/lib/schedgen/locks/daemon"
    assert jobs["mine"].scope == "user" and jobs["mine"].user is None
    assert str(jobs["mine"].wrapper_dir).startswith(os.environ["HOME"])


def test_render_gives_the_cron_d_file_with_a_user_field(tmp_path: Path) -> None:
    cfg = config(tmp_path, "daemon", extra="\n[jobs.own]\ncommand = \"true\"\n"
                                           "schedule = \"@hourly\"\n")
    out = tmp_path / "out"
    r = schedgen("render", "-c", str(cfg), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = (out / "system/cron.d/schedgen-sys").read_text()
    wrapper = root_of() / "usr/local/libexec/schedgen/tick.sh"
    assert f"* * * * * daemon {wrapper} --cron\n" in text.splitlines(keepends=True)
    assert text.startswith("# Generated by schedgen from") and "schedgen-managed" in text
    # the user's own job stays in the crontab block, with no user field
    block = (out / "cron/crontab").read_text()
    assert "@hourly " in block and "tick" not in block


# --- cron: the real daemon runs the job as its user --------------------------------------

@pytest.mark.e2e
def test_cron_d_file_runs_the_job_as_its_user_who_cannot_touch_the_job_file(
        cron_daemon: None, sys_user: str, open_root: Path, tmp_path: Path) -> None:  # noqa: F811
    ns = f"sgsys{os.getpid()}"
    real = Path("/etc/cron.d") / f"schedgen-{ns}"
    (open_root / "etc").mkdir()
    (open_root / "etc/cron.d").symlink_to("/etc/cron.d")
    cfg = config(open_root, sys_user, namespace=ns)
    account = pwd.getpwnam(sys_user)
    try:
        r = schedgen("apply", "-c", str(cfg))
        assert r.returncode == 0, r.stderr
        st = real.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o644)
        assert "." not in real.name  # cron's run-parts rule: [A-Za-z0-9_-] only
        assert f" {sys_user} " in real.read_text()
        assert not list(Path("/etc/cron.d").glob(f".schedgen-{ns}*"))  # no temp file left

        wrapper = open_root / "usr/local/libexec/schedgen/tick.sh"
        for p in (wrapper, wrapper.parent, open_root / "usr/local/libexec/schedgen"
                  / f"schedgen-runtime.{ns}.bash"):
            st = p.stat()
            assert st.st_uid == 0 and not st.st_mode & 0o022, p
        assert stat.S_IMODE(wrapper.stat().st_mode) == 0o755
        # the job's user may run the job file, not change or replace it
        as_user = ["runuser", "-u", sys_user, "--"]
        assert subprocess.run([*as_user, "test", "-x", str(wrapper)]).returncode == 0
        assert subprocess.run([*as_user, "test", "-w", str(wrapper)]).returncode == 1
        assert subprocess.run([*as_user, "test", "-w", str(wrapper.parent)]).returncode == 1
        swap = subprocess.run([*as_user, "sh", "-c", f"echo 'id' > {wrapper}"],
                              capture_output=True)
        assert swap.returncode != 0

        logs = open_root / "var/log/schedgen/tick"
        deadline = time.monotonic() + WAIT
        manifest: dict | None = None
        while time.monotonic() < deadline and manifest is None:
            for m in sorted(logs.glob("runs/*/schedgen-manifest.json")):
                data = json.loads(m.read_text() or "{}")
                if data.get("finished_at"):
                    manifest, found = data, m
                    break
            time.sleep(0.5)
        assert manifest is not None, f"cron did not run the job within {WAIT}s"
        assert manifest["exit_code"] == 0
        assert found.stat().st_uid == account.pw_uid  # written by the run, as its user
        assert (logs.stat().st_uid, open_root.joinpath("var/lib/schedgen/locks", sys_user)
                .stat().st_uid) == (account.pw_uid, account.pw_uid)
        out = found.parent / "stdout.log"
        assert out.read_text().splitlines()[0] == sys_user

        s = schedgen("status", "-c", str(cfg))
        assert s.returncode == 0, s.stdout + s.stderr
        assert f"last run   {manifest['run_id']}" in s.stdout
        h = schedgen("history", "-c", str(cfg), "tick")
        assert h.returncode == 0 and manifest["run_id"] in h.stdout, h.stdout + h.stderr
        d = schedgen("doctor", "-c", str(cfg), "--json")
        checks = {c["check"]: c for c in json.loads(d.stdout)["checks"] if c["job"] == "tick"}
        assert checks["job file owner"]["verdict"] == "ok", checks
        assert checks["log dir"]["verdict"] == "ok" and checks["lock dir"]["verdict"] == "ok"

        u = schedgen("uninstall", "-c", str(cfg))
        assert u.returncode == 0, u.stderr
        assert not real.exists() and not wrapper.exists()
    finally:
        real.unlink(missing_ok=True)  # ours only: the folder is the machine's


# --- who may apply ------------------------------------------------------------------------

def test_an_apply_of_system_jobs_by_another_user_is_refused_and_changes_nothing(
        sys_user: str, open_root: Path, fake_crontab: FakeCrontab) -> None:
    cfg = config(open_root, sys_user, extra='\n[jobs.own]\ncommand = "true"\n'
                                            'schedule = "@hourly"\n')
    cfg.chmod(0o644)
    before = sorted(open_root.rglob("*"))
    account = pwd.getpwnam(sys_user)
    os.seteuid(account.pw_uid)  # this very process, as that account: the check is the real one
    try:
        r = schedgen("apply", "-c", str(cfg))
    finally:
        os.seteuid(0)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "only root may do that; nothing was changed" in r.stderr
    assert "sudo schedgen apply" in r.stderr
    assert sorted(open_root.rglob("*")) == before
    assert fake_crontab.calls() == [] and not list(Path(os.environ["HOME"]).rglob("*"))
    # the same as root goes through
    assert schedgen("apply", "-c", str(cfg)).returncode == 0


def test_an_account_this_host_has_not_is_refused_before_anything(tmp_path: Path,
                                                                   fake_crontab: FakeCrontab) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    cfg = config(tmp_path, "sg-nosuchuser")
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 2 and "no account named sg-nosuchuser on this host" in r.stderr
    assert not root_of().exists()


def test_the_two_scopes_keep_separate_records(tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    cfg = config(tmp_path, "daemon", extra='\n[jobs.own]\ncommand = "true"\n'
                                           'schedule = "@hourly"\n')
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    user = ownership.load("sys")
    with paths.in_scope(paths.SYSTEM):
        system = ownership.load("sys")
        path = ownership.record_path("sys")
    assert path == root_of() / "var/lib/schedgen/installed/sys.json"
    assert {e.job for e in user.entries.values() if e.job} == {"own"}
    assert {e.job for e in system.entries.values() if e.job} == {"tick"}
    assert {e.kind for e in system.entries.values()} == {"runtime", "wrapper", "crond"}
    assert b"tick" not in (fake_crontab.read() or b"")
    assert schedgen("diff", "-c", str(cfg)).returncode == 0  # both scopes in sync
    # the job leaves the system scope: apply removes its file there, the record goes
    cfg.write_text(cfg.read_text().replace('scope = "system"\nuser = "daemon"\n', ""))
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    assert not (root_of() / "etc/cron.d/schedgen-sys").exists()
    assert not path.exists()
    assert b"tick.sh --cron" in (fake_crontab.read() or b"")


def test_a_system_folder_others_may_write_is_refused(tmp_path: Path,
                                                     fake_crontab: FakeCrontab) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    folder = root_of() / "usr/local/libexec/schedgen"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    r = schedgen("apply", "-c", str(config(tmp_path, "daemon")))
    assert r.returncode == 3 and "is writable by others than root" in r.stderr
    assert not (root_of() / "etc").exists()
    assert paths.scope() == paths.USER  # a failure in the system pass leaves no scope set


# --- systemd: the real systemd-analyze verify ----------------------------------------------

@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_system_units_have_user_and_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    cfg = config(tmp_path, "daemon", targets='["systemd"]')
    out = tmp_path / "out"
    assert schedgen("render", "-c", str(cfg), "--out", str(out)).returncode == 0
    units = sorted((out / "system/systemd").iterdir())
    service = next(u for u in units if u.suffix == ".service")
    text = service.read_text()
    assert "User=daemon\n" in text
    wrapper = root_of() / "usr/local/libexec/schedgen/tick.sh"
    assert f"ExecStart={wrapper}\n" in text
    wrapper.parent.mkdir(parents=True)
    shutil.copy(out / "system/wrappers/tick.sh", wrapper)
    wrapper.chmod(0o755)
    proc = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    # and verify can fail: a user name systemd does not take is said, a job file the
    # manager could not run refused
    bad = service.with_name("local.schedgen.bad.service")
    bad.write_text(text.replace("User=daemon", "User=no body"))
    proc = subprocess.run(["systemd-analyze", "verify", str(bad)], capture_output=True, text=True)
    assert "does not match strict user/group name rules" in proc.stderr, proc.stderr
    wrapper.chmod(0o644)
    proc = subprocess.run(["systemd-analyze", "verify", str(service)], capture_output=True,
                          text=True)
    assert proc.returncode != 0 and "is not executable" in proc.stderr, proc.stderr


# --- launchd: LaunchDaemons in the system domain (fake launchctl) --------------------------

def test_launch_daemon_with_username_is_loaded_in_the_system_domain(
        tmp_path: Path, fake_launchctl: FakeLaunchctl) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (the system domain is root's)")
    cfg = config(tmp_path, "daemon", targets='["launchd"]')
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    plist = root_of() / "Library/LaunchDaemons/local.schedgen.tick.plist"
    data = plistlib.loads(plist.read_bytes())
    assert data["UserName"] == "daemon" and data["Label"] == "local.schedgen.tick"
    assert plist.stat().st_uid == 0 and stat.S_IMODE(plist.stat().st_mode) == 0o644
    assert ["bootstrap", "system", str(plist)] in fake_launchctl.calls()
    assert fake_launchctl.loaded()["local.schedgen.tick"]["domain"] == "system"
    assert (root_of() / "var/log/schedgen/tick").stat().st_uid == pwd.getpwnam("daemon").pw_uid
    s = schedgen("status", "-c", str(cfg), "--json")
    assert s.returncode == 0, s.stdout + s.stderr
    job = json.loads(s.stdout)["jobs"][0]
    assert (job["installed"], job["scope"], job["user"]) == (True, "system", "daemon")
    assert "scope      system, runs as daemon" in schedgen("status", "-c", str(cfg)).stdout
    u = schedgen("uninstall", "-c", str(cfg))
    assert u.returncode == 0, u.stderr
    assert ["bootout", "system/local.schedgen.tick"] in fake_launchctl.calls()
    assert not plist.exists() and fake_launchctl.loaded() == {}


def test_fake_launchctl_refuses_the_system_domain_as_real_launchd_does(
        tmp_path: Path, fake_launchctl: FakeLaunchctl) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    plist = tmp_path / "x.plist"
    plist.write_bytes(plistlib.dumps({"Label": "x", "ProgramArguments": ["/bin/true"]}))
    plist.chmod(0o664)  # group-writable: launchd will not load it
    r = subprocess.run(["launchctl", "bootstrap", "system", str(plist)], capture_output=True,
                       text=True)
    assert (r.returncode, r.stderr.strip()) == (5, "Bootstrap failed: 5: Input/output error")
    plist.chmod(0o644)
    assert subprocess.run(["launchctl", "bootstrap", "system", str(plist)]).returncode == 0
    r = subprocess.run(["launchctl", "print", "system/y"], capture_output=True, text=True)
    assert r.returncode == 113 and 'Could not find service "y" in domain for system' in r.stderr
    r = subprocess.run(["launchctl", "print", "system/x"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("system/x = {")


def test_doctor_looks_for_a_launch_daemon_in_the_system_domain(
        tmp_path: Path, fake_launchctl: FakeLaunchctl, fake_mac_tools: FakeMacTools) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (the system domain is root's)")
    cfg = config(tmp_path, "daemon", targets='["launchd"]',
                 extra='\n[jobs.own]\ncommand = "true"\nschedule = "@hourly"\n'
                       'targets = ["launchd"]\n')
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    label = "local.schedgen.tick"
    plist = root_of() / f"Library/LaunchDaemons/{label}.plist"

    def checks() -> dict[str, tuple[str, str, str]]:
        d = schedgen("doctor", "tick", "-c", str(cfg), "--json")
        return {c["check"]: (c["verdict"], c["detail"], c["remedy"] or "")
                for c in json.loads(d.stdout)["checks"]
                if c["job"] in ("tick", None) and c["check"] != "privacy (TCC)"}

    c = checks()
    assert c["launchd domain"][:2] == ("ok", "system: LaunchDaemons load and run with nobody "
                                             "logged in")
    assert c["launchd state"][:2] == ("ok", "loaded in system as daemon, not running, last "
                                            "exit (never exited)")
    assert c["plist"][0] == "ok" and c["background item"][0] == "ok"
    fake_launchctl.set_exited(label, 3)
    verdict, detail, _ = checks()["launchd state"]
    assert verdict == "problem" and detail.startswith("loaded in system as daemon, not "
                                                      "running; the last run exited 3")
    fake_launchctl.disable(label, "system")
    verdict, _, remedy = checks()["background item"]
    assert verdict == "problem" and f"`sudo launchctl enable system/{label}`" in remedy
    # loaded by an earlier apply, as the account the job ran as then
    fake_launchctl.set_loaded_in(label, "system", str(plist), user="nobody")
    verdict, detail, remedy = checks()["launchd state"]
    assert verdict == "problem" and "running as nobody, not as daemon" in detail
    assert remedy == f"sudo launchctl bootout system/{label}; sudo schedgen apply"
    fake_launchctl.unload(label)
    verdict, detail, remedy = checks()["launchd state"]
    assert (verdict, remedy) == ("problem", "sudo schedgen apply")
    assert f'Could not find service "{label}" in domain for system' in detail
    plist.chmod(0o664)                        # launchd will not load it so
    verdict, detail, remedy = checks()["plist"]
    assert verdict == "problem" and "is not root's alone" in detail
    assert remedy.startswith(f"sudo chown root:wheel {plist}; sudo chmod 644 {plist}")
    # the config's user-scope job is still looked for in the login session
    own = json.loads(schedgen("doctor", "own", "-c", str(cfg), "--json").stdout)["checks"]
    assert any(x["check"] == "launchd state" and x["detail"].startswith(f"loaded in gui/{os.getuid()}")
               for x in own), own


# --- import --------------------------------------------------------------------------------

def test_import_of_a_cron_d_file_gives_system_jobs_with_their_user(tmp_path: Path) -> None:
    f = tmp_path / "backup"
    f.write_text("# m h dom mon dow user command\n"
                 "15 3 * * * backup /usr/local/bin/backup --all\n"
                 "*/5 * * * * www-data /usr/bin/php /var/www/cron.php\n")
    out = tmp_path / "jobs.toml"
    r = schedgen("import", "--from", "cron", "--file", str(f), "-o", str(out))
    assert r.returncode == 0, r.stderr
    from schedgen.config.load import load

    jobs = {j.user: j for j in load(out).jobs}
    assert set(jobs) == {"backup", "www-data"}
    assert all(j.scope == "system" and j.adopts is None for j in jobs.values())
    assert jobs["backup"].command == ("/usr/local/bin/backup", "--all")


def test_import_of_launch_daemons_gives_system_jobs(tmp_path: Path) -> None:
    folder = tmp_path / "LaunchDaemons"
    folder.mkdir()
    (folder / "com.example.backup.plist").write_bytes(plistlib.dumps({
        "Label": "com.example.backup", "ProgramArguments": ["/usr/local/bin/backup"],
        "StartCalendarInterval": {"Hour": 3, "Minute": 15}, "UserName": "backup"}))
    (folder / "com.example.clean.plist").write_bytes(plistlib.dumps({
        "Label": "com.example.clean", "ProgramArguments": ["/usr/local/bin/clean"],
        "StartInterval": 3600}))
    out = tmp_path / "jobs.toml"
    r = schedgen("import", "--from", "launchd", "--file", str(folder), "-o", str(out))
    assert r.returncode == 0, r.stderr
    from schedgen.config.load import load

    jobs = {j.name: j for j in load(out).jobs}
    assert (jobs["backup"].scope, jobs["backup"].user) == ("system", "backup")
    assert (jobs["clean"].scope, jobs["clean"].user) == ("system", "root")


# --- systemd: system units through `systemctl` without --user (fake manager) ---------------

def test_system_units_are_enabled_through_the_system_manager(
        tmp_path: Path, fake_systemctl: FakeSystemctl, monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    units = root_of() / "etc/systemd/system"
    monkeypatch.setenv("FAKE_SYSTEMCTL_SYSTEM_DIR", str(units))
    cfg = config(tmp_path, "daemon", targets='["systemd"]')
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    assert "User=daemon\n" in (units / "local.schedgen.tick.service").read_text()
    calls = fake_systemctl.calls()
    assert calls and all("--user" not in c for c in calls), calls
    assert ["enable", "--now", "local.schedgen.tick.timer"] in calls
    assert "lingering" not in r.stdout + r.stderr  # the system manager needs no login
    s = schedgen("status", "-c", str(cfg), "--json")
    assert json.loads(s.stdout)["jobs"][0]["installed"] is True, s.stdout
    u = schedgen("uninstall", "-c", str(cfg))
    assert u.returncode == 0, u.stderr
    assert not (units / "local.schedgen.tick.service").exists()


def test_run_of_a_system_job_by_root_runs_it_as_its_user(sys_user: str, open_root: Path) -> None:
    cfg = config(open_root, sys_user)
    cfg.chmod(0o644)
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    r = schedgen("run", "tick", "-c", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = next((open_root / "var/log/schedgen/tick/runs").glob("*/schedgen-manifest.json"))
    assert manifest.stat().st_uid == pwd.getpwnam(sys_user).pw_uid
    assert (manifest.parent / "stdout.log").read_text().splitlines()[0] == sys_user


def test_target_of_the_system_jobs_only_is_a_target_of_the_config(
        tmp_path: Path, fake_launchctl: FakeLaunchctl) -> None:
    cfg = config(tmp_path, "daemon", targets='["launchd"]',
                 extra='\n[jobs.own]\ncommand = "true"\nschedule = "@hourly"\ntargets = ["cron"]\n')
    r = schedgen("diff", "-c", str(cfg), "--target", "launchd")
    assert r.returncode == 1, r.stderr  # changes pending, not "no job goes to launchd"
    assert "local.schedgen.tick.plist" in r.stdout and "own" not in r.stdout
    r = schedgen("diff", "-c", str(cfg), "--target", "systemd")
    assert r.returncode == 2 and "--target systemd: no enabled job" in r.stderr


def test_a_system_jobs_metrics_file_is_written_as_its_user_and_readable_by_the_collector(
        sys_user: str, open_root: Path) -> None:
    # node_exporter's folder is not the account's (here: missing, so apply makes it root's).
    metrics_dir = open_root / "node-exporter"
    cfg = config(open_root, sys_user, extra=f'metrics_dir = "{metrics_dir}"\n')
    cfg.chmod(0o644)
    a = schedgen("apply", "-c", str(cfg))
    assert a.returncode == 0, a.stderr
    prom = metrics_dir / "schedgen_sys_tick.prom"

    def as_collector() -> str:  # node_exporter runs as an account of its own
        r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            "cat", str(prom)], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert as_collector() == ""          # before the first run: no series, not a dead link
    r = schedgen("run", "tick", "-c", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "could not write the metrics file" not in r.stderr
    text = as_collector()
    assert 'schedgen_job_runs_total{namespace="sys",job="tick",outcome="ok"} 1' in text
    written = prom.resolve()
    assert written.parent == open_root / "var/log/schedgen/tick"
    assert written.stat().st_uid == pwd.getpwnam(sys_user).pw_uid
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    st = metrics_dir.stat()                  # the account cannot write the shared folder
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o755)
    assert prom.lstat().st_uid == 0
    again = schedgen("apply", "-c", str(cfg))
    assert again.returncode == 0 and "link" not in again.stdout, again.stdout
    u = schedgen("uninstall", "-c", str(cfg))  # the link goes; the runs' file stays, as logs do
    assert u.returncode == 0 and f"removed: metrics file {prom}" in u.stdout, u.stdout + u.stderr
    assert not os.path.lexists(prom) and written.is_file()


def test_a_system_job_runs_as_its_user_whatever_roots_umask(sys_user: str,
                                                            open_root: Path) -> None:
    """Root's umask 027 or 077 (hardened hosts) took from the folders apply makes the bits
    the job's user needs to reach its job file, its log and its lock folder: its runs
    failed. The system scope's folders get their designed modes whatever the umask."""
    cfg = config(open_root, sys_user)
    cfg.chmod(0o644)
    old = os.umask(0o077)
    try:
        assert schedgen("apply", "-c", str(cfg)).returncode == 0
    finally:
        os.umask(old)
    r = schedgen("run", "tick", "-c", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    for p in (open_root / "usr/local/libexec/schedgen", open_root / "var/log/schedgen",
              open_root / "var/lib/schedgen/locks"):
        st = p.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o755), p
