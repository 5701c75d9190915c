"""What to do with one artifact, given what is installed: the decisions every target shares.

A target finds the installed content (`before`) its own way (a file, the crontab's
block) and says whether it is verifiably schedgen's (`owned`: the marker is there);
these two functions turn that into CREATE / UPDATE / CONFLICT / UNCHANGED for what
the config wants, and DELETE / FORGET / DISOWN / ORPHAN / KEPT for what it no longer
wants, with the same words for every kind of artifact.
"""

from __future__ import annotations

from schedgen.machine.neighbours import header_namespace
from schedgen.machine.ownership import Installed
from schedgen.plan.changes import (
    CONFLICT,
    CREATE,
    DELETE,
    DISOWN,
    FORGET,
    KEPT,
    ORPHAN,
    UPDATE,
    Change,
    digest,
)
from schedgen.plan.context import PlanContext


def _edited(before: str | None, entry: Installed | None) -> bool:
    """Owned, but the disk no longer holds what schedgen wrote."""
    return entry is not None and before is not None and digest(before) != entry.sha256


def wanted(c: Change, entry: Installed | None, ctx: PlanContext, *, owned: bool,
           installed_mode: int | None = None, shared: bool = True) -> Change:
    """``c`` carries before/after; ``installed_mode`` is None where modes do not apply.

    ``shared``: namespaces could share this artifact (a file at one path). The crontab
    block is found by its own namespace's markers, so no other namespace's is ever it.
    """
    other = ctx.other_owner(c.key, c.before) if shared else None
    if other is not None:  # another namespace's file: sharing it would break one of them
        ns = ctx.record.namespace
        if ctx.force:
            return c._replace(action=UPDATE, note=f"taken over from namespace {other} (--force)")
        return c._replace(action=CONFLICT, note=(
            f"namespace {other} installed this file; namespaces {ns} and {other} "
            "would share it: rename the job or give one namespace its own "
            "wrapper_dir / label_prefix; --force takes it over"))
    if c.before is None:
        return c._replace(action=CREATE, note="missing" if entry else "")
    same_mode = installed_mode is None or installed_mode == c.mode
    if c.before == c.after and same_mode:
        return c
    if entry is None and not owned:
        how = ", overwritten (--force)" if ctx.force else "; --force overwrites it"
        return c._replace(action=UPDATE if ctx.force else CONFLICT,
                          note="not written by schedgen" + how)
    if c.before == c.after:
        return c._replace(action=UPDATE, note=f"mode {installed_mode:o}, wants {c.mode:o}")
    edited = _edited(c.before, entry)
    return c._replace(action=UPDATE, edited=edited, note="hand-edited" if edited else "")


def unwanted(c: Change, entry: Installed | None, ctx: PlanContext, *, owned: bool, jobs: tuple[str, ...],
             gone: str, orphan: str) -> Change:
    """A recorded artifact the config no longer wants (``c.action`` DELETE): delete, or why not.

    ``gone`` says why it is unwanted (the note of a delete), ``orphan`` what an orphan's
    note says; ``jobs`` are the jobs it belonged to. ``entry`` is None for an artifact
    found by its markers but not recorded (uninstall looks for those too).
    """
    if c.before is None:
        return c._replace(action=FORGET, note="already removed")
    if not owned:
        return c._replace(action=DISOWN,
                          note="no longer carries the schedgen marker; left in place as yours")
    other = header_namespace(c.before)
    if other is not None and other != ctx.record.namespace:
        return c._replace(action=DISOWN,
                          note=f"namespace {other} installed it since; left in place as theirs")
    if not ctx.explicit(jobs) and not ctx.prune:
        return c._replace(action=ORPHAN, note=orphan)
    edited = _edited(c.before, entry)
    if edited and not ctx.force and not ctx.uninstall:
        return c._replace(action=KEPT, edited=True,
                          note="hand-edited since schedgen installed it; --force removes it")
    if ctx.uninstall:  # removes all it installed, hand-edited or not: but says so
        return c._replace(action=DELETE, edited=edited,
                          note="hand-edited since schedgen installed it" if edited else "")
    return c._replace(action=DELETE, edited=edited, note=gone)
