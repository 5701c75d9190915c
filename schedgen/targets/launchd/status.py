"""`status` for target launchd: the job as launchctl lists it."""

from __future__ import annotations

import dataclasses

from schedgen.commands.status_types import JobStatus
from schedgen.plan import changes as p
from schedgen.targets.base import service


def with_facts(jobs: tuple[JobStatus, ...], changes: list[p.Change]) -> tuple[JobStatus, ...]:
    plists = {c.job: c for c in changes if c.kind == "plist" and c.job}
    out = []
    for js in jobs:
        c = plists.get(js.job)
        s = service(c) if c is not None else None
        facts = {"label": s.label, "loaded": s.loaded, "pid": s.pid,
                 "last_exit": s.last_exit} if s is not None else None
        out.append(dataclasses.replace(js, facts={**js.facts, "launchd": facts})
                   if facts else js)
    return tuple(out)

