"""Paused jobs: schedgen pause / resume. The job stays installed and keeps its state; its
wrapper sees the pause file (one stat a run) and records each firing as skipped.

One file per job, `<state dir>/paused/<namespace>/<job>`, written atomically: one line,
the Unix time the pause ends at, or 0 for "until resumed". It exists only while the
job is paused; a pause whose end has passed is over (the wrapper and schedgen both
compare), and `resume` or the next `pause` tidies the file.
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.machine.fs import atomic_write


class Pause(NamedTuple):
    job: str
    until: datetime | None  # None: until resumed

    def until_text(self) -> str:
        return (f"until {self.until.astimezone().strftime('%Y-%m-%d %H:%M')}" if self.until
                else "until resumed")

    def text(self) -> str:
        return f"paused {self.until_text()}"


def pause_file(namespace: str, job: str) -> Path:
    return paths.pause_file(namespace, job)


def pause(namespace: str, job: str, until: datetime | None) -> Pause:
    stamp = int(until.timestamp()) if until else 0
    f = pause_file(namespace, job)
    f.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write(f, f"{stamp}\n", 0o600)
    return Pause(job, until)


def resume(namespace: str, job: str) -> bool:
    """True when the job was paused."""
    try:
        pause_file(namespace, job).unlink()
    except FileNotFoundError:
        return False
    return True


def paused(namespace: str, job: str, now: datetime | None = None) -> Pause | None:
    """The job's pause in force now, if any (a damaged file reads as "until resumed",
    as the wrapper reads it)."""
    f = pause_file(namespace, job)
    try:
        st = f.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return Pause(job, None)
    if not stat.S_ISREG(st.st_mode):   # a FIFO would block the open: as the wrapper, not read
        return Pause(job, None)
    try:
        with f.open("rb") as fh:
            raw = fh.read(24).split(b"\n", 1)[0].strip()
    except OSError:
        return Pause(job, None)
    # As the wrapper: ASCII digits, at most 18 of them (else until resumed).
    stamp = int(raw) if raw.isdigit() and len(raw) <= 18 else 0
    if stamp == 0:
        return Pause(job, None)
    try:
        until = datetime.fromtimestamp(stamp, UTC)
    except (OverflowError, ValueError, OSError):   # past any date Python can hold
        return Pause(job, None)
    return Pause(job, until) if (now or datetime.now(UTC)) < until else None
