"""System scope against its own job's user: what that account leaves in the folders it
owns (its log folder) must not make a command root runs hang, follow a link out, or show
a file the account could not read; and a namespace a user shares with a system install
made from another jobs.toml is the user's own to apply.

The account is a real one (useradd), its files are made by a process running as it.
"""

from __future__ import annotations

import json
import os
import pickle
import pwd
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from schedgen import paths
from schedgen.machine import ownership
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config
from tests.test_system_scope import config, open_root, sys_user  # noqa: F401 (fixtures)

T = TypeVar("T")


def as_user(user: str, script: str) -> None:
    subprocess.run(["runuser", "-u", user, "--", "sh", "-c", script], check=True)


def as_account(account: pwd.struct_passwd, work: Callable[[], T]) -> T:
    """`work` in a child process that is the account for real (uid, not just euid)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.setgroups([])
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)
            data = pickle.dumps(work())
        except BaseException as exc:  # noqa: BLE001 (reported to the parent)
            data = pickle.dumps(exc)
        with os.fdopen(write, "wb") as fh:
            fh.write(data)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        result = pickle.loads(fh.read())
    os.waitpid(pid, 0)
    if isinstance(result, BaseException):
        raise result
    return result  # type: ignore[no-any-return]


def root_runs(*args: str) -> subprocess.CompletedProcess[str]:
    """schedgen as root in a process of its own, bounded: a hang is a failure, not a stall."""
    return subprocess.run([sys.executable, "-m", "schedgen", *args], capture_output=True,
                          text=True, timeout=30)


def test_what_the_jobs_user_plants_in_its_log_folder_cannot_hang_or_leak_to_root(
        sys_user: str, open_root: Path, tmp_path: Path) -> None:  # noqa: F811
    cfg = config(open_root, sys_user, extra="")
    cfg.write_text(cfg.read_text().replace('echo tick"', 'echo tick; exit 3"'))
    cfg.chmod(0o644)
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    assert schedgen("run", "tick", "-c", str(cfg)).returncode == 3  # a failure, as the user
    secret = tmp_path / "secret"  # root's alone: the job's user cannot read it
    secret.write_text("root-only-secret-line\n")
    secret.chmod(0o600)
    logs = open_root / "var/log/schedgen/tick"
    run = next((logs / "runs").iterdir())
    # the failed run's stderr.log a link to root's file; a newer run whose manifest is a
    # FIFO (a reader blocks on it for ever); the metrics state a FIFO too
    as_user(sys_user, f"cd {run} && rm stderr.log && ln -s {secret} stderr.log"
                      f" && mkdir {logs}/runs/20991231T000000Z-1"
                      f" && mkfifo {logs}/runs/20991231T000000Z-1/schedgen-manifest.json"
                      f" && mkfifo {logs}/.metrics")
    for args in (["status", "-c", str(cfg)], ["check", "-c", str(cfg)],
                 ["history", "tick", "-c", str(cfg)]):
        r = root_runs(*args)
        assert r.returncode in (0, 1), (args, r.stdout + r.stderr)
        assert "root-only-secret-line" not in r.stdout + r.stderr
    out = tmp_path / "report.html"
    r = root_runs("report", "-c", str(cfg), "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    page = out.read_text()
    assert "root-only-secret-line" not in page
    assert "tick: failed, exit 3" in page  # the failure is still listed
    # events.jsonl a FIFO: history and check still end
    as_user(sys_user, f"rm -rf {logs}/runs/20991231T000000Z-1 && mv {logs}/events.jsonl "
                      f"{logs}/events.jsonl.1 && mkfifo {logs}/events.jsonl")
    for args in (["check", "-c", str(cfg)], ["history", "tick", "-c", str(cfg)],
                 ["status", "-c", str(cfg)]):
        r = root_runs(*args)
        assert r.returncode in (0, 1), (args, r.stdout + r.stderr)


def test_a_namespace_installed_system_wide_from_another_config_leaves_users_free(
        sys_user: str, open_root: Path, fake_crontab: FakeCrontab) -> None:  # noqa: F811
    system_cfg = config(open_root, sys_user, namespace="shared")
    assert schedgen("apply", "-c", str(system_cfg)).returncode == 0
    with paths.in_scope(paths.SYSTEM):
        installed = ownership.load("shared").entries
    mine = open_root / "mine"
    mine.mkdir(mode=0o755)
    user_cfg = write_config(mine / "jobs.toml", """
