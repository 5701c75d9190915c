"""The runs of a job, newest first, from its events (the one record every run leaves).

A run is what one start, busy, empty, precondition or skipped (a firing of a paused job,
`schedgen pause`) event began; its finish event
(seen first, reading backwards) gives outcome, exit code and duration.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, NamedTuple

from schedgen.config.model import Job
from schedgen.outcomes import events
from schedgen.records.runs import dead_here
from schedgen.records.shown import field, shown

BEGINS = frozenset({"start", "busy", "empty", "precondition", "skipped"})
# Outcomes that mean the job did not do its work.
FAILED = frozenset({"failed", "timeout", "interrupted", "crashed", "precondition"})


class Run(NamedTuple):
    job: str
    run_id: str
    started: datetime  # UTC
    duration: int | None  # seconds, once finished
    outcome: str  # ok failed timeout interrupted busy empty precondition running crashed skipped
    exit_code: int | None
    item: str | None
    attempt: int | None
    smoke: bool = False
    pid: int | None = None
    host: str | None = None
    attempts: int | None = None  # with retries: the run's attempts in all (retries + 1)

    def attempt_text(self) -> str:
        """'2/3' for a job's retries, '2' for a queue item's (its limit is not recorded)."""
        if self.attempt is None:
            return ""
        return f"{self.attempt}/{self.attempts}" if self.attempts else str(self.attempt)

    def as_json(self) -> dict[str, Any]:
        d = self._asdict()
        d["started_at"] = self.started.strftime("%Y-%m-%dT%H:%M:%SZ")
        del d["started"]
        return d


OLDER_IN_A_ROW = 64  # events before `since`, read back in a row, that end a reading


def runs(job: Job, limit: int | None = None, since: datetime | None = None,
         skipped: events.Skipped | None = None) -> list[Run]:
    """The job's runs, newest first: at most ``limit``, none that began before ``since``.
    What the job's command may have written is not trusted: a begin or finish without a
    wrapper's time and run ID is counted in ``skipped``, and text is shown safely."""
    out: list[Run] = []
    finishes: dict[str, dict[str, Any]] = {}
    busy_exit = job.lock.busy_exit if job.lock else 75
    older = 0  # events in a row from before ``since``
    for ev in events.back(job.log_dir, skipped):
        when = events.ts(ev.get("ts"))
        if since is not None and when is not None and when < since:
            # One run stamped long ago (a clock reset before NTP, or a line the job's
            # command wrote) is passed over: only a row of them says the rest is older.
            older += 1
            if older >= OLDER_IN_A_ROW:
                break
            continue
        older = 0
        name = ev.get("event")
        raw_id = ev.get("run_id")
        if name not in BEGINS and name != "finish":
            continue
        if not isinstance(raw_id, str) or (when is None and name != "finish"):
            if skipped is not None:
                skipped.n += 1
            continue
        run_id = shown(raw_id)
        if when is None or name == "finish":
            # Read backwards, the first finish seen is a run's last word (a wrapper killed
            # at the wrong instant can leave an earlier one too).
            finishes.setdefault(run_id, ev)
            continue
        run = _run(job.name, name, run_id, when, ev, finishes.pop(run_id, None), busy_exit)
        out.append(run)
        if limit is not None and len(out) >= limit:
            break
    return out


def _run(job: str, name: str, run_id: str, when: datetime, ev: dict[str, Any],
         fin: dict[str, Any] | None, busy_exit: int) -> Run:
    pid = _int(ev.get("pid"))
    host = field(ev.get("host"))
    base = Run(job, run_id, when, None, name, None, field(ev.get("item")),
               _int(ev.get("attempt")), ev.get("smoke") is True, pid, host,
               _int(ev.get("attempts")))
    if name == "busy":
        return base._replace(exit_code=busy_exit, duration=0)
    if name in ("empty", "skipped"):
        return base._replace(outcome=name, exit_code=0, duration=0)
    if name == "precondition":
        return base._replace(exit_code=_int(ev.get("exit_code")) or 78, duration=0)
    if fin is None:
        return base._replace(outcome="crashed" if dead_here(host, pid) else "running")
    return base._replace(outcome=field(fin.get("outcome")) or "failed",
                         exit_code=_int(fin.get("exit_code")), duration=_int(fin.get("duration")))


def last(job: Job, skip: frozenset[str] = frozenset({"busy"})) -> Run | None:
    """The newest run whose outcome is not in ``skip`` (a busy run says another is going)."""
    for run in _newest(job):
        if run.outcome not in skip:
            return run
    return None


def _newest(job: Job) -> Iterator[Run]:
    # Runs one at a time, reading no further back than needed.
    n = 8
    seen = 0
    while True:
        batch = runs(job, limit=n)
        yield from batch[seen:]
        if len(batch) < n:
            return
        seen, n = len(batch), n * 8


def _int(v: object) -> int | None:
    """An integer field; one no wrapper writes (a bool, or past 64 bits) is none."""
    return v if isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63 else None
    return False
