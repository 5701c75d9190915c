"""`status` for target launchd: the job as launchctl lists it."""

from __future__ import annotations

import dataclasses
from typing import Any

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


def lines(ld: dict[str, Any]) -> list[str]:
    running = (f"running, PID {ld['pid']}" if ld["pid"] else
               "running unknown" if ld["loaded"] is None else "not running")
    loaded = ("loaded state unknown (no launchctl here)" if ld["loaded"] is None
              else "loaded" if ld["loaded"] else "not loaded")
    last = f", last exit {ld['last_exit']}" if ld["last_exit"] is not None else ""
    return [f"  launchd    {ld['label']}: {loaded}, {running}{last}"]
