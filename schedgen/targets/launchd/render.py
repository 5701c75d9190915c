"""The plist of a job: its calendar, interval and load-time run for launchd."""

from __future__ import annotations

import re

from schedgen.config.model import Config, Job
from schedgen.render.artifacts import _env, header
from schedgen.schedule.expressions import Cron, Every, Reboot
from schedgen.schedule.to_calendar import union_dicts


def xml_comment(text: object) -> str:
    """Text safe inside <!-- -->: XML forbids "--" there, and a comment ending in "-"."""
    out = re.sub("-(?=-)", "- ", str(text))
    return out + " " if out.endswith("-") else out


def plist(job: Job, config: Config) -> str:
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    every = next((e.seconds for e in job.schedule if isinstance(e, Every)), None)
    reboot = any(isinstance(e, Reboot) for e in job.schedule)
    calendar = union_dicts(crons) if crons else None
    if crons and job.timezone:
        from schedgen.render import tzrender

        calendar = tzrender.host_calendar(job)
    env = _env()
    env.filters.setdefault("xml_comment", xml_comment)
    return env.get_template("launchd.plist.j2").render(
        job=job, h=header(config), calendar=calendar,
        interval=every, run_at_load=job.run_at_load or reboot,
    )
