"""`status` for target kubernetes: the CronJob's state in the cluster and the Jobs it made."""

from __future__ import annotations

import dataclasses
from typing import Any

from schedgen.commands.status_types import JobStatus
from schedgen.plan import changes as p
from schedgen.render import kubernetes as kube
from schedgen.targets import kubectl
from schedgen.targets.kubernetes import KIND

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


def job_runs(changes: list[p.Change], namespace: str) -> dict[str, list[dict[str, Any]]]:
    """The Jobs each CronJob made, newest first, per schedgen job (for `status`)."""
    spaces = sorted({(c.ref or "/").split("/")[0] for c in changes
                     if c.kind == KIND and c.live is not None and c.live.get("exists")})
    out: dict[str, list[dict[str, Any]]] = {}
    for kns in spaces:
        try:
            items = kubectl.list_objects("jobs", kns, kube.selector(namespace))
        except kubectl.Unreachable:
            continue
        for item in items:
            meta, st = item.get("metadata", {}), item.get("status", {})
            job = (meta.get("labels") or {}).get(kube.JOB_LABEL)
            if not job:
                continue
            conds = {c.get("type"): c for c in st.get("conditions") or []
                     if c.get("status") == "True"}
            outcome = ("failed" if "Failed" in conds else "ok" if "Complete" in conds
                       else "running" if st.get("active") else "pending")
            out.setdefault(job, []).append({
                "name": meta.get("name"), "outcome": outcome,
                "reason": (conds.get("Failed") or {}).get("reason"),
                "started_at": st.get("startTime"), "finished_at": st.get("completionTime")
                or (conds.get("Failed") or {}).get("lastTransitionTime"),
            })
    for runs in out.values():
        runs.sort(key=lambda r: r.get("started_at") or "", reverse=True)
    return out
