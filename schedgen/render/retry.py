"""A job's retry settings as the runtime reads them: each delay in whole seconds (the
backoff worked out here, so the runtime needs no fractions) and the window retries must
start in (no retry starts once the next firing may be due)."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

from schedgen.config.defaults import RETRY_DELAY_CAP
from schedgen.config.model import Job
from schedgen.schedule.expressions import MACROS, Cron, Entry, Every

# The window is looked for from a fixed day, so that it is the same at every apply: up to
# this many firings or days, whichever ends first.
_FROM = datetime(2030, 1, 1)
_MAX_FIRINGS = 2000
_MAX_DAYS = 400
DST_STEP = 3600  # the most a DST change moves a wall-clock firing (seconds)


def delays(job: Job) -> list[int]:
    """The wait before each retry: retry_delay, times backoff each time, at most the cap."""
    out, d = [], float(job.retry_delay)
    for _ in range(job.retries):
        out.append(min(RETRY_DELAY_CAP, round(d)))
        d = min(d * job.backoff, RETRY_DELAY_CAP)
    return out


@cache
def window(entries: tuple[Entry, ...]) -> int:
    """Seconds from a firing within which retries may start: the shortest interval
    between two firings on the wall clock, less an hour when longer than that (a DST
    change brings a fixed time up to an hour nearer to the one before; intervals of an
    hour or less are of wildcard hours, which it does not shorten). 0: no next firing
    to run into (@reboot alone)."""
    from cronsim import CronSim

    gaps: list[int] = []
    for e in entries:
        if isinstance(e, Every):
            gaps.append(e.seconds)
    times: set[datetime] = set()
    end = _FROM + timedelta(days=_MAX_DAYS)
    for e in entries:
        if isinstance(e, Cron):
            for n, t in enumerate(CronSim(MACROS.get(e.text.lower(), e.text), _FROM)):
                if n >= _MAX_FIRINGS or t > end:
                    break
                times.add(t)
    ordered = sorted(times)
    gaps += [int((b - a).total_seconds()) for a, b in zip(ordered, ordered[1:], strict=False)]
    if not gaps:
        return 0
    g = min(gaps)
    return g - DST_STEP if g > DST_STEP else g


def settings(job: Job) -> str:
    """The job file's lines (none for a job without retries, or a queue's)."""
    if not job.retries or job.queue is not None:
        return ""
    return (f"sg_retries={job.retries} sg_retry_delays='{' '.join(map(str, delays(job)))}' "
            f"sg_retry_window={window(job.schedule)}")
