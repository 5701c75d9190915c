"""What the wrappers leave behind, read back: run manifests, queue folders, locks.

Layout (written by the wrapper, DESIGN.md §5):
  <log_root>/<job>/runs/<run_id>/manifest.json   job, run_id, host, pid, started_at,
                                                 finished_at, duration, exit_code,
                                                 outcome, item, attempt
  <log_root>/<job>/events.jsonl
  <lock_dir>/<lock name>.lock                    held with flock while a run is active
  queue: files matching `pattern` in inbox, claims in processing/<run_id>/, failed/
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedgen.model import Job


@dataclass(frozen=True)
class QueueDepth:
    inbox: int
    processing: int
    failed: int


def last_run(job: Job) -> dict[str, Any] | None:
    """The newest manifest (run ids sort by time); an unreadable one is reported as such."""
    runs = job.log_dir / "runs"
    try:
        ids = sorted((d.name for d in runs.iterdir() if d.is_dir()), reverse=True)
    except OSError:
        return None
    for run_id in ids:
        path = runs / run_id / "manifest.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            # A run that is still starting writes its manifest a moment later.
            continue
        except (OSError, ValueError) as exc:
            return {"run_id": run_id, "outcome": "unreadable", "error": str(exc)}
        if isinstance(data, dict):
            data.setdefault("run_id", run_id)
            return data
    return None


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
        fd = os.open(path, os.O_RDONLY)
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
