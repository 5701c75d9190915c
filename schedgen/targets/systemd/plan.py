"""The systemd target: a user .service and .timer per job in ~/.config/systemd/user.

Services are written first and timers after them, so a timer never starts a unit
that is not there; the timer's step runs `daemon-reload` (which re-arms an active
timer with its new schedule) and enables and starts it if it is not. Removals go the other way: the timer is disabled and stopped, then the
service file goes. No step ever stops a service, so a run in progress finishes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from schedgen import paths
from schedgen.errors import SystemOpError
from schedgen.machine.record_format import Installed
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets import base
from schedgen.targets.systemd import adopt, systemctl
from schedgen.targets.systemd.systemctl import NOT_ARMED

KINDS = ("service", "timer")


class SystemdTarget:
    name = "systemd"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "systemd" not in ctx.selected:
            return []
        wanted = {k: ctx.artifacts(k) for k in KINDS}
        # the user's own timers imported jobs replace: off before schedgen's go on
        adopted = adopt.plan(ctx)
        if not any(wanted.values()) and not any(ctx.record.of_kind(k) for k in KINDS):
            return adopted  # no systemctl call on a machine that has nothing for systemd

        def targets_of(a: Artifact) -> tuple[str, ...]:
            return ("systemd",)

        changes = [c for k in KINDS for c in base.plan_files(self.name, k, wanted[k], ctx, targets_of)]
        units = _query(ctx, [c.path.name for c in changes if c.path is not None])
        # the system manager runs whoever is logged in: lingering is the user manager's
        if (units is not None and wanted["timer"] and not paths.system()
                and systemctl.lingering() is False):
            ctx.warnings.append(
                "lingering is off for this user: systemd stops your timers when you log out and "
                "they fire again only after you log in; `loginctl enable-linger` keeps them "
                "running")
        reloaded = {c.job for c in changes
                    if c.kind == "service" and c.action in (p.CREATE, p.UPDATE)}
        out = []
        for c in changes:
            assert c.path is not None
            u = units.get(c.path.name) if units is not None else None
            c = c._replace(details=base.Service(
                c.path.name, None if units is None else u is not None and u.load == "loaded",
                u.pid if u else None, u.exit_status if u else None, _view(u)))
            if units is None and c.action == p.UNCHANGED:
                c = c._replace(unknown=True)
            if c.kind == "timer":
                if c.action in (p.CREATE, p.UPDATE):
                    c = c._replace(reload=True)
                elif c.action == p.UNCHANGED and units is not None and not (u and u.armed):
                    c = c._replace(action=p.UPDATE, reload=True,
                                   note=NOT_ARMED)
                elif c.action == p.UNCHANGED and c.job in reloaded:
                    c = c._replace(reload=True, note="its service changed")
                elif c.action == p.FORGET and u is not None and u.active == "active":
                    c = c._replace(action=p.DELETE, note="timer file already removed, still active")
            out.append(c)
        return [*adopted, *out]

    def preflight(self, steps: list[p.Change], ctx: ApplyContext) -> None:
        """Before anything is written: is there a user manager to load the units into?"""
        if any(c.target == self.name and (c.action in (p.CREATE, p.UPDATE, p.DELETE) or c.reload)
               for c in steps):
            systemctl.check_manager()

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if change.kind == adopt.KIND:
            adopt.apply(change, ctx)
            return
        if base.settle(ctx, change):
            return
        if change.kind == "service":
            self._service(change, ctx)
        else:
            self._timer(change, ctx)

    def _service(self, c: p.Change, ctx: ApplyContext) -> None:
        s = base.service(c)
        running = f"{s.label} is running (PID {s.pid})" if s.pid else ""
        if c.action in (p.CREATE, p.UPDATE):
            base.write_file(ctx, c)  # the timer's step reloads the manager
            if running and c.action == p.UPDATE:
                ctx.say(f"note: {running}; that run goes on as it started, the next one "
                        "uses the new unit")
            return
        if c.before is not None:
            base.remove_file(ctx, c)
        else:
            ctx.record.drop(c.key)
        systemctl.daemon_reload(ctx.ops)
        ctx.did("reload", "systemd user manager (daemon-reload)")
        if running:
            ctx.say(f"left running: {running}; its current run finishes, nothing stops it")

    def _timer(self, c: p.Change, ctx: ApplyContext) -> None:
        s = base.service(c)
        assert c.path is not None
        if c.action == p.DELETE:
            # Also when not loaded: disable removes the timers.target.wants link.
            if s.loaded is not False or c.before is not None:
                systemctl.disable_now(ctx.ops, s.label)
                ctx.did("unload", f"{s.label} (disabled and stopped)")
            if c.before is not None:
                base.remove_file(ctx, c)
            else:
                ctx.record.drop(c.key)
            return
        old_entry = ctx.record.get(c.key)
        if c.action in (p.CREATE, p.UPDATE):
            base.write_file(ctx, c)
        # daemon-reload re-arms an active timer with its new schedule; one that is not
        # enabled and active is enabled and started.
        armed = s.state is not None and s.state.get("active") == "active" and (
            s.state.get("enabled") == "enabled")
        try:
            systemctl.daemon_reload(ctx.ops)
            if c.action == p.UNCHANGED:
                ctx.did("reload", f"systemd user manager ({s.label}: {c.note})")
            if not armed:
                systemctl.enable_now(ctx.ops, s.label)
                ctx.did("load", f"{s.label} (enabled and started)")
        except SystemOpError as exc:
            if c.action not in (p.CREATE, p.UPDATE):
                raise
            raise SystemOpError(f"{exc}\n{_roll_back(c, ctx, old_entry)}") from None


def _query(ctx: PlanContext, names: list[str]) -> dict[str, systemctl.Unit] | None:
    """The units' state, or None (and a warning) when it cannot be known."""
    if not systemctl.available():
        ctx.unknown["systemd"] = systemctl.unknown_words(systemctl.MISSING)
        return None
    try:
        return systemctl.show(names)
    except SystemOpError as exc:
        ctx.unknown["systemd"] = systemctl.unknown_words(str(exc))
        return None


def _view(u: systemctl.Unit | None) -> dict[str, Any] | None:
    if u is None:
        return None
    def iso(t: datetime | None) -> str | None:
        return t.astimezone().isoformat() if t else None

    return {"unit": u.id, "load": u.load, "active": u.active, "sub": u.sub,
            "enabled": u.file_state, "result": u.result, "pid": u.pid,
            "exit_status": u.exit_status, "next_elapse": iso(u.next_elapse),
            "last_trigger": iso(u.last_trigger)}


def _roll_back(c: p.Change, ctx: ApplyContext, old_entry: Installed | None) -> str:
    """Put the previous timer back (or take the new one away). Returns what happened."""
    s = base.service(c)
    assert c.path is not None
    try:
        if base.undo_write(ctx, c, old_entry, "it could not be started"):
            what = f"{s.label}: the new timer was removed again; the job is not scheduled."
        else:
            what = f"{s.label}: the previous timer was put back."
        systemctl.daemon_reload(ctx.ops)
        return what
    except SystemOpError as exc:
        return f"{s.label}: putting the previous timer back failed too ({exc})."
