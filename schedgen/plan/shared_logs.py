"""Two namespaces' jobs of one name in one log folder.

A job's log folder is <log_root>/<job>, whatever its namespace: two jobs.toml files of
different namespaces, each with a job `backup` and the default log_root (their job files
kept apart by wrapper_dir), would write one events.jsonl and one runs/ folder, and
history, status, check, report and metrics would show each the other's runs. Folders
are not moved (existing installs keep their records where they are): a job newly
installed into a folder another namespace's job uses is a conflict (--force shares it),
and one that already shares it is warned about at each plan.
"""

from __future__ import annotations

from pathlib import Path

from schedgen.machine import ownership
from schedgen.machine.neighbours import other_records
from schedgen.plan.changes import CONFLICT, CREATE, UPDATE, Change
from schedgen.plan.context import PlanContext


def log_dirs(record: ownership.Record) -> dict[str, str]:
    """Log folder -> job, of the jobs a record lists with their settings."""
    out: dict[str, str] = {}
    for name, s in (record.settings or {}).items():
        root = s.get("log_root") if isinstance(s, dict) else None
        if isinstance(root, str) and root:
            out[str(Path(root) / name)] = name
    return out


def check(changes: list[Change], ctx: PlanContext) -> list[Change]:
    if ctx.config is None or ctx.uninstall:
        return changes
    elsewhere: dict[str, str] = {}  # log folder -> the other namespace
    for record in other_records(ctx.record.namespace):
        for folder in log_dirs(record):
            elsewhere.setdefault(folder, record.namespace)
    if not elsewhere:
        return changes
    mine = log_dirs(ctx.record)
    out = []
    for c in changes:
        job = ctx.job(c.job) if c.kind == "wrapper" else None
        other = elsewhere.get(str(job.log_dir)) if job is not None else None
        if job is None or other is None or c.after is None or c.action == CONFLICT:
            out.append(c)
            continue
        said = (f"job {job.name}'s log folder {job.log_dir} is also job {job.name}'s of "
                f"namespace {other}: their runs are recorded together, and history, "
                "status, check, report and metrics show each the other's; give one "
                "namespace its own log_root (and lock_dir: both jobs' lock is named "
                f"{job.name} by default)")
        if c.action in (CREATE, UPDATE) and str(job.log_dir) not in mine and not ctx.force:
            out.append(c._replace(action=CONFLICT, note=f"{said}; --force shares it"))
            continue
        ctx.warnings.append(said)
        out.append(c)
    return out
