"""`doctor [JOB]`: every check of this host and of the jobs, in order: the host's own
(clock, zone), each target's (registry order), then each job's shared and target checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.commands import scopes
from schedgen.config.model import Config
from schedgen.config.select import load_here
from schedgen.doctor import PROBLEM, WARNING, Check, shared
from schedgen.errors import UsageError
from schedgen.targets import registry


def doctor(config_path: Path, names: list[str] | None = None) -> list[Check]:
    config = load_here(config_path)
    known = {j.name for j in config.jobs}
    away = {s.job: s.why for s in config.skipped}
    for n in names or ():
        if n in away:
            raise UsageError(f"job {n} is not for this host: {away[n]}")
        if n not in known:
            raise UsageError(f"no job {n!r} in {config.path}")
    jobs = tuple(j for j in config.jobs if j.enabled and (not names or j.name in names))
    local = tuple(j for j in jobs
                  if any(registry.get(t).local for t in j.targets if t in registry.names()))
    found: list[Check] = shared.host_checks() if local else []

    def targets_checks(part: Config) -> list[Check]:  # each scope's own manager, domain
        out: list[Check] = []
        for name in registry.names():
            mine = tuple(j for j in jobs if name in j.targets and j.scope == paths.scope())
            if mine:
                out += registry.get(name).doctor(mine)
        return out

    for checks in scopes.each(config, config.scopes, targets_checks):
        found += checks
    for job in local:
        found += shared.job_checks(job)
    order = {j.name: i for i, j in enumerate(jobs)}
    return sorted(found, key=lambda c: -1 if c.job is None else order.get(c.job, len(order)))


def counts(checks: list[Check]) -> tuple[int, int]:
    return (sum(c.verdict == PROBLEM for c in checks), sum(c.verdict == WARNING for c in checks))


def as_text(checks: list[Check], targets: dict[str, tuple[str, ...]]) -> str:
    lines: list[str] = []
    current: object = object()
    for c in checks:
        if c.job != current:
            current = c.job
            lines.append("host" if c.job is None
                         else f"job {c.job} ({', '.join(targets.get(c.job, ()))})")
        lines.append(f"  {c.verdict:<8} {c.name}: {c.detail}")
        if c.remedy:
            lines.append(f"  {'':<8} do: {c.remedy}")
    p, w = counts(checks)
    lines.append(f"{p} problem{'s' if p != 1 else ''}, {w} warning{'s' if w != 1 else ''}"
                 if p or w else "no problems found")
    return "\n".join(lines)


def as_json(checks: list[Check]) -> dict[str, Any]:
    p, w = counts(checks)
    return {"ok": p == 0, "problems": p, "warnings": w,
            "checks": [{"job": c.job, "check": c.name, "verdict": c.verdict,
                        "detail": c.detail, "remedy": c.remedy or None} for c in checks]}
