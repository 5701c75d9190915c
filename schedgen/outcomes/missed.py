"""Missed firings: times the schedule named, after the job was installed, with no run.

A firing is matched by the first unused run begin (start, busy, empty or precondition
event) from 30 s before it to GRACE after it (a zoned job's: up to the hour its wrapper
runs a late start in); each begin matches one firing. Unmatched
firings are missed, except on launchd, which runs one coalesced run on wake for the
firings it slept through: an unmatched firing whose next begin matched no firing of its
own was late, not missed. Only what the records can vouch for is judged: from the install
time (ownership record) or, when rotation dropped older events, the oldest event left.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime, timedelta, tzinfo
from typing import NamedTuple

from schedgen.config.model import Job
from schedgen.machine.ownership import Installed, Record
from schedgen.outcomes import events
from schedgen.outcomes.firings import epochs
from schedgen.outcomes.history import BEGINS
from schedgen.schedule.expressions import Cron, Every, every_as_cron, parse_cron
from schedgen.schedule.upcoming import local_zone
from schedgen.schedule.when import human
from schedgen.targets import registry

GRACE = timedelta(minutes=5)
EARLY = timedelta(seconds=30)  # clocks of cron and the wrapper may differ a little
LOOKBACK = timedelta(days=7)  # status and check judge the last week
_MAX = 20_000  # firings judged at most, newest kept (an every-minute job: two weeks)


class Firing(NamedTuple):
    at: datetime  # in the job's zone
    state: str  # "missed" or "late"
    ran_at: datetime | None  # the coalesced run, for "late"


class Missed(NamedTuple):
    since: datetime  # start of what was judged (UTC)
    firings: tuple[Firing, ...]  # unmatched firings, oldest first

    @property
    def missed(self) -> tuple[Firing, ...]:
        return tuple(f for f in self.firings if f.state == "missed")

    @property
    def late(self) -> tuple[Firing, ...]:
        return tuple(f for f in self.firings if f.state == "late")


def zone(job: Job) -> tzinfo:
    """The job's zone once jobs carry one, else the host's."""
    name = getattr(job, "timezone", None)
    if isinstance(name, str) and name:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    return local_zone()


class Installs:
    """Each job's entries in the ownership record, found once per record: looking each
    job up in the whole record made `status` quadratic in its jobs."""

    def __init__(self, record: Record) -> None:
        self.by_job: dict[str, list[Installed]] = {}
        for e in record.entries.values():
            for name in dict.fromkeys((*((e.job,) if e.job else ()), *e.jobs)):
                self.by_job.setdefault(name, []).append(e)

    def at(self, job: Job) -> datetime | None:
        """When the job's schedule was last installed: its crontab block or plist, else
        its wrapper."""
        kinds = {k for t in job.targets for k in registry.get(t).schedule_kinds}
        mine = self.by_job.get(job.name, [])
        entries = [e for e in mine if e.kind in kinds] or [e for e in mine if e.job == job.name]
        times = [t for e in entries if (t := events.ts(e.installed_at)) is not None]
        return max(times) if times else None


Made = dict[int, tuple[Record, Installs]]  # Installs by record (installs_of)


def installs_of(made: Made, record: Record) -> Installs:
    """The record's Installs, made once per record (a config's jobs can sit in two
    scopes' records) and kept in ``made``."""
    hit = made.get(id(record))
    if hit is None or hit[0] is not record:
        hit = made[id(record)] = (record, Installs(record))
    return hit[1]


def installed_at(job: Job, record: Record) -> datetime | None:
    """When the job's schedule was last installed: its crontab block or plist, else wrapper."""
    return Installs(record).at(job)


def expressions(job: Job) -> list[Cron]:
    """The calendar expressions the scheduler fires the job at (none for @reboot, or
    launchd's @every, which counts from load, not from the clock)."""
    out = []
    for e in job.schedule:
        if isinstance(e, Cron):
            out.append(e)
        elif isinstance(e, Every) and not _loads(job):
            as_cron = every_as_cron(e.seconds)
            if as_cron:
                out.append(parse_cron(as_cron))
    return out


def scheduled(job: Job, start: datetime, end: datetime) -> list[int]:
    """Firing times in (start, end] as Unix seconds; the newest _MAX of them."""
    found = epochs(expressions(job), zone(job), int(start.timestamp()), int(end.timestamp()))
    return found[-_MAX:]


