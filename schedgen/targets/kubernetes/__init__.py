"""The kubernetes target: a CronJob per job in a cluster, applied with kubectl.

Its parts: fit (what a CronJob cannot do), render (the manifests), plan and cronjobs
(read, plan, apply), kubectl (the program), status (the cluster's view in `status`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from schedgen.targets.interface import Defaults, Refusal, Target
from schedgen.targets.kubernetes import fit

if TYPE_CHECKING:
    from schedgen.commands.status_types import JobStatus
    from schedgen.config.model import Config, Job
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact


class Kubernetes(Defaults):
    name = "kubernetes"
    kinds: tuple[str, ...] = ("cronjob",)
    local = False  # the job runs in a pod, from the manifest's command
    keeps_disabled = True  # a disabled CronJob stays, suspended
    facts = True

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        return fit.refusals(job, where)

    def config_refusals(self, namespace: str, jobs: Sequence[Job]) -> list[tuple[str, str]]:
        return fit.config_refusals(namespace, jobs)

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        from schedgen.render.artifacts import MARKER, Artifact
        from schedgen.targets.kubernetes.render import manifest

        return [Artifact("cronjob", j.name, f"kubernetes/{j.name}.yaml", None,
                         manifest(j, config, MARKER)) for j in jobs]

    def planner(self) -> Planner:
        from schedgen.targets.kubernetes.plan import KubernetesTarget

        return KubernetesTarget()

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        from schedgen.targets.kubernetes.status import with_cluster

        return with_cluster(jobs, changes, namespace)

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        from schedgen.targets.kubernetes.status import text_lines

        return text_lines(facts)

    def diff_text(self, c: Change) -> tuple[str, str] | None:
        if not (c.details and c.details.get("kubectl_diff")):
            return None
        return ("kubectl diff (the cluster's own view of this change):",
                c.details["kubectl_diff"])

    def change_json(self, c: Change) -> dict[str, Any]:
        return {"object": c.ref, "cluster": c.details, "deferred": c.deferred or None}


TARGET: Target = Kubernetes()  # the type checker holds it to the interface
