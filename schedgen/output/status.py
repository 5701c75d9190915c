"""How `status` reads: a block per job for people, one object for --json."""

from __future__ import annotations

from typing import Any

from schedgen.commands.status_types import Status
from schedgen.outcomes.missed import missed_json, missed_text
from schedgen.targets.systemd_status import systemd_lines


def as_json(s: Status) -> dict[str, Any]:
    return {
        "namespace": s.namespace, "drift": s.drifted, "other": list(s.other),
        "jobs": [{
            "job": j.job, "enabled": j.enabled, "targets": list(j.targets),
            "schedule": j.schedule, "readable": j.readable, "installed": j.installed,
            "drift": list(j.drift), "launchd": j.launchd, "last_run": j.last_run,
            "next_run": j.next_run, "next_notes": list(j.next_notes),
            "queue": j.queue.__dict__ if j.queue else None, "lock_held": j.lock_held,
            "systemd": j.systemd,
            "kubernetes": j.kubernetes,
            "missed": missed_json(j.missed),
        } for j in s.jobs],
        "warnings": list(s.warnings),
    }


def as_text(s: Status) -> str:
    lines = [f"namespace {s.namespace}: {'DRIFT' if s.drifted else 'in sync'}"]
    for j in s.jobs:
        state_ = ("disabled" if not j.enabled else "installed" if j.installed else "not installed")
        lines.append(f"{j.job}  [{', '.join(j.targets)}]  {state_}")
        lines.append(f"  schedule   {j.schedule}  ({j.readable})")
        if j.launchd:
            ld = j.launchd
            running = (f"running, PID {ld['pid']}" if ld["pid"] else
                       "running unknown" if ld["loaded"] is None else "not running")
            loaded = ("loaded state unknown (no launchctl here)" if ld["loaded"] is None
                      else "loaded" if ld["loaded"] else "not loaded")
            last = f", last exit {ld['last_exit']}" if ld["last_exit"] is not None else ""
            lines.append(f"  launchd    {ld['label']}: {loaded}, {running}{last}")
        if j.systemd:
            lines += systemd_lines(j.systemd)
        if j.kubernetes:
            lines += kubernetes_lines(j.kubernetes)
        lr = j.last_run
        if lr:
            when = lr.get("finished_at") or lr.get("started_at") or "?"
            code = f", exit {lr['exit_code']}" if lr.get("exit_code") is not None else ""
            outcome = lr.get("outcome", "?")
            lines.append(f"  last run   {lr.get('run_id')}: {outcome}{code} at {when}")
        else:
            lines.append("  last run   never")
        nxt = j.next_run or "no calendar time"
        lines.append(f"  next run   {nxt}" + "".join(f"; {n}" for n in j.next_notes))
        if j.queue:
            q = j.queue
            lines.append(f"  queue      {q.inbox} waiting, {q.processing} processing, "
                         f"{q.failed} failed")
        if j.lock_held is not None:
            lines.append(f"  lock       {'held (a run is active)' if j.lock_held else 'free'}")
        if j.missed and j.missed.firings:
            lines.append(f"  firings    {missed_text(j.missed)}")
        for d in j.drift:
            lines.append(f"  drift      {d}")
    lines += [f"drift: {o}" for o in s.other]
    lines += [f"warning: {w}" for w in s.warnings]
    return "\n".join(lines)


def kubernetes_lines(k: dict[str, Any]) -> list[str]:
    """A CronJob's part of a job's status (here, not beside the cluster code: a cron-only
    status loads none of that)."""
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
