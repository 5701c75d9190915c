"""The user's own timers an imported job replaces (`adopts = "systemd: NAME.timer"`).

apply disables and stops such a timer, then moves it and its service out of the unit
folder into schedgen's state folder (`adopted/systemd/<namespace>/`, noting whether the
timer was enabled), so the job runs once, from schedgen's own units. `uninstall` moves
them back byte for byte, reloads the manager and enables and starts the timer again if
it was. A unit is found by its file name, not by the job's, so a renamed job keeps it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.machine.ops import read_file
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import carries_marker
from schedgen.targets.systemd import systemctl
from schedgen.targets.systemd.render import unit_dir
from schedgen.targets.systemd.words import ADOPT_NOTE

KIND = "adopted"
_UNIT = re.compile(r"^\s*Unit\s*=\s*(\S+)\s*$", re.MULTILINE)


class Adopted(NamedTuple):
    """A change's own facts: the user's timer and the service it starts."""

    timer: str
    service: str
    enabled: bool
    kept: Path  # where apply moves them


def kept_dir(namespace: str) -> Path:
    return paths.state_dir() / "adopted" / "systemd" / namespace


def _service(timer: str, text: str) -> str:
    m = _UNIT.search(text)
    return m.group(1) if m else timer.removesuffix(".timer") + ".service"


def _enabled(path: Path) -> bool:
    return any(x.name == path.name for x in path.parent.glob("*.wants/*"))


def plan(ctx: PlanContext) -> list[p.Change]:
    ns = ctx.record.namespace
    kept = kept_dir(ns)
    out: list[p.Change] = []
    if ctx.uninstall:
        for f in sorted(kept.glob("*.timer")):
            text, _ = read_file(f)
            assert text is not None
            a = Adopted(f.name, _service(f.name, text), (kept / f"{f.name}.enabled").exists(),
                        kept)
            out.append(p.Change("systemd", KIND, f"adopted:{f.name}", p.CREATE,
                                unit_dir() / f.name, None, text, targets=("systemd",),
                                note="your own timer, put back as it was", details=a))
        return out
    for job in ctx.config.jobs if ctx.config else ():
        if not job.adopts or job.adopts[0] != "systemd":
            continue
        path = unit_dir() / job.adopts[1]
        text, _ = read_file(path)
        if text is None or carries_marker(text):
            continue  # already moved aside (or schedgen's own)
        a = Adopted(path.name, _service(path.name, text), _enabled(path), kept)
        out.append(p.Change("systemd", KIND, f"adopted:{path.name}", p.UPDATE, path, text, None,
                            job=job.name, targets=("systemd",), note=ADOPT_NOTE, details=a))
    return out


def describe(c: p.Change) -> str:
    a = c.details
    assert isinstance(a, Adopted)
    if c.action == p.CREATE:
        return (f"  {a.timer} and {a.service}: put back from {a.kept}"
                f"{', enabled and started' if a.enabled else ''}")
    return (f"  {a.timer} ({a.service})\n    replaced by job {c.job}: apply disables and stops "
            f"it and moves both files to {a.kept} (`schedgen uninstall` puts them back)")


def apply(c: p.Change, ctx: ApplyContext) -> None:
    a = c.details
    assert isinstance(a, Adopted)
    home = unit_dir()
    if c.action == p.CREATE:  # uninstall: back where they were, byte for byte
        for name in (a.timer, a.service):
            text, mode = read_file(a.kept / name)
            if text is not None:
                ctx.ops.write(home / name, text, mode or 0o644)
                ctx.ops.remove(a.kept / name)
        systemctl.daemon_reload(ctx.ops)
        if a.enabled:
            systemctl.enable_now(ctx.ops, a.timer)
            ctx.ops.remove(a.kept / f"{a.timer}.enabled")
        ctx.did("put back", f"your timer {a.timer} and {a.service} into {home}"
                + (" (enabled and started)" if a.enabled else ""))
        return
    ctx.ops.mkdir(a.kept)
    for name in (a.timer, a.service):  # kept before anything is turned off
        text, mode = read_file(home / name)
        if text is not None:
            ctx.ops.write(a.kept / name, text, mode or 0o644)
    if a.enabled:
        ctx.ops.write(a.kept / f"{a.timer}.enabled", "", 0o600)
    systemctl.disable_now(ctx.ops, a.timer)
    for name in (a.timer, a.service):
        if (home / name).exists():
            ctx.ops.remove(home / name)
    systemctl.daemon_reload(ctx.ops)
    ctx.did("turn off", f"your timer {a.timer} (job {c.job}): disabled, stopped, it and "
                        f"{a.service} moved to {a.kept}")
