"""`status` for target launchd: the job as launchctl lists it, and whether launchd
refused it (the last bootstrap's error, remembered by apply) or has it disabled."""

from __future__ import annotations

from schedgen.commands.status_types import JobStatus
from schedgen.plan import changes as p
from schedgen.targets.base import service


def with_facts(jobs: tuple[JobStatus, ...], changes: list[p.Change]) -> tuple[JobStatus, ...]:
    from schedgen.targets.launchd import memory

    plists = {c.job: c for c in changes if c.kind == "plist" and c.job}
    known = any(service(c).loaded is not None for c in plists.values())
    disabled = _disabled() if known else None
    refusals = memory.refusals()
    out = []
    for js in jobs:
        c = plists.get(js.job)
        s = service(c) if c is not None else None
        facts = {"label": s.label, "loaded": s.loaded, "pid": s.pid,
                 "last_exit": s.last_exit,
                 "disabled": (s.label in disabled) if disabled is not None else None,
                 "refused": refusals.get(s.label) if not s.loaded else None,
                 } if s is not None else None
        out.append(js._replace(facts={**js.facts, "launchd": facts})
                   if facts else js)
    return tuple(out)


def _disabled() -> set[str] | None:
    from schedgen.targets.launchd.doctor import disabled_labels

    return disabled_labels()