[defaults]
namespace = "shared"
targets = ["cron"]

[jobs.mine]
command = "true"
schedule = "@daily"
""")
    user_cfg.chmod(0o644)
    # the user's own apply and uninstall, in a process that is that user for real
    home = open_root / "uhome"
    (home / "bin").mkdir(parents=True)
    fake = FakeCrontab(home / "bin", home)
    account = pwd.getpwnam(sys_user)
    for p in (home, *home.iterdir()):
        os.chown(p, account.pw_uid, account.pw_gid)
    env = {**fake.env, "HOME": str(home), "PATH": f"{home}/bin:{os.environ['PATH']}",
           "SCHEDGEN_TEST_APPLY_LOCK": str(home / "apply.lock")}
    for args in (["apply", "--dry-run"], ["uninstall", "--dry-run"]):
        schedgen(*args, "-c", str(user_cfg), env=env)  # modules loaded while root reads them
    r, u = as_account(account, lambda: (schedgen("apply", "-c", str(user_cfg), env=env),
                                         schedgen("uninstall", "-c", str(user_cfg), env=env)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "only root may" not in r.stderr
    assert u.returncode == 0, u.stdout + u.stderr
    assert fake.writes()  # its crontab was written, then emptied
    # root's own user-scope config of that namespace leaves the system install alone too
    assert schedgen("apply", "-c", str(user_cfg), "--prune").returncode == 0
    with paths.in_scope(paths.SYSTEM):
        assert ownership.load("shared").entries == installed
    assert (open_root / "etc/cron.d/schedgen-shared").exists()
    # the config that installed it still removes its jobs when they leave system scope
    system_cfg.write_text(system_cfg.read_text().replace(f'scope = "system"\nuser = "{sys_user}"\n',
                                                         ""))
    assert schedgen("apply", "-c", str(system_cfg)).returncode == 0
    assert not (open_root / "etc/cron.d/schedgen-shared").exists()


@pytest.fixture(autouse=True)
def _needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")


def test_a_system_folder_under_a_folder_another_account_owns_is_refused(
        sys_user: str, open_root: Path, fake_crontab: FakeCrontab) -> None:  # noqa: F811
    """The job file's own folder is root's 0755, but the one above it is the account's:
    that account renames the folder away and puts its own job file in place, which cron
    then runs as the job's user (root here)."""
    app = open_root / "srv/app"
    (app / "bin").mkdir(parents=True)
    (app / "bin").chmod(0o755)
    account = pwd.getpwnam(sys_user)
    os.chown(app, account.pw_uid, account.pw_gid)
    cfg = config(open_root, "root", extra=f'wrapper_dir = "{app}/bin"\n')
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 3, r.stdout + r.stderr
    assert f"{app} is writable by others than root" in r.stderr
    assert not (open_root / "etc").exists() and not list((app / "bin").iterdir())
    # a folder root owns with the sticky bit (/tmp) is no way in: others cannot rename in it
    os.chown(app, 0, 0)
    app.chmod(0o1777)
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (app / "bin/tick.sh").exists()


def test_doctor_as_root_judges_a_system_jobs_files_as_its_user(
        sys_user: str, open_root: Path, fake_crontab: FakeCrontab) -> None:  # noqa: F811
    """The job's env_file is sourced, and its working_dir entered, by its user: root's
    doctor reading them as root would pass what the run then fails on (exit 78)."""
    secret = open_root / "root-only"
    secret.mkdir(mode=0o700)
    env = secret / "job.env"
    env.write_text("A=1\n")
    cfg = config(open_root, sys_user, extra=f'env_file = "{env}"\nworking_dir = "{secret}"\n')
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    d = schedgen("doctor", "-c", str(cfg), "--json")
    checks = {c["check"]: c for c in json.loads(d.stdout)["checks"] if c["job"] == "tick"}
    assert checks["env_file"]["verdict"] == "problem", checks["env_file"]
    assert f"not readable by {sys_user}" in checks["env_file"]["detail"]
    assert checks["working_dir"]["verdict"] == "problem", checks["working_dir"]
    # what doctor says is what the run finds
    assert schedgen("run", "tick", "-c", str(cfg)).returncode == 78
    secret.chmod(0o755)
    env.chmod(0o644)
    d = schedgen("doctor", "-c", str(cfg), "--json")
    checks = {c["check"]: c for c in json.loads(d.stdout)["checks"] if c["job"] == "tick"}
    assert checks["env_file"]["verdict"] == "ok" and checks["working_dir"]["verdict"] == "ok"
    # a job file whose folder's parent another account may write to is no safe one
    os.chown(open_root / "usr/local/libexec", pwd.getpwnam(sys_user).pw_uid, -1)
    d = schedgen("doctor", "-c", str(cfg), "--json")
    checks = {c["check"]: c for c in json.loads(d.stdout)["checks"] if c["job"] == "tick"}
    assert checks["job file owner"]["verdict"] == "problem", checks["job file owner"]
    assert str(open_root / "usr/local/libexec") in checks["job file owner"]["detail"]


