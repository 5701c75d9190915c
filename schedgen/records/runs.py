"""What the wrappers leave behind, read back: run manifests, queue folders, locks.

Layout (written by the wrapper, docs/design.md, "File layouts"):
  <log_root>/<job>/runs/<run_id>/schedgen-manifest.json
                                                 job, run_id, host, pid, started_at,
                                                 finished_at, duration, exit_code,
                                                 outcome, item, attempt (manifest.json
                                                 there is the command's, or a run's
                                                 from before the manifest had its name)
  <log_root>/<job>/events.jsonl
  <lock_dir>/<lock name>.lock                    held with flock while a run is active
  queue: files matching `pattern` in inbox, claims in processing/<run_id>/, failed/
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.config.model import Job
from schedgen.records import untrusted
from schedgen.records.shown import shown

PID_LIMIT = 2**31  # pid_t is 32 bits; Linux's pid_max is at most 2**22, macOS's 99,999
# The fields of a manifest shown by `status`, and what each must be.
_TEXT = ("job", "run_id", "host", "started_at", "finished_at", "outcome", "item", "item_path")
_NUMBER = ("format", "pid", "duration", "exit_code", "attempt")

MANIFEST = "schedgen-manifest.json"  # the wrapper's, in the run directory ({artifact_dir})
OLD_MANIFEST = "manifest.json"  # its name before: a command's own build artifact, often
MANIFEST_LIMIT = 1 << 20  # bytes: the wrapper's is a few hundred


_RUN_ID = re.compile(r"([0-9]{8}T[0-9]{6}Z)-([0-9]{1,32})(?:-([0-9]{1,32}))?")


def run_order(name: str) -> tuple[str, int, int, str]:
    """Sort key of a run directory name (<UTC second>-<pid>[-<n>]): its second, its pid as
    a number, its count. The runtime pads the pid to 7 digits so that text order is start
    order; an older one did not, and as text its pid 9986 sorts after 10050."""
    m = _RUN_ID.fullmatch(name)
    if m is None:
        return (name, 0, 0, name)
    return (m[1], int(m[2]), int(m[3] or 1), name)


def newest_first(names: Iterable[str]) -> list[str]:
    """Run directory names, the newest first."""
    return sorted(names, key=run_order, reverse=True)


class QueueDepth(NamedTuple):
    inbox: int
    processing: int
    failed: int


def last_run(job: Job) -> dict[str, Any] | None:
    """The newest manifest (run ids sort by time); an unreadable one is reported as such."""
    runs = job.log_dir / "runs"
    try:
        ids = newest_first(d.name for d in runs.iterdir() if d.is_dir())
    except OSError:
        return None
    for run_id in ids:
        try:
            data = _manifest(runs / run_id)
        except (FileNotFoundError, ValueError, RecursionError):
            # A run that is starting writes its manifest a moment later, in one write
            # that a reader can catch half-way: look at the run before it. (A manifest
            # the job's command wrote, not UTF-8 or nested past any limit, is passed too.)
            continue
        except OSError as exc:
            return {"run_id": shown(run_id), "outcome": "unreadable",
                    "error": shown(exc.strerror or "")}
        if isinstance(data, dict):
            data = _checked(data)
            data.setdefault("run_id", shown(run_id))
            if data.get("outcome") == "running" and _dead_here(data):
                data["outcome"] = "crashed"  # killed before it could record its end
            return data
    return None


def _manifest(run_dir: Path) -> Any:
    """The run's manifest: MANIFEST, or manifest.json as a wrapper wrote it before its
    manifest had a name of its own (the command's file of that name is not taken for it)."""
    try:
        return json.loads(_read(run_dir / MANIFEST))
    except FileNotFoundError:
        old = json.loads(_read(run_dir / OLD_MANIFEST))
        if isinstance(old, dict) and old.get("format") == 1 and old.get("run_id") == run_dir.name:
            return old
        raise


def _read(path: Path) -> str:
    """A manifest, read as untrusted.py says (the log folder may be another account's);
    one past MANIFEST_LIMIT is no manifest of the wrapper's (ValueError)."""
    data = untrusted.read_below(path.parent.parent.parent, path, MANIFEST_LIMIT + 1)
    if len(data) > MANIFEST_LIMIT:
        raise ValueError(f"{path}: over {MANIFEST_LIMIT} bytes")
    return data.decode("utf-8")


def _checked(data: dict[str, Any]) -> dict[str, Any]:
    """The manifest's known fields of the right kind (or null), text shown safely; no others."""
    out: dict[str, Any] = {}
    for k in (*_TEXT, *_NUMBER, "smoke"):
        v = data.get(k)
        if v is None and k in data:
            out[k] = None
        elif isinstance(v, str) and k in _TEXT:
            out[k] = shown(v)
        elif k in _NUMBER and isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63:
            out[k] = v
        elif k == "smoke" and isinstance(v, bool):
            out[k] = v
    return out


def _dead_here(manifest: dict[str, Any]) -> bool:
    pid = manifest.get("pid")
    host = manifest.get("host")
    return dead_here(host if isinstance(host, str) else None,
                     pid if isinstance(pid, int) and not isinstance(pid, bool) else None)


def dead_here(host: str | None, pid: int | None) -> bool:
    """The run was on this host and its process is gone."""
    if host not in (os.uname().nodename, os.environ.get("HOSTNAME")) or not pid or pid <= 0:
        return False
    if pid >= PID_LIMIT:
        return True  # no process has such a number (os.kill would overflow)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def queue_depth(job: Job) -> QueueDepth | None:
    q = job.queue
    if q is None:
        return None
    return QueueDepth(inbox=_count(q.inbox, q.pattern), processing=_claims(q.processing),
                      failed=_count(q.failed, "*"))


def _count(folder: Path, pattern: str) -> int:
    try:
        return sum(1 for f in folder.glob(pattern) if f.is_file() and not f.name.startswith("."))
    except OSError:
        return 0


def _claims(processing: Path) -> int:
    """Claimed items: files inside processing/<run_id>/ (and any loose file there)."""
    total = 0
    try:
        for entry in processing.iterdir():
            if entry.name.startswith("."):
                continue  # .attempts/ and other bookkeeping
            if entry.is_dir():
                total += sum(1 for f in entry.iterdir() if f.is_file()
                             and not f.name.startswith("."))
            elif entry.is_file() and not entry.name.startswith("."):
                total += 1
    except OSError:
        pass
    return total


def lock_held(job: Job) -> bool | None:
    """True if a run holds the job's lock: a non-blocking flock attempt fails.

    The attempt is released at once; a lock file that does not exist is not held.
    None: the job runs without a lock.
    """
    if job.lock is None:
        return None
    path = job.lock_dir / f"{job.lock.name}.lock"
    try:
        st = os.stat(path)
    except OSError:
        return False
    held = _proc_locks_holds(st)
    if held is not None:
        return held
    # No /proc/locks (macOS): try the lock for an instant. A run starting in that
    # instant would find it busy, which is why /proc/locks is preferred.
    try:
        fd = untrusted.open_below(job.lock_dir, path)  # the folder may be the job user's
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _proc_locks_holds(st: os.stat_result) -> bool | None:
    """Linux: is there a FLOCK on this file in /proc/locks? None if it can't be read."""
    try:
        text = Path("/proc/locks").read_text()
    except OSError:
        return None
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in text.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF" ("->" marks waiters)
        if "->" in fields:
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == ident:
            return True
    return False
