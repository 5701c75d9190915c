"""The kubernetes target (DESIGN.md §10); the work is in schedgen.targets.cronjobs.

Kept thin: every diff, apply and status asks each target for its changes, and most
configs have no CronJob, so they never import (or pay for) the rest.
"""

from __future__ import annotations

from schedgen import plan as p
from schedgen.targets.base import ApplyContext, PlanContext

KIND = "cronjob"


class KubernetesTarget:
    name = "kubernetes"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "kubernetes" not in ctx.selected:
            return []
        if not ctx.artifacts(KIND) and not ctx.record.of_kind(KIND):
            return []  # no kubectl call where nothing of ours can be
        from schedgen.targets.cronjobs import CronJobs

        return CronJobs().plan(ctx, earlier)

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        from schedgen.targets.cronjobs import CronJobs

        CronJobs().apply(change, ctx)
