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
        if local:
            out.append(dataclasses.replace(js, kubernetes=info))
            continue
        # Only in the cluster: no local lock or run records; its last run is its last Job.
        newest = info["jobs"][0] if info["jobs"] else None
        last = ({"run_id": newest["name"], "outcome": newest["outcome"],
                 "started_at": newest["started_at"], "finished_at": newest["finished_at"]}
                if newest else None)
        notes = js.next_notes
        if not info.get("time_zone"):
            notes += ("in the cluster's time zone (kube-controller-manager's, often UTC), "
                      "not necessarily this machine's",)
        out.append(dataclasses.replace(js, kubernetes=info, lock_held=None, last_run=last,
                                       next_notes=notes))
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
