"""The plist of a job: its calendar, interval and load-time run for launchd."""

from __future__ import annotations

import re

from schedgen.config.model import Config, Job
from schedgen.render.artifacts import header, render_template
from schedgen.schedule.expressions import Cron, Every, Reboot
from schedgen.schedule.to_calendar import needs_gate, union_dicts


def xml_comment(text: object) -> str:
    """Text safe inside <!-- -->: XML forbids "--" there, and a comment ending in "-"."""
    out = re.sub("-(?=-)", "- ", str(text))
    return out + " " if out.endswith("-") else out


LAUNCHD_THROTTLE = 10  # launchd's default ThrottleInterval, seconds


def gated(job: Job) -> bool:
    """A job without a zone whose dicts fire a superset of its schedule (no dicts say its
    days exactly on every launchd): the plist passes --gate, and the job file's gate
    runs only the fires that are firings, on the host's clock (docs/launchd.md)."""
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    return not job.timezone and bool(crons) and needs_gate(crons)


def _gate_arg(job: Job) -> str:
    if not gated(job):
        return ""
    from schedgen.render.tzgate import GATE_ARG

    return GATE_ARG


def plist(job: Job, config: Config) -> str:
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    every = next((e.seconds for e in job.schedule if isinstance(e, Every)), None)
    reboot = any(isinstance(e, Reboot) for e in job.schedule)
    calendar = union_dicts(crons, widen=True) if crons and not job.timezone else None
    if every is not None and every < LAUNCHD_THROTTLE and job.throttle_interval is None:
        # launchd starts a job at most every ThrottleInterval (10 s unless set): an
        # @every below that needs it set to the interval, or it runs every 10 s.
        job = job._replace(throttle_interval=every)
    if crons and job.timezone:
        from schedgen.render import tzrender

        calendar = tzrender.host_calendar(job)
    return render_template(
        "launchd.plist.j2", {"xml_comment": xml_comment},
        job=job, h=header(config), calendar=calendar, gate=_gate_arg(job),
        # catch_up = "once": launchd runs a missed firing after a wake, not after a boot;
        # RunAtLoad starts the wrapper at load, and its gate runs the latest missed firing
        # (with --gate too: a job that catches up is gated at every start).
        interval=every, run_at_load=job.run_at_load or reboot or (job.catch_up == "once" and bool(crons)),
    )
