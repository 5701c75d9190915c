"""The crontab block: a line per schedule expression of each cron job."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from schedgen.config.model import Config, Job
from schedgen.render.artifacts import header, render_template
from schedgen.schedule.expressions import Cron, Every, every_as_cron


def cron_escape(text: str) -> str:
    """cron turns an unescaped % into a newline; escape every one."""
    return text.replace("%", "\\%")


def cron_command(job: Job) -> str:
    """What a crontab line runs for a job; status finds the job's lines by it."""
    return cron_escape(shlex.quote(_wrapper_text(job))) + " --cron"


def _wrapper_text(job: Job) -> str:
    """str(job.wrapper_path) without a Path made per job (per crontab line): the folder's
    text, a slash and the file's name, where pathlib would join them so too."""
    folder = str(job.wrapper_dir)
    if "/" in job.name or folder in (".", "") or folder.endswith("/"):
        return str(job.wrapper_path)  # pathlib's own joining: the root, ".", a bad name
    return f"{folder}/{job.name}.sh"


def cron_lines(job: Job) -> list[str]:
    # catch_up = "once": cron has no catch-up of its own, so the wrapper is also started
    # at boot, and its gate runs the latest missed firing once (docs/policies.md).
    boot = ["@reboot"] if job.catch_up == "once" and any(isinstance(e, Cron) for e in job.schedule) else []
    if job.timezone:
        from schedgen.render import tzrender

        return tzrender.host_cron_lines(job) + boot
    exprs = []
    for e in job.schedule:
        if isinstance(e, Every):
            exprs.append(every_as_cron(e.seconds) or "")
        else:
            exprs.append(e.text)
    return exprs + boot


_FILTERS: dict[str, Callable[..., str]] = {"cron_escape": cron_escape, "cron_command": cron_command}


def crond_file(config: Config, jobs: tuple[Job, ...]) -> str:
    """The namespace's whole file in the system cron folder: each line with its user."""
    return render_template(
        "crond.j2", _FILTERS, jobs=[(j, cron_lines(j)) for j in jobs], h=header(config))


def cron_block(config: Config, jobs: tuple[Job, ...]) -> str:
    return render_template(
        "crontab.j2", _FILTERS, jobs=[(j, cron_lines(j)) for j in jobs], h=header(config))
