"""The cron target: one managed block per namespace in the user's crontab.

The block is owned by its BEGIN/END markers; the ownership record keeps its hash so
a hand edit shows up as drift. Its lines always follow the config exactly.
"""

from __future__ import annotations

from schedgen.errors import SystemOpError
from schedgen.machine.ops import find
from schedgen.machine.ownership import Installed
from schedgen.plan import changes as p
from schedgen.plan import decide
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets.base import record_file, settle
from schedgen.targets.cron import adopt, backup, crontab

KEY = "cron"


class CronTarget:
    name = "cron"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "cron" not in ctx.selected:
            return []
        wanted = ctx.artifacts("cron")
        entry = ctx.record.get(KEY)
        if not wanted and entry is None and not _adopted(ctx) and (
                not ctx.uninstall or not find("crontab")):
            return []  # nothing of ours can be there (uninstall still looks for the markers)
        table = None
        if ctx.review:  # a crontab that cannot be read leaves the block unknown, not missing
            try:
                table = crontab.read()
            except SystemOpError as exc:
                ctx.unknown[self.name] = crontab.unknown_words(exc, ctx.record.namespace)
                table = crontab.Table("", False)
        try:
            table = table or crontab.read()
        except SystemOpError as exc:
            if entry is not None or wanted:
                raise crontab.apply_words(exc) from None
            # uninstall, nothing recorded: a crontab we cannot read cannot hold our block
            ctx.warnings.append(f"{exc}; not looking for a schedgen block there")
            return []
        before = crontab.block(table.text, ctx.record.namespace)
        # The block as recorded and made from the same jobs: not rendered again.
        after = (None if not wanted else before if _unchanged(wanted[0], entry, before)
                 else wanted[0].content)
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
        # an unknown crontab (no crontab program, diff) holds no line to turn off
        adoption = adopt.plan(table.text, ctx.record.namespace,
                              _adopted(ctx) if table.present else {}, ctx.uninstall)
        if not ctx.review:
            adoption = adoption._replace(seen=table)
        c = p.Change(self.name, "cron", KEY, p.UNCHANGED, None, before, after, jobs=jobs,
                     targets=("cron",), source=wanted[0].source if wanted else None,
                     details=adoption, unknown=self.name in ctx.unknown)
        # The block is found by its BEGIN/END markers, so whatever is there is ours.
        if after is not None:
            c = decide.wanted(c, entry, ctx, owned=True, shared=False)
        elif before is not None or entry is not None:
            c = decide.unwanted(
                c._replace(action=p.DELETE), entry, ctx, owned=True,
                jobs=jobs, gone="no enabled job of this namespace targets cron",
                orphan="no job of this namespace targets cron any more; apply --prune removes "
                       "the block")
        elif not adoption.pending:
            return []
        if adoption.pending:
            what = _adoption_words(adoption)
            if c.action in (p.UNCHANGED, p.FORGET):
                c = c._replace(action=p.UPDATE, note=what)
            else:
                c = c._replace(note=f"{c.note}; {what}" if c.note else what)
        return [c]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if settle(ctx, change):
            return
        ns = ctx.record.namespace
        adoption = change.details if isinstance(change.details, adopt.Adoption) else None
        table = crontab.write_if_unchanged(
            ctx.ops, ns, change.before, change.after, seen=adoption.seen if adoption else None,
            rewrite=(lambda t: adopt.rewrite(t, adoption)) if adoption else None,
            first=lambda t: backup.keep_first(ctx, t))
        done = adoption
        if adoption is not None and table is not adoption.seen:
            # edited since the plan: the lines as they were where the rewrite found them
            done = adopt.plan(table.text, ns, dict(adoption.wanted), adoption.uninstall)
        for x in done.pending if done else ():
            verb = {adopt.COMMENT: "turn off", adopt.RESTORE: "put back"}.get(x.action, "update")
            ctx.did(verb, f"your crontab line {x.number} (job {x.job}"
                    f"{', renamed' if x.action == adopt.RENAME else ''}): {x.text}")
        if change.after is None:
            if ctx.record.get(KEY) is not None or change.before is not None:
                ctx.record.drop(KEY)
                ctx.did("remove", f"crontab block namespace={ns}")
            return
        record_file(ctx, change, change.after)
        verb = "create" if change.action == p.CREATE else "update"
        ctx.did(verb, f"crontab block namespace={ns} ({_jobs(change)})"
                + (f" ({change.note})" if change.note else ""))


def _unchanged(a: Artifact, entry: Installed | None, before: str | None) -> bool:
    return (a.source is not None and entry is not None and entry.source == a.source
            and before is not None and entry.sha256 == p.digest(before))


def _jobs(change: p.Change) -> str:
    n = len(change.jobs)
    return f"{n} job{'s' if n != 1 else ''}: {', '.join(change.jobs)}" if n else "no jobs"


def _adopted(ctx: PlanContext) -> dict[str, str]:
    """The crontab lines the config's jobs adopt: line -> job (uninstall: none)."""
    if ctx.config is None or ctx.uninstall:
        return {}
    return {j.adopts[1]: j.name for j in ctx.config.jobs if j.adopts and j.adopts[0] == "cron"}


def _adoption_words(a: adopt.Adoption) -> str:
    words = {adopt.COMMENT: "turned off", adopt.RESTORE: "put back",
             adopt.RENAME: "given its job's new name"}
    parts = []
    for action, word in words.items():
        n = sum(1 for x in a.pending if x.action == action)
        if n:
            parts.append(f"{n} of your own crontab line{'s' if n != 1 else ''} {word}")
    return ", ".join(parts)
