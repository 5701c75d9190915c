"""`status` for target kubernetes: the CronJob's state in the cluster and the Jobs it made."""

from __future__ import annotations

from typing import Any

from schedgen.commands.status_types import JobStatus
from schedgen.plan import changes as p
from schedgen.targets.kubernetes import kubectl
from schedgen.targets.kubernetes import render as kube
from schedgen.targets.kubernetes.cronjobs import KIND

RUNS_SHOWN = 3


def with_cluster(jobs: tuple[JobStatus, ...], changes: list[p.Change],
                 namespace: str) -> tuple[JobStatus, ...]:
    changes = [c for c in changes if c.kind == KIND]
    runs = job_runs(changes, namespace)
    out = []
    for js in jobs:
        c = next((c for c in changes if c.job == js.job and c.after is not None), None)
        if c is None:
            out.append(js)
            continue
        info: dict[str, Any] = {"object": c.ref, "known": c.details is not None,
                                **(c.details or {}), "jobs": runs.get(js.job, [])[:RUNS_SHOWN]}
        info.pop("kubectl_diff", None)
        local = set(js.targets) - {"kubernetes"}
        if local:
            out.append(js._replace(facts={**js.facts, "kubernetes": info}))
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
        out.append(js._replace(facts={**js.facts, "kubernetes": info},
                                       lock_held=None, last_run=last, next_notes=notes))
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


def job_runs(changes: list[p.Change], namespace: str) -> dict[str, list[dict[str, Any]]]:
    """The Jobs each CronJob made, newest first, per schedgen job (for `status`)."""
    spaces = sorted({(c.ref or "/").split("/")[0] for c in changes
                     if c.kind == KIND and c.details is not None and c.details.get("exists")})
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
