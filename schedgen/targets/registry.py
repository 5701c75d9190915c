"""Every target schedgen knows, in install order: the one list.

A target is one folder, `schedgen/targets/<name>/`, whose package holds `TARGET`, an
object with the shape of `schedgen.targets.interface.Target`. Nothing outside a target's
folder imports it: everything reaches a target through this list, by name. A folder is
imported the first time something asks for its target, so a cron-only `diff` never
loads the launchd, systemd or kubernetes code (start-up time; tests/test_cli_startup.py).

This module is light on purpose (the config loader asks it which names exist): it
imports no stage of schedgen, only names the folders.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, NamedTuple

from schedgen.errors import UsageError

if TYPE_CHECKING:
    from schedgen.plan.changes import Change
    from schedgen.plan.context import ApplyContext, PlanContext, Planner
    from schedgen.targets.interface import Target


class Entry(NamedTuple):
    name: str  # as jobs.toml's `targets` and `--target` spell it
    module: str  # its folder: a package with a TARGET
    kinds: tuple[str, ...]  # what it installs, as the ownership record names the kinds
    # Planned even when neither the config nor the record has any of its kinds: its
    # artifacts carry markers that `uninstall` looks for without a record.
    unrecorded: bool = False


# The one registry line per target. Order: `render`, `diff` and apply list them so;
# removals run in the reverse order.
ENTRIES = (
    Entry("launchd", "schedgen.targets.launchd", ("plist",)),
    Entry("cron", "schedgen.targets.cron", ("cron", "crond"), unrecorded=True),
    Entry("systemd", "schedgen.targets.systemd", ("service", "timer")),
    Entry("kubernetes", "schedgen.targets.kubernetes", ("cronjob",)),
)
# Extra targets for tests: "module:attribute,..." naming objects with the Target shape.
EXTRA_ENV = "SCHEDGEN_TEST_TARGETS"

_loaded: dict[str, Target] = {}


def _extra() -> tuple[Entry, ...]:
    out = []
    for spec in filter(None, os.environ.get(EXTRA_ENV, "").split(",")):
        target = _import(spec)
        _loaded[target.name] = target
        out.append(Entry(target.name, spec, tuple(target.kinds)))
    return tuple(out)


def _import(spec: str) -> Target:
    module, _, attr = spec.partition(":")
    target: Target = getattr(importlib.import_module(module), attr or "TARGET")
    return target


def entries() -> tuple[Entry, ...]:
    return ENTRIES + _extra() if os.environ.get(EXTRA_ENV) else ENTRIES


def names() -> tuple[str, ...]:
    return tuple(e.name for e in entries())


def entry(name: str) -> Entry:
    for e in entries():
        if e.name == name:
            return e
    raise UsageError(f"unknown target {name!r}; known: {', '.join(names())}")


def get(name: str) -> Target:
    """The target named so, its folder imported on first use."""
    target = _loaded.get(name)
    if target is None:
        target = _loaded[name] = _import(entry(name).module)
    return target


def of_kind(kind: str) -> Target | None:
    """The target that installs this kind of artifact (None: the shared wrapper files)."""
    for e in entries():
        if kind in e.kinds:
            return get(e.name)
    return None


class _OnDemand:
    """A target's planner, loaded only once there is something for it: a config and a
    record without any of its kinds give it nothing to do (each target returns no
    change then, without asking its program), so most commands never load the code
    of the targets they do not use."""

    def __init__(self, e: Entry) -> None:
        self.name, self.kinds, self._entry = e.name, e.kinds, e
        self._planner: Planner | None = None

    def _loaded(self) -> Planner:
        if self._planner is None:
            self._planner = get(self.name).planner()
        return self._planner

    def plan(self, ctx: PlanContext, earlier: tuple[Change, ...]) -> list[Change]:
        if self.name not in ctx.selected:
            return []
        if not self._entry.unrecorded and not any(ctx.artifacts(k) or ctx.record.of_kind(k)
                                                  for k in self.kinds):
            return []
        return self._loaded().plan(ctx, earlier)

    def preflight(self, steps: list[Change], ctx: ApplyContext) -> None:
        """The target's own check before any write (plan.execute), if it has one."""
        check = getattr(self._loaded(), "preflight", None)
        if check is not None:
            check(steps, ctx)

    def apply(self, change: Change, ctx: ApplyContext) -> None:
        self._loaded().apply(change, ctx)


# The job files and the runtime they source: shared by every target whose jobs run
# here, planned first and removed last.
WRAPPERS = "schedgen.targets.wrappers:WRAPPERS"


def all_targets() -> list[Planner]:
    """The planners, in install order; removals run in the reverse order."""
    shared: Planner = getattr(importlib.import_module(WRAPPERS.partition(":")[0]),
                              WRAPPERS.partition(":")[2])
    return [shared, *(_OnDemand(e) for e in entries())]
