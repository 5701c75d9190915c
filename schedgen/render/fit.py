"""Can a job go to a target? `render --target T` renders T for every job, so it asks."""

from __future__ import annotations

from schedgen.config.kubernetes import unfit  # validate's own rule: the two never disagree
from schedgen.config.model import Config, Job
from schedgen.schedule.expressions import Cron, Every, every_cron_problem
from schedgen.schedule.to_calendar import NotExpressible, union_dicts


def why_not(job: Job, target: str) -> str | None:
    """None if the job's schedule can be rendered for `target`, else why not."""
    if not job.enabled and target != "kubernetes":  # a disabled CronJob stays, suspended
        return "disabled (enabled = false)"
    if target == "launchd":
        try:
            union_dicts([e for e in job.schedule if isinstance(e, Cron)],
                        widen=job.timezone is not None)
        except NotExpressible as exc:
            return f"launchd: {exc}"
    if target == "cron":
        for e in job.schedule:
            problem = every_cron_problem(e.seconds) if isinstance(e, Every) else None
            if problem:
                return f"cron: {problem}"
    if target == "kubernetes":
        if job.kubernetes is None:
            return "kubernetes: no [kubernetes] table (image) for this job"
        problems = unfit(job)
        if problems:
            return "kubernetes: " + problems[0][1].removeprefix("target kubernetes: ")
    return None


def for_targets(config: Config, targets: tuple[str, ...]) -> tuple[Config, list[str]]:
    """The config with every job sent to exactly `targets` where it can go, and why
    the others cannot (one line each, naming the job and target)."""
    jobs, why = [], []
    for job in config.jobs:
        fits = []
        for t in targets:
            reason = why_not(job, t)
            if reason is None:
                fits.append(t)
            else:
                why.append(f"jobs.{job.name}: not rendered for {t}: {reason}")
        if fits:
            jobs.append(job._replace(targets=tuple(fits)))
    return config._replace(jobs=tuple(jobs)), why
