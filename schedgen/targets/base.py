"""The file logic wrappers and plists share: plan a whole file, write it, remove it.

What a target is (the protocol) and the contexts it works in are in schedgen.plan.context.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.machine.ops import read_file
from schedgen.machine.ownership import Installed, key, now
from schedgen.plan import changes as p
from schedgen.plan import decide
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact, carries_marker


class Service(NamedTuple):
    """A job as a service manager (launchd, systemd) has it loaded: a change's details."""

    label: str  # its label, or the unit's file name
    loaded: bool | None  # None: unknown (no program to ask)
    pid: int | None
    last_exit: int | None
    state: dict[str, Any] | None = None  # the unit as the manager shows it


def service(c: p.Change) -> Service:
    """The details of a change to a service manager's file."""
    assert isinstance(c.details, Service), c
    return c.details


def plan_files(target: str, kind: str, wanted: list[Artifact], ctx: PlanContext,
               targets_of: Callable[[Artifact], tuple[str, ...]]) -> list[p.Change]:
    """Changes for artifacts that are whole files (wrappers, plists)."""
    out: list[p.Change] = []
    seen: set[str] = set()
    absent = _Absent()
    for a in wanted:
        assert a.path is not None
        k = key(kind, a.path)
        seen.add(k)
        before, mode = (None, None) if absent.holds(a.path) else read_file(a.path)
        if before is None:
            absent.found(a.path)
        entry = ctx.record.get(k)
        # In sync when proven so: made from what the installed file was made from, and
        # the file still as written. Then it is not rendered (its content is the file's).
        after = (before if unchanged_source(a, entry, before) and mode == a.mode
                 else a.content)
        c = p.Change(target, kind, k, p.UNCHANGED, a.path, before, after, job=a.job,
                     targets=targets_of(a), mode=a.mode, source=a.source)
        c = decide.wanted(c, entry, ctx, owned=carries_marker(before),
                          installed_mode=mode)
        out.append(c)
    for entry in ctx.record.of_kind(kind):
        if entry.key in seen or entry.path is None:
            continue
        out.append(unwanted_file(target, entry, ctx))
    return out


class _Absent:
    """Folders found missing while planning: no file in one is there either, so its other
    files are not opened one by one (a first install tried, and failed, to read every job
    file). Only a folder stat(2) says does not exist: any other error (no permission, a
    file in the way) leaves each file to read_file, which reports it."""

    __slots__ = ("_missing", "_asked")

    def __init__(self) -> None:
        self._missing: set[str] = set()
        self._asked: set[str] = set()

    def holds(self, path: Path) -> bool:
        return bool(self._missing) and os.path.dirname(path) in self._missing

    def found(self, path: Path) -> None:
        """`path` was not there: is its folder?"""
        folder = os.path.dirname(path)
        if folder in self._asked:
            return
        self._asked.add(folder)
        try:
            os.stat(folder)
        except FileNotFoundError:
            self._missing.add(folder)
        except OSError:
            pass


def unchanged_source(a: Artifact, entry: Installed | None, before: str | None) -> bool:
    """Is the installed text what `a` would render to, without rendering it? Its source
    digest is the recorded one, and the text still has the recorded hash and mode."""
    return (a.source is not None and entry is not None and entry.source == a.source
            and before is not None and entry.mode == a.mode
            and entry.sha256 == p.digest(before))


def unwanted_file(target: str, entry: Installed, ctx: PlanContext) -> p.Change:
    """A recorded file the config no longer wants: delete, or say why not."""
    path = Path(entry.path or "")
    before, _ = read_file(path)
    c = p.Change(target, entry.kind, entry.key, p.DELETE, path, before, None, job=entry.job,
                 targets=entry.targets, mode=entry.mode or 0o644)
    gone = ctx.why_unwanted(entry.job)
    return decide.unwanted(c, entry, ctx, owned=carries_marker(before),
                           jobs=(entry.job,) if entry.job else entry.jobs, gone=gone,
                           orphan=f"{gone}; apply --prune removes it")


def record_file(ctx: ApplyContext, c: p.Change, content: str) -> None:
    """Record an artifact as installed with this content (the crontab block has no path)."""
    ctx.record.set(Installed(kind=c.kind, path=str(c.path) if c.path is not None else None,
                         sha256=p.digest(content), job=c.job, jobs=c.jobs, targets=c.targets,
                         mode=c.mode if c.path is not None else None, installed_at=now(),
                         source=c.source))


def write_file(ctx: ApplyContext, c: p.Change) -> None:
    """Create or update one owned file, then record it (the record follows the disk)."""
    assert c.path is not None and c.after is not None
    ctx.ops.write(c.path, c.after, c.mode)
    record_file(ctx, c, c.after)
    ctx.did("create" if c.action == p.CREATE else "update", f"{c.kind} {c.path}"
            + (f" ({c.note})" if c.note else ""))


def remove_file(ctx: ApplyContext, c: p.Change) -> None:
    assert c.path is not None
    ctx.ops.remove(c.path)
    ctx.record.drop(c.key)
    ctx.did("remove", f"{c.kind} {c.path}" + (f" ({c.note})" if c.note else ""))


def undo_write(ctx: ApplyContext, c: p.Change, old_entry: Installed | None, why: str) -> bool:
    """Take back the write of `c` that its scheduler refused: remove the new file, or put
    the previous one back with its record entry. True: the file was new (removed)."""
    assert c.path is not None
    if c.before is None:
        ctx.ops.remove(c.path)
        ctx.record.drop(c.key)
        ctx.did("remove", f"{c.kind} {c.path} again ({why})")
        return True
    ctx.ops.write(c.path, c.before, c.mode)
    ctx.record.drop(c.key)
    if old_entry is not None:
        ctx.record.set(old_entry)
    ctx.did("restore", f"previous {c.kind} {c.path}")
    return False


def settle(ctx: ApplyContext, c: p.Change) -> bool:
    """Handle the actions that change no file. True if nothing more is to be done."""
    if c.action == p.FORGET:
        ctx.record.drop(c.key)
        return True
    if c.action == p.DISOWN:
        ctx.record.drop(c.key)
        ctx.say(f"left in place: {c.kind} {c.path} ({c.note})")
        return True
    if c.action in (p.ORPHAN, p.KEPT):
        ctx.say(f"{c.action}: {c.kind} {c.where} ({c.note})")
        return True
    if c.action == p.UNCHANGED and c.before is not None:
        entry = ctx.record.get(c.key)
        if (entry is None or entry.sha256 != p.digest(c.before) or entry.targets != c.targets
                or entry.source != c.source):
            record_file(ctx, c, c.before)  # adopt a file that is already exactly right
    return c.action == p.UNCHANGED and not c.reload