def test_a_system_job_given_to_another_account_takes_its_log_folder_whole(
        sys_user: str, open_root: Path, tmp_path: Path) -> None:  # noqa: F811
    """The job moves from one account to another: its runs, as the new account, must
    be able to write where the old one's did, and the old one keep nothing it could
    still change there. A link the old account left is given over, not followed."""
    cfg = config(open_root, sys_user)
    cfg.chmod(0o644)
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    assert schedgen("run", "tick", "-c", str(cfg)).returncode == 0
    logs = open_root / "var/log/schedgen/tick"
    outside = tmp_path / "outside"
    outside.write_text("root's\n")
    as_user(sys_user, f"ln -s {outside} {logs}/link && ln -s {tmp_path} {logs}/runs/dirlink")
    cfg.write_text(cfg.read_text().replace(f'user = "{sys_user}"', 'user = "nobody"'))
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    nobody = pwd.getpwnam("nobody").pw_uid
    for p in (logs, *logs.rglob("*")):
        assert p.lstat().st_uid == nobody, p
    assert outside.stat().st_uid == 0 and tmp_path.stat().st_uid == 0  # links not followed
    assert schedgen("run", "tick", "-c", str(cfg)).returncode == 0
    runs = sorted((logs / "runs").glob("*/schedgen-manifest.json"))
    assert len(runs) == 2 and runs[-1].stat().st_uid == nobody


def test_a_fifo_for_a_lock_file_does_not_hold_up_the_lock_probe_without_proc_locks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where /proc/locks is missing (macOS) the probe opens the lock file: one the job's
    account made a FIFO must not block root's status for ever."""
    import threading

    from schedgen.config.load import load
    from schedgen.records import runs

    cfg = config(tmp_path, "root")
    job = load(cfg).jobs[0]
    assert job.lock is not None
    job.lock_dir.mkdir(parents=True)
    os.mkfifo(job.lock_dir / f"{job.lock.name}.lock")
    monkeypatch.setattr(runs, "_proc_locks_holds", lambda st: None)
    found: list[bool | None] = []
    t = threading.Thread(target=lambda: found.append(runs.lock_held(job)), daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the thread: a writer opens the FIFO
        os.close(os.open(job.lock_dir / f"{job.lock.name}.lock", os.O_WRONLY | os.O_NONBLOCK))
    assert found == [False]


def test_an_odd_user_name_is_said_once_not_also_missing(tmp_path: Path) -> None:
    cfg = config(tmp_path, "jo.hn@corp")
    r = schedgen("validate", "-c", str(cfg))
    assert r.returncode == 2
    assert "jobs.tick.user: 'jo.hn@corp' is not a valid user name" in r.stderr
    assert "missing" not in r.stderr, r.stderr


def test_an_apply_under_a_careless_umask_makes_no_folder_others_may_write(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    """root with umask 000 (a profile that says so): the system folders apply makes,
    and those it makes above them, are still root's 0755."""
    cfg = config(tmp_path, "daemon")
    root = Path(os.environ["SCHEDGEN_SYSTEM_ROOT"])
    old = os.umask(0)
    try:
        r = schedgen("apply", "-c", str(cfg))
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stdout + r.stderr
    made = [p for p in root.rglob("*") if p.is_dir() and not p.is_symlink()]
    assert made
    loose = [(str(p), oct(p.stat().st_mode & 0o777)) for p in made
             if p.stat().st_mode & 0o022]
    assert loose == []
    for f in (root / "etc/cron.d/schedgen-sys", root / "var/lib/schedgen/installed/sys.json"):
        assert f.stat().st_mode & 0o022 == 0, f
