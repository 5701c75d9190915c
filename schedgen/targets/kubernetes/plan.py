"""The kubernetes target (docs/kubernetes.md); the work is in schedgen.targets.kubernetes.cronjobs."""

from __future__ import annotations

from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.targets.kubernetes.cronjobs import KIND, CronJobs

__all__ = ["KIND", "KubernetesTarget"]


class KubernetesTarget:
    name = "kubernetes"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "kubernetes" not in ctx.selected:
            return []
        if not ctx.artifacts(KIND) and not ctx.record.of_kind(KIND):
            return []  # no kubectl call where nothing of ours can be
        return CronJobs().plan(ctx, earlier)

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        CronJobs().apply(change, ctx)
