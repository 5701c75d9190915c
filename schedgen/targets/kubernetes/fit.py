"""What a CronJob takes of a job: the [kubernetes] table, one schedule cron can say,
and nothing that needs this machine (a queue, an env file, a waiting lock)."""

from __future__ import annotations

from collections.abc import Sequence

from schedgen.config import kubernetes as kube_config
from schedgen.config.model import Job
from schedgen.targets.interface import Refusal


class _Found:
    def __init__(self) -> None:
        self.found: list[Refusal] = []

    def add(self, where: str, message: str) -> None:
        self.found.append(Refusal(where, message))


def refusals(job: Job, w: str) -> list[Refusal]:
    found = _Found()
    if job.kubernetes is None:
        found.add(f"{w}.kubernetes", "missing (required for target kubernetes): "
                                     f"add [{w}.kubernetes] with at least image = \"...\"")
    kube_config.check_job(found, w, job)
    return found.found


def config_refusals(namespace: str, jobs: Sequence[Job]) -> list[tuple[str, str]]:
    found = _Found()
    kube_config.check_config(found, namespace, list(jobs),
                             {j.name for j in jobs if "kubernetes" in j.targets})
    return [(r.where, r.message) for r in found.found]
