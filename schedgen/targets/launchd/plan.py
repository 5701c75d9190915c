"""The launchd target: one plist per job in ~/Library/LaunchAgents, loaded per user.

Works on any host with a `launchctl` on PATH (that is how it is tested on Linux).
Only jobs whose plist changed, or that are not loaded, are reloaded (launchd runs the
wrapper afresh each time, so a changed wrapper or runtime needs no reload); a job
that is running right now is left alone unless --force.
"""

from __future__ import annotations

from schedgen.errors import SystemOpError
from schedgen.machine.ownership import Installed
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets.base import (
    Service,
    plan_files,
    remove_file,
    service,
    settle,
    undo_write,
    write_file,
)
from schedgen.targets.launchd import adopt, launchctl
from schedgen.targets.launchd.launchctl import UNLOADED_NOTE

BACKGROUND_NOTICE = (
    'note: macOS will show a "Background Items Added" notice for this: launchd now runs '
    "your schedgen jobs in the background (the item is named after the program launchd "
    "starts, often bash). Leave it allowed: switching it off in System Settings → General "
    "→ Login Items & Extensions → Allow in the Background stops the jobs without a word "
    "(`schedgen doctor` says when it is off). This is said once.")


class LaunchdTarget:
    name = "launchd"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "launchd" not in ctx.selected:
            return []
        wanted = ctx.artifacts("plist")
        # the user's own plists imported jobs replace: off before schedgen's go on
        adopted = adopt.plan(ctx)
        if not wanted and not ctx.record.of_kind("plist"):
            return adopted  # no launchctl call on a machine that has nothing for launchd

        def targets_of(a: Artifact) -> tuple[str, ...]:
            return ("launchd",)

        try:
            services = launchctl.listing(unknown_ok=ctx.review)
        except SystemOpError as exc:
            if not ctx.review:
                raise
            ctx.unknown[self.name] = launchctl.unknown_words(str(exc))
            services = None
        if services is None and self.name not in ctx.unknown:
            ctx.unknown[self.name] = launchctl.unknown_words(launchctl.MISSING)
        out = []
        for c in plan_files(self.name, "plist", wanted, ctx, targets_of):
            assert c.path is not None
            label = c.path.name.removesuffix(".plist")
            svc = services.get(label) if services is not None else None
            c = c._replace(details=Service(
                label, svc is not None if services is not None else None,
                svc.pid if svc else None, svc.last_exit if svc else None))
            if services is None:
                c = c._replace(reload=c.action in (p.CREATE, p.UPDATE),
                               unknown=c.action == p.UNCHANGED)
            elif c.action in (p.CREATE, p.UPDATE):
                c = c._replace(reload=True)
            elif c.action == p.UNCHANGED and svc is None:
                c = c._replace(action=p.UPDATE, reload=True, note=UNLOADED_NOTE)
            elif c.action == p.FORGET and svc is not None:
                c = c._replace(action=p.DELETE, note="plist already removed, still loaded")
            busy = c.reload or c.action == p.DELETE
            if service(c).pid is not None and busy and not ctx.force and not ctx.uninstall:
                c = c._replace(deferred=f"running (PID {service(c).pid})")
            out.append(c)
        return [*adopted, *out]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if change.kind == adopt.KIND:
            adopt.apply(change, ctx)
            return
        if settle(ctx, change):
            return
        c, s = change, service(change)
        assert c.path is not None
        if c.deferred:
            verb = "unloading" if c.action == p.DELETE else "reloading"
            ctx.say(f"left alone: {s.label} is {c.deferred}; {verb} it would stop it. Run apply "
                    "again when it has finished, or use --force.")
            return
        if c.action == p.DELETE:
            if s.loaded:
                launchctl.bootout(ctx.ops, s.label)
                ctx.did("unload", s.label)
            if c.before is not None:
                remove_file(ctx, c)
            else:
                ctx.record.drop(c.key)
            return
        if c.action in (p.CREATE, p.UPDATE):
            old_entry = ctx.record.get(c.key)
            write_file(ctx, c)
            try:
                launchctl.reload(ctx.ops, s.label, c.path)
            except SystemOpError as exc:
                raise SystemOpError(f"{exc}\n{self._roll_back(c, ctx, old_entry)}") from None
            ctx.did("load", s.label)
            self._background_notice(ctx)
            return
        launchctl.reload(ctx.ops, s.label, c.path)
        ctx.did("reload" if s.loaded else "load", s.label + (f" ({c.note})" if c.note else ""))
        self._background_notice(ctx)

    def _background_notice(self, ctx: ApplyContext) -> None:
        """Said once per user (remembered in the state folder): the notice macOS shows."""
        from schedgen.targets.launchd import memory

        if not ctx.ops.dry_run and memory.first_notice("background-items"):
            ctx.say(BACKGROUND_NOTICE)

    def _roll_back(self, c: p.Change, ctx: ApplyContext, old_entry: Installed | None) -> str:
        """Put the previous plist back (and load it if it was loaded). Returns what happened."""
        s = service(c)
        assert c.path is not None
        try:
            if undo_write(ctx, c, old_entry, "it could not be loaded"):
                return f"{s.label}: the new plist was removed again; the job is not installed."
            if not s.loaded:
                return f"{s.label}: the previous plist was put back (it was not loaded before)."
            launchctl.bootstrap(ctx.ops, s.label, c.path)
            ctx.did("load", f"{s.label} (previous plist)")
            return f"{s.label}: the previous plist was put back and loaded again."
        except SystemOpError as exc:
            return f"{s.label}: putting the previous plist back failed too ({exc}); not loaded."
