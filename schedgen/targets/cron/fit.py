"""What cron takes of a job: rates a step expression can fire at, and a job file path
a crontab line can name."""

from __future__ import annotations

from schedgen.config.model import Job
from schedgen.schedule.expressions import Every, every_cron_problem
from schedgen.targets.interface import Refusal


def refusals(job: Job, w: str) -> list[Refusal]:
    problems = [every_cron_problem(e.seconds) for e in job.schedule or () if isinstance(e, Every)]
    out = [Refusal(f"{w}.schedule", f"target cron: {problem}") for problem in problems if problem]
    # (the folder's text and the name's: a "/" stands between them in the path)
    if job.wrapper_dir is not None and ("\\%" in str(job.wrapper_dir) or "\\%" in job.name):
        # cron takes a backslash before % as escaping it, so the %-escaped line would name
        # another path (and end at that %); refused rather than quoted around, as rare.
        out.append(Refusal(f"{w}.wrapper_dir", "a backslash right before a % cannot be written in a "
                                          "crontab line (cron reads \\% as %); rename the folder"))
    return out
