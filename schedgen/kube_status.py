"""`status` for target kubernetes: the CronJob's state in the cluster and the Jobs it made."""

from __future__ import annotations

import dataclasses
from typing import Any

from schedgen import plan as p
from schedgen.status import JobStatus
from schedgen.targets.kubernetes import KIND, job_runs

RUNS_SHOWN = 3


def with_cluster(jobs: tuple[JobStatus, ...], plan: p.Plan, namespace: str) -> tuple[JobStatus, ...]:
    changes = [c for c in plan.changes if c.kind == KIND]
    runs = job_runs(changes, namespace)
    out = []
    for js in jobs:
        c = next((c for c in changes if c.job == js.job and c.after is not None), None)
        if c is None:
            out.append(js)
            continue
        info: dict[str, Any] = {"object": c.ref, "known": c.live is not None,
                                **(c.live or {}), "jobs": runs.get(js.job, [])[:RUNS_SHOWN]}
        info.pop("kubectl_diff", None)
        local = set(js.targets) - {"kubernetes"}
        # A job that only runs in the cluster has no local lock or run records to show.
        out.append(dataclasses.replace(js, kubernetes=info,
                                       lock_held=js.lock_held if local else None))
    return tuple(out)


def text_lines(k: dict[str, Any]) -> list[str]:
    if not k.get("known"):
        return [f"  kubernetes {k['object']}: cluster state unknown (kubectl could not reach it)"]
    if not k.get("exists"):
        return [f"  kubernetes {k['object']}: not in the cluster"]
    state = "suspended" if k.get("suspend") else "scheduled"
    active = f", {k['active']} running" if k.get("active") else ""
    zone = f" ({k['time_zone']})" if k.get("time_zone") else ""
    lines = [f"  kubernetes {k['object']}: {state}{active}, schedule {k.get('schedule')}{zone}",
             f"  k8s times  last scheduled {k.get('last_schedule') or 'never'}, "
             f"last succeeded {k.get('last_success') or 'never'}"]
    for r in k.get("jobs", []):
        why = f" ({r['reason']})" if r.get("reason") else ""
        when = r.get("finished_at") or r.get("started_at") or "not started"
        lines.append(f"  k8s job    {r['name']}: {r['outcome']}{why} at {when}")
    if k.get("other_managers"):
        lines.append(f"  k8s edits  changed in the cluster by {', '.join(k['other_managers'])}")
    return lines
