"""`check --notify`: each new problem goes out once through its job's notify command.

What was sent is remembered in <state dir>/check/<namespace>.json (by problem key); a
problem that clears is forgotten, so it is sent again if it comes back, and its clearing
is sent as a recovery when the job's `on` asks for one. A problem is sent when `on`
names its event: missed firings and drift (the job will not fire as configured) are
"missed"; items in failed/, a stale inbox, a lock held past the timeout and a run that
crashed (killed before it could tell anyone) are "failure". A failed run that ended
normally was told by the run itself, so check does not send it again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.commands.check import Health, Problem
from schedgen.config.model import Job
from schedgen.errors import SystemOpError
from schedgen.machine.fs import atomic_write

FORMAT = 1
TIME_LIMIT = 30  # seconds a notify command may take
EVENT = {"missed": "missed", "drift": "missed", "failed-items": "failure",
         "stale-inbox": "failure", "lock-held": "failure", "failed": "failure"}


def memory_path(namespace: str) -> Path:
    return paths.state_dir() / "check" / f"{namespace}.json"


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}  # unreadable memory: worst case a problem is sent once more
    if not isinstance(data, dict) or not isinstance(data.get("format"), int):
        return {}
    if data["format"] > FORMAT:
        raise SystemOpError(f"{path}: written by a newer schedgen (format {data['format']}); "
                            "upgrade schedgen")
    sent = data.get("sent")
    return {k: v for k, v in sent.items() if isinstance(v, dict)} if isinstance(sent, dict) else {}


def _wants(job: Job | None, p: Problem) -> str | None:
    """The event this problem is sent as for its job, or None."""
    if job is None or job.notify is None or job.notify.command is None:
        return None
    if p.kind == "failed" and not p.crashed:
        return None
    event = EVENT.get(p.kind)
    return event if event in job.notify.on else None


def notify(h: Health, now: datetime | None = None) -> list[dict[str, Any]]:
    """Send what is new (and recoveries); return one record per attempt."""
    now = now or datetime.now(UTC)
    path = memory_path(h.namespace)
    memory = _load(path)
    jobs = {j.name: j for j in h.jobs}
    current = {p.key for p in h.problems}
    out: list[dict[str, Any]] = []
    for p in h.problems:
        if p.key in memory:
            continue
        job = jobs.get(p.job or "")
        event = _wants(job, p)
        if job is None or event is None:
            continue
        ok, detail = send(job, event, p.kind, p.text)
        out.append({"job": p.job, "event": event, "key": p.key, "sent": ok, "detail": detail})
        if ok:
            memory[p.key] = {"job": p.job, "kind": p.kind, "event": event, "text": p.text,
                             "sent_at": now.strftime("%Y-%m-%dT%H:%M:%SZ")}
    for key in [k for k in memory if k not in current]:
        old = memory.pop(key)
        job = jobs.get(str(old.get("job")))
        if job is None or job.notify is None or job.notify.command is None:
            continue
        if "recovery" in job.notify.on:
            text = f"resolved: {old.get('text', key)}"
            ok, detail = send(job, "recovery", str(old.get("kind", "")), text)
            out.append({"job": job.name, "event": "recovery", "key": key, "sent": ok,
                        "detail": detail})
    try:
        atomic_write(path, json.dumps({"format": FORMAT, "namespace": h.namespace,
                                       "sent": memory}, indent=2) + "\n", 0o600)
    except OSError as exc:
        raise SystemOpError(f"cannot write {path}: {exc.strerror}") from None
    return out


def send(job: Job, event: str, kind: str, text: str) -> tuple[bool, str]:
    """Run the job's notify command (problem text on stdin), killing its process group
    after TIME_LIMIT. True when it exited 0."""
    assert job.notify is not None and job.notify.command is not None
    cmd = job.notify.command
    argv = ["bash", "-c", cmd, job.name] if isinstance(cmd, str) else list(cmd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDGEN_")}
    env.update(SCHEDGEN_JOB=job.name, SCHEDGEN_EVENT=event, SCHEDGEN_PROBLEM=kind,
               SCHEDGEN_MESSAGE=text, SCHEDGEN_LOG_DIR=str(job.log_dir),
               PATH=":".join(job.path) + ":" + env.get("PATH", ""))
    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=str(job.working_dir) if job.working_dir else None)
    except OSError as exc:
        return False, f"cannot run the notify command: {exc.strerror}"
    try:
        out, _ = proc.communicate((text + "\n").encode(), timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        return False, f"notify command killed after {TIME_LIMIT}s"
    if proc.returncode != 0:
        tail = out.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return False, f"notify command exit {proc.returncode}: {tail[0][:200]}"
    return True, "sent"
