"""`check --notify`: each new problem goes out once through each of its job's channels
(notify command, mail, webhook: channels.py).

What was sent is remembered in <state dir>/check/<namespace>.json (by problem key), the
memory of the user who runs check; a system-scope job's in <state dir>/check/system/
<namespace>.json, so that a system job and a user job of the same name and namespace
(root's /etc jobs.toml and root's own, both left at "default") keep apart what each
sent, and a check of one file does not take the other's problems for resolved. A
problem that clears is forgotten, so it is sent again if it comes back, and its clearing
is sent as a recovery when the job's `on` asks for one. A problem is sent when `on`
names its event: missed firings and drift (the job will not fire as configured) are
"missed"; items in failed/, a stale inbox, a lock held past the timeout and a run that
crashed (killed before it could tell anyone) are "failure". A failed run that ended
normally was told by the run itself, so check does not send it again.

The memory is written before each send (the attempt) and after it (the outcome), so a
check killed half-way neither sends again what went out nor loses count of its tries.
A send that failed (or was cut short) is tried again at later checks, at most
MAX_ATTEMPTS times and not before RETRY_AFTER * 4**(tries - 1) seconds since the last
try; then it is recorded as given up and not sent again while the problem lasts. Each
channel has its own memory entry (the command's under the problem's key, the others
under "<key> [mail]", "<key> [webhook]"), so a mail that went out is not sent again
because the webhook failed.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.commands import channels, sendout
from schedgen.commands.check import Health, Problem
from schedgen.config.model import Job
from schedgen.errors import SystemOpError
from schedgen.machine.fs import atomic_write
from schedgen.outcomes import events
from schedgen.records.shown import shown

FORMAT = 1
MAX_ATTEMPTS = 3  # tries of one send before it is given up
RETRY_AFTER = 60  # seconds after the first failed try; 4 times longer after each next
EVENT = {"missed": "missed", "drift": "missed", "failed-items": "failure",
         "stale-inbox": "failure", "lock-held": "failure", "failed": "failure"}


def memory_path(namespace: str, scope: str = paths.USER) -> Path:
    folder = paths.state_dir() / "check"
    return (folder / "system" if scope == paths.SYSTEM else folder) / f"{namespace}.json"


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError):
        return {}  # unreadable memory: worst case a problem is sent once more
    if not isinstance(data, dict) or not isinstance(data.get("format"), int):
        return {}
    if data["format"] > FORMAT:
        raise SystemOpError(f"{path}: written by a newer schedgen (format {data['format']}); "
                            "upgrade schedgen")
    sent = data.get("sent")
    return {k: v for k, v in sent.items() if isinstance(v, dict)} if isinstance(sent, dict) else {}


def _channels(job: Job | None) -> tuple[str, ...]:
    return job.notify.channels() if job is not None and job.notify is not None else ()


def _key(problem: str, channel: str) -> str:
    return problem if channel == "command" else f"{problem} [{channel}]"


def _wants(job: Job | None, p: Problem) -> str | None:
    """The event this problem is sent as for its job, or None."""
    if job is None or job.notify is None or not _channels(job):
        return None
    if p.kind == "failed" and not p.crashed:
        return None
    event = EVENT.get(p.kind)
    return event if event in job.notify.on else None


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _due(entry: dict[str, Any], now: datetime) -> bool:
    """A send that failed may be tried again: fewer than MAX_ATTEMPTS tries, the last
    one long enough ago."""
    tries = entry.get("attempts")
    if not isinstance(tries, int) or isinstance(tries, bool) or tries < 1:
        return True
    if tries >= MAX_ATTEMPTS:
        return False
    last = events.ts(entry.get("tried_at"))
    return last is None or (now - last).total_seconds() >= RETRY_AFTER * 4 ** (tries - 1)


class _Memory:
    """The memory file, written whole (atomically) at each change."""

    def __init__(self, namespace: str, scope: str) -> None:
        self.namespace = namespace
        self.path = memory_path(namespace, scope)
        self.sent = _load(self.path)

    def save(self) -> None:
        try:
            atomic_write(self.path, json.dumps({"format": FORMAT, "namespace": self.namespace,
                                                "sent": self.sent}, indent=2) + "\n", 0o600)
        except OSError as exc:
            raise SystemOpError(f"cannot write {self.path}: {exc.strerror}") from None


def notify(h: Health, now: datetime | None = None) -> list[dict[str, Any]]:
    """Send what is new (and recoveries), and retry what failed; one record per attempt
    (and per send given up)."""
    now = now or datetime.now(UTC)
    out: list[dict[str, Any]] = []
    # Each scope of the config's jobs on its own memory; a problem of no job (drift of
    # the scheduler) is sent by none, so remembered by none.
    for scope in paths.SCOPES:
        jobs = {j.name: j for j in h.jobs if j.scope == scope}
        if jobs:
            out += _notify(_Memory(h.namespace, scope), jobs,
                           [p for p in h.problems if p.job in jobs], now)
    return out


def _notify(memory: _Memory, jobs: dict[str, Job], problems: list[Problem],
            now: datetime) -> list[dict[str, Any]]:
    current = {p.key for p in problems}
    out: list[dict[str, Any]] = []
    for p in problems:
        job = jobs.get(p.job or "")
        event = _wants(job, p)
        if job is None or event is None:
            continue
        for channel in _channels(job):
            record: dict[str, Any] = {"job": p.job, "kind": p.kind, "event": event,
                                      "text": shown(p.text), "channel": channel,
                                      "problem": p.key}
            out += _attempt(memory, _key(p.key, channel), record, job, now)
    gone = [k for k, v in memory.sent.items()
            if str(v.get("problem", k)) not in current and not v.get("recovery")]
    for key in gone:
        old = memory.sent.pop(key)
        job = jobs.get(str(old.get("job")))
        channel = str(old.get("channel", "command"))
        memory.save()
        if old.get("state", "sent") != "sent" or job is None or job.notify is None \
                or channel not in _channels(job) or "recovery" not in job.notify.on:
            continue  # a problem never told is not told resolved either
        record = {"job": job.name, "kind": str(old.get("kind", "")), "event": "recovery",
                  "text": f"resolved: {old.get('text', key)}", "recovery": True,
                  "channel": channel, "problem": f"{key} (recovery)"}
        out += _attempt(memory, f"{key} (recovery)", record, job, now)
    for key in [k for k, v in memory.sent.items() if v.get("recovery")]:
        entry = memory.sent[key]
        job = jobs.get(str(entry.get("job")))
        if job is not None and str(entry.get("channel", "command")) in _channels(job) \
                and entry.get("state") not in ("sent", "given-up"):
            out += _attempt(memory, key, entry, job, now)
        if memory.sent.get(key, {}).get("state") in ("sent", "given-up") or job is None:
            memory.sent.pop(key, None)  # a recovery is remembered only until it is told
            memory.save()
    memory.save()
    return out


def _attempt(memory: _Memory, key: str, record: dict[str, Any], job: Job,
             now: datetime) -> list[dict[str, Any]]:
    """Send ``record`` unless it was sent or given up, or its next try is not due yet."""
    entry = memory.sent.get(key, {})
    state = entry.get("state", "sent" if entry else None)
    if state in ("sent", "given-up"):
        return []
    # "sending": a check was killed during that send; it counts as a try that failed.
    tries = entry.get("attempts", 0) if isinstance(entry.get("attempts"), int) else 0
    channel = str(record.get("channel", "command"))
    said = {"job": record["job"], "event": record["event"], "key": key, "channel": channel}
    if entry and not _due(entry, now):
        if tries >= MAX_ATTEMPTS:
            memory.sent[key] = {**entry, "state": "given-up"}
            memory.save()
            return [{**said, "sent": False, "detail": f"gave up after {tries} tries "
                     f"(last: {entry.get('detail', 'cut short')})"}]
        return []
    base = {k: v for k, v in record.items()
            if k in ("job", "kind", "event", "text", "recovery", "channel", "problem")}
    memory.sent[key] = {**base, "state": "sending", "attempts": tries + 1,
                        "tried_at": _stamp(now)}
    memory.save()
    ok, detail = send(job, str(record["event"]), str(record["kind"]), str(record["text"]),
                      channel)
    if ok:
        memory.sent[key] = {**base, "state": "sent", "sent_at": _stamp(now)}
    else:
        gone = tries + 1 >= MAX_ATTEMPTS
        memory.sent[key] = {**base, "state": "given-up" if gone else "failing",
                            "attempts": tries + 1, "tried_at": _stamp(now), "detail": detail}
        if gone:
            detail += f"; gave up after {tries + 1} tries"
    memory.save()
    return [{**said, "sent": ok, "detail": detail, "attempt": tries + 1}]


def send(job: Job, event: str, kind: str, text: str,
         channel: str = "command") -> tuple[bool, str]:
    """Send through one channel: the job's notify command (problem text on stdin and in
    SCHEDGEN_MESSAGE), its mail or its webhook, bounded as a whole (sendout.py). True
    when it went out (the command exited 0, sendmail took it, the hook answered 2xx)."""
    assert job.notify is not None
    text = shown(text)  # one line, no NUL (the environment cannot hold one)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEDGEN_")}
    env.update(SCHEDGEN_JOB=job.name, SCHEDGEN_EVENT=event, SCHEDGEN_PROBLEM=kind,
               SCHEDGEN_MESSAGE=text, SCHEDGEN_LOG_DIR=str(job.log_dir),
               PATH=":".join(job.path) + ":" + env.get("PATH", ""))
    if channel == "mail":
        result = channels.send_mail(job, channels.payload(job, event, kind, text), env)
    elif channel == "webhook":
        result = channels.send_webhook(job, channels.payload(job, event, kind, text), env)
    else:
        assert job.notify.command is not None
        cmd = job.notify.command
        argv = ["bash", "-c", cmd, job.name] if isinstance(cmd, str) else list(cmd)
        result = sendout.run_bounded(argv, env, text + "\n",
                                     str(job.working_dir) if job.working_dir else None)
    return result.ok, result.detail
