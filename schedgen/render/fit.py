"""Can a job go to a target? `render --target T` renders T for every job, so it asks the
target the same question `validate` does (one check: they cannot disagree)."""

from __future__ import annotations

from schedgen.config.model import Config, Job
from schedgen.targets import registry


def why_not(job: Job, target: str) -> str | None:
    """None if the job can be rendered for `target`, else why not."""
    t = registry.get(target)
    if not job.enabled and not t.keeps_disabled:
        return "disabled (enabled = false)"
    for r in (r for r in t.refusals(job, f"jobs.{job.name}") if not r.renders):
        own = f"target {target}: "
        return f"{target}: " + (r.message[len(own):] if r.message.startswith(own) else r.message)
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
