"""What cron takes of a job: rates a step expression can fire at, and a job file path
a crontab line can name."""

from __future__ import annotations

from schedgen.config.model import Job
from schedgen.schedule.expressions import Every, every_as_cron
from schedgen.targets.interface import Refusal


def refusals(job: Job, w: str) -> list[Refusal]:
    out = [Refusal(f"{w}.schedule", f"target cron: {e.text!r} does not divide an hour or a day "
                               "evenly, so no cron step expression fires at that rate")
           for e in job.schedule or () if isinstance(e, Every) and every_as_cron(e.seconds) is None]
    if job.wrapper_dir is not None and "\\%" in str(job.wrapper_path):
        # cron takes a backslash before % as escaping it, so the %-escaped line would name
        # another path (and end at that %); refused rather than quoted around, as rare.
        out.append(Refusal(f"{w}.wrapper_dir", "a backslash right before a % cannot be written in a "
                                          "crontab line (cron reads \\% as %); rename the folder"))
    return out
