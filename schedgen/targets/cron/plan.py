"""The cron target: one managed block per namespace in the user's crontab.

The block is owned by its BEGIN/END markers; the ownership record keeps its hash so
a hand edit shows up as drift. Its lines always follow the config exactly.
"""

from __future__ import annotations

import shutil

from schedgen.errors import SystemOpError
from schedgen.plan import changes as p
from schedgen.plan import decide
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.targets.base import record_file, settle
from schedgen.targets.cron import crontab

KEY = "cron"


class CronTarget:
    name = "cron"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "cron" not in ctx.selected:
            return []
        wanted = ctx.artifacts("cron")
        entry = ctx.record.get(KEY)
        if not wanted and entry is None and (not ctx.uninstall or not shutil.which("crontab")):
            return []  # nothing of ours can be there (uninstall still looks for the markers)
        if ctx.review and not shutil.which("crontab"):
            ctx.warnings.append("crontab not found on PATH: the installed crontab block is "
                                "unknown; the block is shown as it would be installed")
            table = crontab.Table("", False)
        else:
            table = None
        try:
            table = table or crontab.read()
        except SystemOpError as exc:
            if entry is not None or wanted:
                raise
            # uninstall, nothing recorded: a crontab we cannot read cannot hold our block
            ctx.warnings.append(f"{exc}; not looking for a schedgen block there")
            return []
        before = crontab.block(table.text, ctx.record.namespace)
        after = wanted[0].content if wanted else None
        if before != after:  # the table would be written: refused before anything is
            try:
                crontab.check_round_trip(table.text)
            except crontab.DamagedBlock as exc:
                if not ctx.review:
                    raise
                ctx.warnings.append(f"apply will refuse to write it: {exc}")
        jobs = tuple(j.name for j in ctx.config.for_target("cron")) if ctx.config else ()
        if not jobs and entry is not None:
            jobs = entry.jobs
        c = p.Change(self.name, "cron", KEY, p.UNCHANGED, None, before, after, jobs=jobs,
                     targets=("cron",))
        # The block is found by its BEGIN/END markers, so whatever is there is ours.
        if after is not None:
            return [decide.wanted(c, entry, ctx, owned=True, shared=False)]
        if before is None and entry is None:
            return []
        return [decide.unwanted(
            c._replace(action=p.DELETE), entry, ctx, owned=True,
            jobs=jobs, gone="no enabled job of this namespace targets cron",
            orphan="no job of this namespace targets cron any more; apply --prune removes the "
                   "block")]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if settle(ctx, change):
            return
        ns = ctx.record.namespace
        crontab.write_if_unchanged(ctx.ops, ns, change.before, change.after)
        if change.after is None:
            ctx.record.drop(KEY)
            ctx.did("remove", f"crontab block namespace={ns}")
            return
        record_file(ctx, change, change.after)
        verb = "create" if change.action == p.CREATE else "update"
        ctx.did(verb, f"crontab block namespace={ns} ({_jobs(change)})"
                + (f" ({change.note})" if change.note else ""))


def _jobs(change: p.Change) -> str:
    n = len(change.jobs)
    return f"{n} job{'s' if n != 1 else ''}: {', '.join(change.jobs)}" if n else "no jobs"
