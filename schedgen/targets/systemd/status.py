"""How `status` shows a job's systemd units: the timer's state, and a run in progress."""

from __future__ import annotations

from typing import Any

from schedgen.commands.status_types import JobStatus
from schedgen.plan import changes as p
from schedgen.targets.base import service


def systemd_part(part: dict[str, Any] | None, c: p.Change) -> dict[str, Any]:
    """Fold one unit's change into the job's systemd view (timer state, service PID)."""
    s = service(c)
    out = dict(part or {"timer": None, "known": s.loaded is not None})
    u = s.state or {}
    if c.kind == "timer":
        out.update(timer=s.label, active=u.get("active"), sub=u.get("sub"),
                   enabled=u.get("enabled"), next_elapse=u.get("next_elapse"),
                   last_trigger=u.get("last_trigger"), result=u.get("result"))
    else:
        out.update(service=s.label, pid=s.pid, last_exit=s.last_exit)
    return out


def with_facts(jobs: tuple[JobStatus, ...], changes: list[p.Change]) -> tuple[JobStatus, ...]:
    by_job: dict[str, dict[str, Any]] = {}
    for c in changes:  # the service before the timer, as the plan has them
        if c.job and c.kind in ("service", "timer"):  # not the user's own timer it adopts
            by_job[c.job] = systemd_part(by_job.get(c.job), c)
    return tuple(js._replace(facts={**js.facts, "systemd": by_job[js.job]})
                 if js.job in by_job else js for js in jobs)