def judge(firings: list[int], begins: list[int], launchd: bool, z: tzinfo,
          within: timedelta = GRACE) -> list[Firing]:
    """Unmatched firings, oldest first; both lists are Unix seconds, sorted."""
    early, grace = int(EARLY.total_seconds()), int(within.total_seconds())
    used = [False] * len(begins)
    unmatched: list[int] = []
    n = len(begins)
    for e in firings:
        i = bisect.bisect_left(begins, e - early)
        while i < n and begins[i] <= e + grace and used[i]:
            i += 1
        if i < n and begins[i] <= e + grace:
            used[i] = True
        else:
            unmatched.append(e)
    out = []
    for e in unmatched:
        f = datetime.fromtimestamp(e, z)
        i = bisect.bisect_right(begins, e + grace)
        if launchd and i < n and not used[i]:
            out.append(Firing(f, "late", datetime.fromtimestamp(begins[i], UTC)))
        else:
            out.append(Firing(f, "missed", None))
    return out


def missed(job: Job, record: Record, now: datetime, since: datetime | None = None,
           installs: Installs | None = None) -> Missed | None:
    """Judge the firings from ``since`` (default: LOOKBACK) up to GRACE (a zoned job's:
    its max_lateness, up to which its wrapper runs a late start) ago. ``installs``: the
    record's, built once by a caller that judges many jobs. None when there is nothing
    to judge (not installed, disabled, no calendar)."""
    if not job.enabled or not expressions(job):
        return None
    start = (installs or Installs(record)).at(job)
    if start is None:
        return None
    window = since if since is not None else now - LOOKBACK
    start = max(start, window)
    # A start delay makes every start late by up to it; a gated job (zoned, or catching
    # up) runs a start up to max_lateness late for its firing.
    grace = GRACE + timedelta(seconds=job.random_delay)
    if job.timezone or job.catch_up == "once":
        grace = max(grace, timedelta(seconds=job.max_lateness))
    end = now - grace
    if start >= end:
        return Missed(start, ())
    begins: list[int] = []
    cutoff = int((start - grace).timestamp())
    exhausted = True
    newer_pid = None
    for ts, _, pid in events.stamps_back(job.log_dir, BEGINS):
        t = events.epoch(ts)
        if t is None:
            continue  # no time a wrapper writes: it ends nothing, it starts nothing
        if t < cutoff:
            exhausted = False
            break
        if pid and pid == newer_pid and begins:
            # The same wrapper's next queue item, not a firing of its own: keep its first.
            begins[-1] = t
        else:
            begins.append(t)
        newer_pid = pid
    oldest = datetime.fromtimestamp(min(begins), UTC) if begins else None
    dropped = job.logs.keep == 0 or (job.log_dir / f"events.jsonl.{job.logs.keep}").exists()
    if exhausted and oldest is not None and dropped:
        # Rotation may have dropped what came before the oldest event left: judge from there.
        start = max(start, oldest)
    begins.sort()
    firings = scheduled(job, start, end)
    return Missed(start, tuple(judge(firings, begins, _loads(job), zone(job), grace)))


def _loads(job: Job) -> bool:
    """Does a scheduler of the job load it (@every from load, a missed firing at wake)?"""
    return any(registry.get(t).on_load for t in job.targets)


def _local(t: datetime) -> str:
    return human(t, t.tzinfo)


def missed_text(m: Missed) -> str:
    """`missed 3 firings since 2026-01-05 10:40; first 2026-01-05 16:40` (+ late ones)."""
    parts = []
    gone, late = m.missed, m.late
    if gone:
        n = len(gone)
        parts.append(f"missed {n} firing{'s' if n != 1 else ''} since "
                     f"{_local(m.since.astimezone(gone[0].at.tzinfo))}; first {_local(gone[0].at)}"
                     + (f", last {_local(gone[-1].at)}" if n > 1 else ""))
    if late:
        n = len(late)
        ran = late[-1].ran_at
        parts.append(f"{n} firing{'s' if n != 1 else ''} ran late (coalesced on wake"
                     + (f", ran {_local(ran.astimezone(late[-1].at.tzinfo))}" if ran else "") + ")")
    return "; ".join(parts) or "none"


def missed_json(m: Missed | None) -> dict[str, object] | None:
    if m is None:
        return None
    return {"since": m.since.strftime("%Y-%m-%dT%H:%M:%SZ"), "count": len(m.missed),
            "late": len(m.late),
            "firings": [{"at": f.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "state": f.state,
                         "ran_at": f.ran_at.strftime("%Y-%m-%dT%H:%M:%SZ") if f.ran_at else None}
                        for f in m.firings]}
