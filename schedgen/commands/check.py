"""`schedgen check`: health for monitoring, one line per problem.

Problems: drift, a failed last run, missed firings, starts of a zoned job dropped as too
late for their firing, items in failed/, the oldest inbox item older than stale_after, a
lock held past the job's timeout. `--notify` sends each
new problem once through the job's notify command (alerts.py remembers what went out).
"""

from __future__ import annotations

import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.commands import status
from schedgen.commands.status_types import JobStatus
from schedgen.config.model import Job
from schedgen.config.select import load_here
from schedgen.errors import EXIT_CHANGES, EXIT_OK, EXIT_UNKNOWN
from schedgen.outcomes import events, history
from schedgen.outcomes.missed import LOOKBACK, missed_text
from schedgen.records.shown import shown
from schedgen.schedule.upcoming import local_zone
from schedgen.schedule.when import human
from schedgen.units import format_duration

KILL_GRACE = 10  # the wrapper sends KILL 5 s after TERM; then the lock is free
DROPPED_SCAN = 5000  # events read back at most for dropped late starts


class Problem(NamedTuple):
    job: str | None
    kind: str  # drift, failed, missed, dropped, failed-items, stale-inbox, lock-held
    key: str  # the same problem keeps its key from one check to the next
    text: str
    crashed: bool = False  # a failed run that could not tell anyone itself

    def as_json(self) -> dict[str, Any]:
        return {"job": self.job, "kind": self.kind, "key": self.key, "text": self.text}


class Health(NamedTuple):
    namespace: str
    jobs: tuple[Job, ...]
    problems: tuple[Problem, ...]
    # (target, why): a scheduler that could not be read; no drift is claimed for it
    unknown: tuple[tuple[str, str], ...] = ()
    # (job, "paused until ..."): no problem, said so that a quiet job is not a mystery
    paused: tuple[tuple[str, str], ...] = ()

    @property
    def exit_code(self) -> int:
        """1 for problems seen, else 4 when a scheduler's state is unknown, else 0."""
        return EXIT_CHANGES if self.problems else EXIT_UNKNOWN if self.unknown else EXIT_OK


def check(config_path: Path, targets: tuple[str, ...] | None = None,
          now: datetime | None = None) -> Health:

    config = load_here(config_path)
    now = now or datetime.now(UTC)
    st = status.status(config_path, targets, now=now.astimezone(local_zone()))
    problems: list[Problem] = [Problem(None, "drift", f"drift:{o}", f"drift: {o}")
                               for o in st.other]
    by_name = {j.name: j for j in config.jobs}
    for js in st.jobs:
        job = by_name[js.job]
        problems += _job(job, js, now)
    paused = tuple((js.job, js.paused.text()) for js in st.jobs if js.paused is not None)
    return Health(config.namespace, config.jobs, tuple(problems), st.unknown, paused)


def _when(t: datetime) -> str:
    return human(t)


def _job(job: Job, js: JobStatus, now: datetime) -> list[Problem]:
    n = job.name
    out = [Problem(n, "drift", f"{n}:drift:{d}", f"{n}: drift: {d}") for d in js.drift]
    if not job.enabled:
        return out
    last = history.last(job)
    if last is not None and last.outcome in history.FAILED:
        code = f" (exit {last.exit_code})" if last.exit_code is not None else ""
        out.append(Problem(n, "failed", f"{n}:failed:{last.run_id}",
                           f"{n}: last run {last.run_id} {last.outcome}{code} at "
                           f"{_when(last.started)}", crashed=last.outcome == "crashed"))
    if js.missed and js.missed.missed:
        first = js.missed.missed[0]
        out.append(Problem(n, "missed", f"{n}:missed:{first.at.isoformat()}",
                           f"{n}: {missed_text(js.missed)}"))
    if job.timezone:
        out += _dropped(job, now)
    q = job.queue
    if q is not None:
        failed = _files(q.failed, "*")
        if failed:
            k = len(failed)
            newest = max(failed, key=lambda x: (x[1], x[0]))[0]
            out.append(Problem(n, "failed-items", f"{n}:failed-items:{newest}",
                               f"{n}: {k} item{'s' if k != 1 else ''} in {q.failed} "
                               f"(newest {newest})"))
        inbox = _files(q.inbox, q.pattern)
        if inbox:
            name, mtime = min(inbox, key=lambda x: (x[1], x[0]))
            age = int(now.timestamp() - mtime)
            if age > q.stale_after:
                out.append(Problem(n, "stale-inbox", f"{n}:stale-inbox:{name}",
                                   f"{n}: oldest inbox item {name} has waited "
                                   f"{format_duration(age)} (stale_after "
                                   f"{format_duration(q.stale_after)}; {len(inbox)} waiting)"))
    if job.timeout and js.lock_held and job.lock is not None:
        running = next((r for r in history.runs(job, limit=8) if r.outcome == "running"), None)
        if running is not None:
            age = int(now.timestamp() - running.started.timestamp())
            if age > job.timeout + KILL_GRACE:
                out.append(Problem(n, "lock-held", f"{n}:lock-held:{running.run_id}",
                                   f"{n}: lock {job.lock.name} held by run {running.run_id} "
                                   f"for {format_duration(age)} (timeout "
                                   f"{format_duration(job.timeout)})"))
    return out


