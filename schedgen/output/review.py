"""`diff` for review: per job what changed in jobs.toml terms, then the file diffs.

Meant to be pasted into reviews and CI logs, so env values never appear: the
summary names keys only and the file diffs pass through output/mask.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedgen.commands.diff import Review
from schedgen.output import plan as report
from schedgen.plan import changes as p
from schedgen.plan import review as rv

_MARK = {rv.NEW: "+", rv.CHANGED: "~", rv.REMOVED: "-", rv.FILES: "~", rv.UNKNOWN: "?"}
_WORD = {rv.NEW: "new", rv.CHANGED: "changed", rv.REMOVED: "removed",
         rv.FILES: "files differ", rv.UNKNOWN: "files differ"}


def jobs_text(r: Review) -> str:
    if not r.jobs:
        return ""
    n = len(r.jobs)
    out = [f"jobs ({n} with changes):\n"]
    for j in r.jobs:
        out.append(f"{_MARK[j.status]} {j.job}: {_WORD[j.status]}"
                   + (f" ({j.note})" if j.note else "") + "\n")
        out += [f"    {f.text}\n" for f in j.fields]
    return "".join(out) + "\n"


def host_text(r: Review) -> str:
    """Which jobs the host gets and which it skips, when the file selects by host."""
    if not (r.by_host or r.elsewhere):
        return ""
    where = (f"host {r.host} (--host: not this machine; compared with what is installed "
             "here)" if r.elsewhere else f"host {r.host}")
    out = [f"{where}: {len(r.selected)} job{'s' if len(r.selected) != 1 else ''}"
           + (f": {', '.join(r.selected)}" if r.selected else "") + "\n"]
    out += [f"  skipped {s.job}: {s.why}\n" for s in r.skipped]
    return "".join(out) + "\n"


def stat_text(r: Review) -> str:
    """Names only: which files change, with line counts."""
    out = []
    for c in r.plan.changes:
        if not c.pending and not (c.reload and c.action == p.UNCHANGED):
            continue
        plus = minus = 0
        if c.before != c.after:
            for line in c.unified_diff().splitlines():
                if line.startswith("+") and not line.startswith("+++"):
                    plus += 1
                elif line.startswith("-") and not line.startswith("---"):
                    minus += 1
        out.append(f"{report.headline(c)}  (+{plus} -{minus})\n")
    out.extend(f"- delete {what}\n" for what in r.metrics)
    return "".join(out)


def text(r: Review, color: bool, stat: bool = False, full: bool = False) -> str:
    """`full`: new files in whole, not one line each."""
    files = (report.diff_text(r.plan, color, full, r.metrics) if not stat
             else stat_text(r) + _tail(r.plan, r.in_sync))
    head = jobs_text(r)
    if head and not r.in_sync:
        head += "files:\n"
    return r.mask(host_text(r) + head + files)


def _tail(plan: p.Plan, in_sync: bool) -> str:
    warnings = "".join(f"warning: {w}\n" for w in plan.warnings)
    warnings += "".join(f"unknown: {w}\n" for _, w in plan.unknown)
    state = "in sync" if in_sync else "changes pending"
    return f"{warnings}namespace {plan.namespace}: {state}: {plan.summary()}\n"


def as_json(r: Review, stat: bool = False) -> dict[str, Any]:
    data = report.plan_json(r.plan)
    data["jobs"] = [{
        "job": j.job, "status": j.status, "note": j.note or None,
        "changes": [{"field": f.field, "old": f.old, "new": f.new, "text": f.text}
                    for f in j.fields],
    } for j in r.jobs]
    data["metrics_files"] = list(r.metrics)  # apply would delete them: jobs gone
    data["in_sync"] = r.in_sync
    data["host"] = {"name": r.host, "this_machine": not r.elsewhere, "jobs": list(r.selected),
                    "skipped": [{"job": s.job, "field": s.field, "why": s.why}
                                for s in r.skipped]}
    if stat:
        for c in data["changes"]:
            c.pop("diff", None)
    masked: dict[str, Any] = _masked(data, r.mask)
    return masked


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _masked(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, mask) for v in value]
    return value
