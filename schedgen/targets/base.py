"""What every target has in common, and the file logic wrappers and plists share.

A target knows three things: what it wants on disk for a config (`plan` reads the
desired artifacts from render), how to read what is installed (also in `plan`), and
how to carry out one change (`apply`). Nothing else cares which target it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol

from schedgen.config.model import Config, Job
from schedgen.machine.neighbours import header_namespace, recorded_elsewhere
from schedgen.machine.ops import Ops, read_file
from schedgen.machine.ownership import Entry, Record, key, now
from schedgen.plan import changes as p
from schedgen.render.artifacts import MARKER, Artifact, desired


@dataclass
class PlanContext:
    config: Config | None
    record: Record
    prune: bool
    force: bool
    uninstall: bool
    selected: tuple[str, ...]
    warnings: list[str] = field(default_factory=list)
    # diff/status: a missing target program (launchctl on Linux) leaves its live state
    # unknown instead of failing, so a Mac's config can be reviewed anywhere
    review: bool = False

    @cached_property
    def desired(self) -> list[Artifact]:
        return desired(self.config) if self.config is not None else []

    def artifacts(self, kind: str) -> list[Artifact]:
        return [a for a in self.desired if a.kind == kind]

    @cached_property
    def _jobs(self) -> dict[str, Job]:
        return {j.name: j for j in self.config.jobs} if self.config is not None else {}

    def job(self, name: str | None) -> Job | None:
        """By name in one look-up (Config.job scans: plans must stay linear in jobs)."""
        return self._jobs.get(name) if name else None

    @cached_property
    def neighbours(self) -> dict[str, str]:
        return recorded_elsewhere(self.record.namespace)

    def other_owner(self, k: str, before: str | None) -> str | None:
        """Another namespace that installed this file (its header, else its record)."""
        if before is None or MARKER not in before:
            return None  # absent, or not schedgen's at all (that conflict says so itself)
        ns = header_namespace(before)
        if ns is None:
            ns = self.neighbours.get(k)
        return ns if ns is not None and ns != self.record.namespace else None

    def job_targets(self, job: str | None) -> tuple[str, ...]:
        j = self.job(job)
        return j.targets if j is not None else ()

    def why_unwanted(self, job: str | None) -> str:
        j = self.job(job)
        if j is None:
            return "its job is no longer in jobs.toml"
        if not j.enabled:
            return f"job {j.name} is disabled (enabled = false)"
        return f"job {j.name} no longer uses it (targets or paths changed)"

    def explicit(self, jobs: tuple[str, ...]) -> bool:
        """Is this artifact unwanted because the config says so (not just silent about it)?

        A job still in jobs.toml (disabled, or moved to another target or path) has its
        old artifacts removed by a plain apply. A job gone from jobs.toml leaves orphans,
        which only `apply --prune` removes.
        """
        if self.uninstall:
            return True
        return any(self.job(j) for j in jobs)


_PAST = {"create": "created", "update": "updated", "remove": "removed", "load": "loaded",
         "reload": "reloaded", "unload": "unloaded", "restore": "restored"}


@dataclass
class ApplyContext:
    record: Record
    ops: Ops
    force: bool
    say: Callable[[str], None]
    done: list[str] = field(default_factory=list)

    def did(self, verb: str, what: str) -> None:
        """Report one thing done (or, in a dry run, that would be done): did("create", x)."""
        line = f"{'would ' + verb if self.ops.dry_run else _PAST[verb]}: {what}"
        self.done.append(line)
        self.say(line)


class Target(Protocol):
    name: str

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]: ...

    def apply(self, change: p.Change, ctx: ApplyContext) -> None: ...


def all_targets() -> list[Target]:
    """In install order; removals run in the reverse order."""
    from schedgen.targets.cron import CronTarget
    from schedgen.targets.launchd import LaunchdTarget
    from schedgen.targets.wrappers import WrapperTarget

    return [WrapperTarget(), LaunchdTarget(), CronTarget()]


def target_by_name(name: str) -> Target:
    return next(t for t in all_targets() if t.name == name)


def plan_files(target: str, kind: str, wanted: list[Artifact], ctx: PlanContext,
               targets_of: Callable[[Artifact], tuple[str, ...]]) -> list[p.Change]:
    """Changes for artifacts that are whole files (wrappers, plists)."""
    out: list[p.Change] = []
    seen: set[str] = set()
    for a in wanted:
        assert a.path is not None
        k = key(kind, a.path)
        seen.add(k)
        before, mode = read_file(a.path)
        entry = ctx.record.get(k)
        c = p.Change(target, kind, k, p.UNCHANGED, a.path, before, a.content, job=a.job,
                     targets=targets_of(a), mode=a.mode)
        edited = entry is not None and before is not None and p.digest(before) != entry.sha256
        other = ctx.other_owner(k, before)
        if other is not None:
            ns = ctx.record.namespace
            c = c._replace(action=p.UPDATE, note=f"taken over from namespace {other} (--force)") \
                if ctx.force else c._replace(action=p.CONFLICT, note=(
                    f"namespace {other} installed this file; namespaces {ns} and {other} "
                    "would share it: rename the job or give one namespace its own "
                    "wrapper_dir / label_prefix; --force takes it over"))
        elif before is None:
            c = c._replace(action=p.CREATE, note="missing" if entry else "")
        elif before == a.content and mode == a.mode:
            pass
        elif entry is None and MARKER not in before:
            how = ", overwritten (--force)" if ctx.force else "; --force overwrites it"
            c = c._replace(action=p.UPDATE if ctx.force else p.CONFLICT,
                        note="not written by schedgen" + how)
        elif before == a.content:
            c = c._replace(action=p.UPDATE, note=f"mode {mode:o}, wants {a.mode:o}")
        else:
            c = c._replace(action=p.UPDATE, edited=edited, note="hand-edited" if edited else "")
        out.append(c)
    for entry in ctx.record.of_kind(kind):
        if entry.key in seen or entry.path is None:
            continue
        out.append(unwanted_file(target, entry, ctx))
    return out


def unwanted_file(target: str, entry: Entry, ctx: PlanContext) -> p.Change:
    """A recorded file the config no longer wants: delete, or say why not."""
    path = Path(entry.path or "")
    before, _ = read_file(path)
    c = p.Change(target, entry.kind, entry.key, p.DELETE, path, before, None, job=entry.job,
                 targets=entry.targets, mode=entry.mode or 0o644)
    gone = ctx.why_unwanted(entry.job)
    if before is None:
        return c._replace(action=p.FORGET, note="already removed")
    if MARKER not in before:
        return c._replace(action=p.DISOWN,
                       note="no longer carries the schedgen marker; left in place as yours")
    other = header_namespace(before)
    if other is not None and other != ctx.record.namespace:
        return c._replace(action=p.DISOWN,
                          note=f"namespace {other} installed it since; left in place as theirs")
    if not ctx.explicit((entry.job,) if entry.job else ()) and not ctx.prune:
        return c._replace(action=p.ORPHAN, note=f"{gone}; apply --prune removes it")
    edited = p.digest(before) != entry.sha256
    if edited and not ctx.force and not ctx.uninstall:
        return c._replace(action=p.KEPT, edited=True,
                       note="hand-edited since schedgen installed it; --force removes it")
    return c._replace(edited=edited, note=gone if not ctx.uninstall else "")


def record_file(ctx: ApplyContext, c: p.Change, content: str) -> None:
    """Record an artifact as installed with this content (the crontab block has no path)."""
    ctx.record.set(Entry(kind=c.kind, path=str(c.path) if c.path is not None else None,
                         sha256=p.digest(content), job=c.job, jobs=c.jobs, targets=c.targets,
                         mode=c.mode if c.path is not None else None, installed_at=now()))


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
        if entry is None or entry.sha256 != p.digest(c.before) or entry.targets != c.targets:
            record_file(ctx, c, c.before)  # adopt a file that is already exactly right
    return c.action == p.UNCHANGED and not c.reload
