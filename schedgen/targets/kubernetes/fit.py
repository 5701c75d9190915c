"""What a CronJob takes of a job: the [kubernetes] table, one schedule cron can say,
and nothing that needs this machine (a queue, an env file, a waiting lock)."""

from __future__ import annotations

from collections.abc import Sequence

from schedgen.config import kubernetes as kube_config
from schedgen.config.model import Job
from schedgen.targets.interface import Refusal


def refusals(job: Job, w: str) -> list[Refusal]:
    out = []
    if job.scope != "user":  # the CronJob runs in the cluster: no machine, no account here
        out.append(Refusal(f"{w}.scope", 'target kubernetes: scope = "system" has no meaning '
                                         "for a CronJob (it runs in the cluster, as its pod's "
                                         "user); give this job its own targets without "
                                         "kubernetes, or leave scope out"))
    if job.kubernetes is None:
        out.append(Refusal(f"{w}.kubernetes", "missing (required for target kubernetes): "
                                              f"add [{w}.kubernetes] with at least image = \"...\""))
    out += [Refusal(f"{w}{field}", message) for field, message in kube_config.unfit(job)]
    if job.random_delay:
        out.append(Refusal(f"{w}.random_delay", "a CronJob has no start delay (its pod runs the "
                                                "command, not the wrapper): drop it or the target"))
    if job.max_lateness < 10:
        out.append(Refusal(f"{w}.max_lateness", "the CronJob controller looks every 10 s: a "
                                                "startingDeadlineSeconds under 10 may never start it"))
    # The CronJob is fine without what no wrapper would send: said, not skipped.
    return out + [Refusal(f"{w}{field}", message, renders=True)
                  for field, message in kube_config.unsent(job)]


class _Found:
    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def add(self, where: str, message: str) -> None:
        self.found.append((where, message))


def config_refusals(namespace: str, jobs: Sequence[Job]) -> list[tuple[str, str]]:
    found = _Found()
    kube_config.check_config(found, namespace, list(jobs),
                             {j.name for j in jobs if "kubernetes" in j.targets})
    return found.found
