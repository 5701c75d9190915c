"""Builders for the wrapper tests: a job from a few fields, its rendered job file and the
shared runtime beside it, real runs.

Everything lives under the test's tmp_path (log_root, lock_dir, wrapper_dir, queue
folders); wrappers run with /bin/bash in their own session, so a test can kill a run's
whole process group and check that nothing of it is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from schedgen.config.load import loads
from schedgen.config.model import Config, Job
from schedgen.render.artifacts import (
    notify_path,
    notify_settings,
    notify_text,
    runtime_path,
    runtime_text,
    wrapper,
)

BASH = "/bin/bash"
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
# Set (with BASH and SYSTEM_PATH) by the `macos` leg of a test (tests/plugin.py): GNU bash
# 3.2 and the BSD userland of tests/bsd_userland.py. Read them as wrapper_kit.BASH etc.
MACOS = False


def shell_path() -> str:
    """PATH for a bash the test starts itself: the BSD folder in the macos leg."""
    return os.pathsep.join(SYSTEM_PATH) if MACOS else os.environ.get("PATH", "")
# What stock macOS lacks; the wrapper must work without them.
HIDDEN = ("flock", "timeout", "setsid")


def hidden_tools_bin(root: Path) -> Path:
    """A bin dir of symlinks to every program on PATH except flock, timeout and setsid."""
    bindir = root / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    dirs = os.environ.get("PATH", "").split(os.pathsep) + SYSTEM_PATH
    for d in dirs:
        if not d or not os.path.isdir(d):
            continue
        for entry in os.scandir(d):
            name = entry.name
            if name in HIDDEN or (bindir / name).exists() or (bindir / name).is_symlink():
                continue
            if entry.is_file() and os.access(entry.path, os.X_OK):
                (bindir / name).symlink_to(entry.path)
    return bindir


@dataclass
class Wrapped:
    """A job from a generated jobs.toml, and its rendered wrapper on disk."""

    config: Config
    job: Job
    root: Path

    @property
    def path(self) -> Path:
        return self.job.wrapper_path

    @property
    def text(self) -> str:
        return self.path.read_text()

    @property
    def log_dir(self) -> Path:
        return self.job.log_dir

    def argv(self, *args: str) -> list[str]:
        return [BASH, str(self.path), *args]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDGEN_")}
        env.update(extra or {})
        return env

    def run(self, *args: str, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        p = self.popen(*args, env=env)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p.pid)
            p.communicate()
            raise
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), env=self.env(env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)

    # -- what the runs leave behind ----------------------------------------------
    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        path = self.log_dir / "events.jsonl"
        if not path.exists():
            return []
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return [e for e in lines if name is None or e["event"] == name]

    def run_dirs(self) -> list[Path]:
        runs = self.log_dir / "runs"
        return sorted(runs.iterdir()) if runs.exists() else []

    def manifests(self) -> list[dict[str, Any]]:
        return [json.loads((d / "schedgen-manifest.json").read_text()) for d in self.run_dirs()]


def make_job(root: Path, name: str = "job", *, path: Sequence[str] | None = None,
             **fields: Any) -> Wrapped:
    """Write jobs.toml for one job (dirs under root), load it, render and install its wrapper."""
    job_fields: dict[str, Any] = {
        "schedule": "@hourly", "targets": ["cron"], "log_root": str(root / "logs"),
        "lock_dir": str(root / "locks"), "wrapper_dir": str(root / "wrappers"),
        "path": list(path or SYSTEM_PATH),
    }
    job_fields.update(fields)
    text = tomli_w.dumps({"jobs": {name: job_fields}})
    config_path = root / f"{name}.toml"
    config_path.write_text(text)
    config = loads(text, config_path)
    job = config.job(name)
    assert job is not None
    job.wrapper_path.parent.mkdir(parents=True, exist_ok=True)
    job.wrapper_path.write_text(wrapper(job, config))
    job.wrapper_path.chmod(0o755)
    runtime_path(job, config).write_text(runtime_text())
    if notify_settings(job) is not None:
        notify_path(job, config).write_text(notify_text())
    return Wrapped(config, job, root)


def queue_fields(root: Path, **over: Any) -> dict[str, Any]:
    q = {"inbox": str(root / "q" / "inbox")}
    q.update(over)
    return q


def fill_inbox(inbox: Path, names: Iterable[str], age: float = 0) -> None:
    inbox.mkdir(parents=True, exist_ok=True)
    for n in names:
        f = inbox / n
        f.write_text(json.dumps({"name": n}))
        if age:
            t = time.time() - age
            os.utime(f, (t, t))



def produce_reusing_names(inbox: Path, scratch: Path, contents: Sequence[str], names: int,
                          done: Any) -> None:
    """Drop each of `contents` into `inbox` as a producer does, under one of `names` names
    in turn (n0.json, n1.json, ...), each by link(2): never over a file there (it waits
    until the name is free). `done.set()` once all are in."""
    for i, c in enumerate(contents):
        tmp = scratch / f"new-{i}"
        tmp.write_text(c)
        while True:
            try:
                os.link(tmp, inbox / f"n{i % names}.json")   # never over a file
                break
            except FileExistsError:
                time.sleep(0.01)
        tmp.unlink()
    done.set()


def file_id(path: Path) -> str:
    """What a count names its file by ("INODE/SIZE", as the runtime's sg_ino)."""
    st = path.lstat()
    return f"{st.st_ino}/{st.st_size}"


def attempts_of(queue: Path, name: str) -> str:
    """The failed-attempt count kept for the inbox file `name` ("COUNT INODE/SIZE"), checked
    to be that file's own: its inode and size are the ones recorded. '' when there is none."""
    f = queue / "processing" / ".attempts" / name
    if not f.exists():
        return ""
    count, ident = f.read_text().split()
    item = queue / "inbox" / name
    assert item.exists() and file_id(item) == ident, (name, ident)
    return count

# -- processes ----------------------------------------------------------------------

def start_together(argvs: Sequence[Sequence[str]], env: dict[str, str],
                   workdir: Path) -> list[subprocess.Popen[str]]:
    """Start processes that all begin at the same instant: each blocks reading a FIFO that
    we hold open, and closing it hands every one of them EOF at once."""
    fifo = Path(tempfile.mkdtemp(dir=workdir)) / "go"
    os.mkfifo(fifo)
    hold = os.open(fifo, os.O_RDWR)
    procs = [subprocess.Popen([BASH, "-c", 'read -r _ <"$0"; exec "$@"', str(fifo), *argv],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True) for argv in argvs]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(_has_open(p.pid, fifo) for p in procs):
        time.sleep(0.01)
    os.close(hold)
    return procs


def _has_open(pid: int, path: Path) -> bool:
    fd_dir = Path(f"/proc/{pid}/fd")
    if not Path("/proc/self/fd").exists():  # no /proc (macOS): give them time instead
        time.sleep(0.5)
        return True
    try:
        return any(os.readlink(fd) == str(path) for fd in fd_dir.iterdir())
    except OSError:
        return False


def finish(procs: Sequence[subprocess.Popen[str]], timeout: float = 60) -> list[tuple[int, str, str]]:
    out = []
    for p in procs:
        o, e = p.communicate(timeout=timeout)
        out.append((p.returncode, o, e))
    return out


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal a run's processes: the wrapper's group, and (where /proc shows them) every
    other process of its session, i.e. the command's own group too. The runs started
    here lead a session of their own (start_new_session)."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    if Path("/proc/self/stat").exists():
        for pid, _ in session_procs(pgid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def session_procs(sid: int) -> list[tuple[int, str]]:
    """Live (non-zombie) processes of session sid, as (pid, command line)."""
    found = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            stat = (d / "stat").read_text()
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append((int(d.name), cmdline))
    return found


def wait_until_gone(sid: int, timeout: float = 5) -> list[tuple[int, str]]:
    """Wait for every process of session sid to end; return those still there."""
    deadline = time.monotonic() + timeout
    left = session_procs(sid)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = session_procs(sid)
    return left


# How long a poll waits before it gives up, and how often it looks: a loaded or slow
# machine can give more time (SCHEDGEN_TEST_WAIT=60) without any test changing.
WAIT = float(os.environ.get("SCHEDGEN_TEST_WAIT", "20"))
POLL = float(os.environ.get("SCHEDGEN_TEST_POLL", "0.02"))


def wait_for(predicate: Any, timeout: float | None = None, what: str = "condition") -> None:
    deadline = time.monotonic() + (WAIT if timeout is None else timeout)
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(POLL)


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="process checks read /proc (Linux)")
