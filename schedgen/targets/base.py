"""The file logic wrappers and plists share: plan a whole file, write it, remove it.

What a target is (the protocol) and the contexts it works in are in schedgen.plan.context.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from schedgen.machine.neighbours import header_namespace
from schedgen.machine.ops import read_file
from schedgen.machine.ownership import Installed, key, now
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import MARKER, Artifact


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


def unwanted_file(target: str, entry: Installed, ctx: PlanContext) -> p.Change:
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
    ctx.record.set(Installed(kind=c.kind, path=str(c.path) if c.path is not None else None,
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
