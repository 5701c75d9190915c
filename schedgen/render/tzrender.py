"""A zoned job's share of rendering: its host schedule and its gate.

The only place render.py reaches for time zones: each function takes the job and
returns what the job would have had without a zone, widened (tzwiden) or gated (tzgate).
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from schedgen.config.model import Job
from schedgen.render.tzgate import Gate, host_zone, render_window, settings, source
from schedgen.schedule.expressions import Cron
from schedgen.schedule.to_calendar import CalendarDict
from schedgen.schedule.tzwiden import Window, calendar, cron_lines

# Where the gate goes in the wrapper: after PATH and umask, before the lock and anything
# else that writes.
_ANCHOR = "\numask 077\n"


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


def gate_block(job: Job, window: Window | None = None) -> str:
    assert job.timezone
    gate = Gate.of(job.timezone, _crons(job), window or render_window())
    return (
        f"\n# Time zone {job.timezone}: cron/launchd fire at every host minute that can match\n"
        "# there; the gate lets only the zone's own firings through, and a fire that is not\n"
        "# one ends here, writing nothing.\n"
        + settings(gate, state_file(job)) + source()
        + "sg_tz_gate\ncase $? in\n  1) exit 0 ;;\n  2) exit 78 ;;\nesac\n"
    )


def gated(text: str, job: Job, window: Window | None = None) -> str:
    """The wrapper with the gate in place (the wrapper as is for a job without a zone)."""
    if not job.timezone:
        return text
    at = text.index(_ANCHOR) + len(_ANCHOR)
    return text[:at] + gate_block(job, window) + text[at:]