def _dropped(job: Job, now: datetime) -> list[Problem]:
    """Starts of the last week that came too late for their firing (the wrapper's "late"
    events): one problem, keyed by the newest firing."""
    n, since = job.name, now.timestamp() - LOOKBACK.total_seconds()
    found: list[dict[str, Any]] = []
    for i, ev in enumerate(events.back(job.log_dir)):
        t = events.epoch(ev["ts"]) if isinstance(ev.get("ts"), str) else None
        if i >= DROPPED_SCAN or (t is not None and t < since):
            break
        if ev.get("event") == "late" and ev.get("outcome") == "dropped":
            found.append(ev)
    if not found:
        return []
    ev = found[0]
    firing, zone = ev.get("firing"), ev.get("zone")
    late, bound = ev.get("late"), ev.get("max_lateness")
    if not (isinstance(firing, str) and isinstance(zone, str) and isinstance(late, int)
            and isinstance(bound, int) and len(firing) == 16 and firing.isascii()
            and firing.replace("-", "").replace(":", "").replace("T", "").isdigit()
            and zone.isprintable() and len(zone) < 64):
        return [Problem(n, "dropped", f"{n}:dropped:{ev.get('ts')!s:.40}",
                        f"{n}: a start was dropped as too late for its firing")]
    k = len(found)
    more = f" ({k} in the last week)" if k > 1 else ""
    return [Problem(n, "dropped", f"{n}:dropped:{firing}",
                    f"{n}: firing {firing.replace('T', ' ')} {zone} not run: started "
                    f"{format_duration(late)} late (max lateness {format_duration(bound)}){more}")]


def _files(folder: Path, pattern: str) -> list[tuple[str, float]]:
    """(name shown safely, mtime) of each item: the names are whatever the items were
    called (not UTF-8, a newline, terminal escapes), and one problem stays one line."""
    out = []
    try:
        for f in folder.glob(pattern):
            if f.name.startswith("."):
                continue
            try:
                st = f.stat()
            except OSError:
                continue  # taken while listed
            if stat.S_ISREG(st.st_mode):
                out.append((shown(f.name), st.st_mtime))
    except OSError:
        pass
    return out


def as_text(h: Health) -> str:
    unknown = [f"unknown: {w}" for _, w in h.unknown]
    unknown += [f"note: {job}: {words}; its firings are skipped, not missed" for job, words in h.paused]
    if not h.problems:
        n = len(h.jobs)
        jobs = f"{n} job{'s' if n != 1 else ''}"
        if unknown:
            return "\n".join([f"namespace {h.namespace}: state unknown ({jobs}; no problem "
                              "seen where it could be read)", *unknown])
        return f"namespace {h.namespace}: healthy ({jobs})"
    return "\n".join([*(shown(p.text) for p in h.problems), *unknown])


def as_json(h: Health, notified: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"namespace": h.namespace,
                         "healthy": not h.problems and not h.unknown,
                         "unknown": [{"target": t, "text": w} for t, w in h.unknown],
                         "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "problems": [p.as_json() for p in h.problems],
                         "paused": [{"job": j, "text": w} for j, w in h.paused]}
    if notified is not None:
        d["notified"] = notified
    return d


