"""`schedgen run JOB`: run a job's wrapper now, in the foreground, and pass its status on.

The wrapper is rendered from the current config. If the installed job file and the
runtime beside it are byte-for-byte the same it is run in place; otherwise the job file
with the runtime inlined goes to a private temp file, so a manual run always does what
the config says, installed or not.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from schedgen.config import load as cfg
from schedgen.config.model import Job
from schedgen.errors import SystemOpError, UsageError
from schedgen.records import runs
from schedgen.render.artifacts import (
    notify_path,
    notify_settings,
    notify_text,
    runtime_path,
    runtime_text,
    wrapper,
)


def _bash() -> str:
    """The shell the wrapper's #! line names, or bash from PATH where /bin/bash is missing."""
    if os.access("/bin/bash", os.X_OK):
        return "/bin/bash"
    found = shutil.which("bash")
    if found is None:
        raise SystemOpError("cannot run the wrapper: bash not found")
    return found


def run(config_path: Path, job_name: str, smoke: bool = False, quiet_stdout: bool = False) -> int:
    """Run JOB's wrapper in the foreground; return its exit status (128+N if killed by N).
    `quiet_stdout` (run --json): the job's stdout goes to stderr, so stdout is the JSON."""
    config = cfg.load(config_path)
    job = config.job(job_name)
    if job is None:
        names = ", ".join(j.name for j in config.jobs) or "none"
        raise UsageError(f"no job named {job_name!r} in {config.path} (jobs: {names})")
    if not job.enabled:
        print(f"schedgen: note: {job.name} is disabled (enabled = false); running it anyway",
              file=sys.stderr)
    if job.metrics_dir is not None and not job.wrapper_path.exists():
        # Not installed here: no apply would ever take its metrics file away again.
        print(f"schedgen: note: {job.name} is not installed here; this run writes no "
              "metrics file (schedgen apply installs it)", file=sys.stderr)
        job = job._replace(metrics_dir=None)
    text: str | None = wrapper(job, config)
    # In place only if the runtime (and the notify part it reads) beside it are the
    # current ones too; else standalone.
    if _read(runtime_path(job, config)) != runtime_text() or (
            notify_settings(job) is not None
            and _read(notify_path(job, config)) != notify_text()):
        text = None

    env = dict(os.environ, SCHEDGEN_FOREGROUND="1")
    if smoke:
        env["SCHEDGEN_SMOKE"] = "1"
    account = _account(job, env)
    script, temporary = script_for(job, text, lambda: wrapper(job, config, standalone=True))
    try:
        if temporary and account is not None:
            os.chown(script, account.pw_uid, account.pw_gid)  # 0600: its user's alone
        return _foreground([_bash(), str(script)], env, quiet_stdout, account)
    finally:
        if temporary:
            script.unlink(missing_ok=True)


def _account(job: Job, env: dict[str, str]) -> pwd.struct_passwd | None:
    """A system job runs as its user, as its scheduler would run it: root runs it so (its
    records stay that user's); another account than that user may not run it at all."""
    if job.user is None:
        return None
    try:
        account = pwd.getpwnam(job.user)
    except KeyError:
        raise UsageError(f"job {job.name} runs as {job.user}, an account this host has "
                         "not") from None
    if os.geteuid() == account.pw_uid:
        return None
    if os.geteuid() != 0:
        raise UsageError(f"job {job.name} runs as {job.user} (scope = \"system\"): run it "
                         f"as root (sudo schedgen run {job.name}) or as {job.user}")
    env.update(HOME=account.pw_dir, USER=account.pw_name, LOGNAME=account.pw_name)
    return account


def last_run_json(config_path: Path, job_name: str, status: int) -> dict[str, object]:
    """`run --json`: the run just made, from its manifest (its ID, outcome, times, logs)."""
    config = cfg.load(config_path)
    job = config.job(job_name)
    last = runs.last_run(job) if job is not None else None
    out: dict[str, object] = {"job": job_name, "exit_code": status}
    if last:
        run_dir = job.log_dir / "runs" / str(last.get("run_id")) if job is not None else None
        out.update({k: last.get(k) for k in ("run_id", "outcome", "started_at", "finished_at")})
        if run_dir is not None:
            out["stdout_log"] = str(run_dir / "stdout.log")
            out["stderr_log"] = str(run_dir / "stderr.log")
    return out


def script_for(job: Job, text: str | None,
               standalone: Callable[[], str] | None = None) -> tuple[Path, bool]:
    """The installed job file if it is exactly `text`, else a private temp file (True)
    holding the job file with the runtime inlined."""
    if text is not None and _read(job.wrapper_path) == text:
        return job.wrapper_path, False
    fd, name = tempfile.mkstemp(prefix=f"schedgen-{job.name}-", suffix=".sh")  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(standalone() if standalone is not None else text or "")
    return Path(name), True


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _foreground(argv: list[str], env: dict[str, str], quiet_stdout: bool = False,
                account: pwd.struct_passwd | None = None) -> int:
    """Run argv with our stdio; Ctrl-C and TERM reach the wrapper, which settles and exits.

    The wrapper shares our process group, so a Ctrl-C at the terminal reaches it directly;
    we only keep waiting for it (a no-op handler, not SIG_IGN, which the child would
    inherit and could not trap). A TERM sent to us alone is passed on.
    """
    # The handlers go in before the wrapper starts: a Ctrl-C right after it started must
    # not end us while it still runs. A TERM that comes before it exists is passed on then.
    procs: list[subprocess.Popen[bytes]] = []
    pending: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if signum != signal.SIGINT:
            if procs:
                procs[0].send_signal(signum)
            else:
                pending.append(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        try:
            as_user: dict[str, Any] = {} if account is None else {
                "user": account.pw_uid, "group": account.pw_gid,
                "extra_groups": os.getgrouplist(account.pw_name, account.pw_gid),
                # where cron starts it: its home (root's folder may be closed to it)
                "cwd": account.pw_dir if os.path.isdir(account.pw_dir) else "/"}
            procs.append(subprocess.Popen(argv, env=env,
                                          stdout=sys.stderr.fileno() if quiet_stdout else None,
                                          **as_user))
        except OSError as exc:
            raise SystemOpError(f"cannot run the wrapper: {exc}") from None
        for signum in pending:
            procs[0].send_signal(signum)
        status = procs[0].wait()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return 128 - status if status < 0 else status
