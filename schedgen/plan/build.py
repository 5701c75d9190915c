"""The builder: ask every target what it would change, in install order."""

from __future__ import annotations

from collections.abc import Sequence

from schedgen.config.model import Config
from schedgen.machine.ownership import Record
from schedgen.plan import shared_logs
from schedgen.plan.changes import DELETE, Change, Plan
from schedgen.plan.context import PlanContext, Planner
from schedgen.targets import registry


def build(config: Config | None, record: Record, targets: Sequence[Planner], *,
          selected: tuple[str, ...] | None = None, prune: bool = False, force: bool = False,
          uninstall: bool = False, review: bool = False) -> Plan:
    """Ask every target for its changes. `config=None` with `uninstall`: remove all owned.
    `review` (diff, status): a target program that is missing leaves live state unknown."""
    ctx = PlanContext(config=config, record=record, prune=prune, force=force,
                      uninstall=uninstall, selected=selected or registry.names(), review=review)
    changes: list[Change] = []
    for target in targets:
        changes += target.plan(ctx, tuple(changes))
    # A job its scheduler leaves running keeps the job file it runs.
    running = {c.job: f"its {c.target} job is {c.deferred}" for c in changes
               if c.deferred and c.action == DELETE and c.target in registry.names()
               and registry.get(c.target).local}
    changes = [c._replace(deferred=running[c.job])
               if c.kind == "wrapper" and c.action == DELETE and c.job in running else c
               for c in changes]
    # ... and the runtime that wrapper sources.
    kept = {c.path.parent for c in changes if c.kind == "wrapper" and c.deferred and c.path}
    changes = [c._replace(deferred="a job file beside it is kept for a running job")
               if c.kind == "runtime" and c.action == DELETE and c.path
               and c.path.parent in kept else c for c in changes]
    changes = shared_logs.check(changes, ctx)
    return Plan(record.namespace, tuple(changes), tuple(ctx.warnings), tuple(ctx.unknown.items()))
