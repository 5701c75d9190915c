"""A zoned job's share of rendering: its host schedule and its gate.

The only place render.py reaches for time zones: each function takes the job and
returns what the job would have had without a zone, widened (tzwiden) or gated (tzgate).
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from schedgen.config.model import Job
from schedgen.render.tzgate import HOST, Gate, host_zone, render_window, settings
from schedgen.schedule.expressions import Cron
from schedgen.schedule.to_calendar import CalendarDict
from schedgen.schedule.tzwiden import Window, calendar, cron_lines


def _crons(job: Job) -> list[Cron]:
    return [e for e in job.schedule if isinstance(e, Cron)]


def host_cron_lines(job: Job, window: Window | None = None) -> list[str]:
    assert job.timezone
    return cron_lines(_crons(job), ZoneInfo(job.timezone), host_zone(), window or render_window())


def host_calendar(job: Job, window: Window | None = None) -> list[CalendarDict]:
    assert job.timezone
    return calendar(_crons(job), ZoneInfo(job.timezone), host_zone(), window or render_window())


def state_file(job: Job) -> str:
    # In the job's own log folder: the lock folder of a job without a lock is never
    # checked, and a link planted there would be written through.
    return str(job.log_dir / ".tzgate")


# A start within this of its firing (plus the job's start delay) is on time, as `check`
# counts it (outcomes/missed.py GRACE); a later one a catch-up.
ON_TIME = 300


def gated(job: Job) -> bool:
    """Does the job's wrapper run the gate: a zoned job, or one that catches up (the gate
    decides which firing a start at boot, load or wake is for, and runs it once)."""
    return bool(job.timezone) or (job.catch_up == "once" and bool(_crons(job)))


def gate_settings(job: Job, window: Window | None = None) -> str:
    """The gate's settings, for the job file (the gate is the runtime's: 81-tzgate.sh).
    A job without a zone is gated on the host's clock: at every start when it catches up,
    else (a superset scheduler's job) only on the fires that pass GATE_ARG."""
    catch = job.random_delay + ON_TIME if job.catch_up == "once" else None
    gate = Gate.of(job.timezone or HOST, _crons(job), window or render_window(),
                   job.max_lateness, catch)
    return settings(gate, state_file(job), on_arg=not job.timezone and catch is None)
