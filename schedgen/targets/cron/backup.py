"""A copy of the user's crontab as it was before schedgen first wrote it.

Kept once, in schedgen's state folder, and never overwritten: whatever schedgen does
later, the table the user had is there, and the apply that made it says how to put it
back.
"""

from __future__ import annotations

from pathlib import Path

from schedgen import paths
from schedgen.plan.context import ApplyContext
from schedgen.targets.cron.crontab import Table

NAME = "crontab-before-schedgen"


def path() -> Path:
    return paths.state_dir() / NAME


def keep_first(ctx: ApplyContext, table: Table) -> None:
    p = path()
    if p.exists():
        return
    if not ctx.ops.dry_run:
        ctx.ops.mkdir(p.parent)
        ctx.ops.write(p, table.text, 0o600)  # it may hold secrets in env lines
    how = f"`crontab {p}`" if table.present else "`crontab -r` (you had no crontab)"
    ctx.did("save", f"your crontab as it was before schedgen first changed it, in {p}; "
                    f"{how} puts it back")
