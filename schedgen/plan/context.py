"""What a target plans and applies in, and the shape every target has.

A target knows three things: what it wants on disk for a config (`plan` reads the
desired artifacts from render), how to read what is installed (also in `plan`), and
how to carry out one change (`apply`). The builder and the executor only see this
protocol, so nothing else cares which target it is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Protocol

from schedgen.config.model import Config, Job
from schedgen.machine.neighbours import header_namespace, recorded_elsewhere
from schedgen.machine.ops import Ops
from schedgen.machine.ownership import Record
from schedgen.plan.changes import Change
from schedgen.plan.review import settings
from schedgen.render.artifacts import Artifact, carries_marker
from schedgen.render.desired import desired


class PlanContext:
    # Plain classes, not dataclasses: defining a dataclass costs every start-up ~1 ms.
    def __init__(self, *, config: Config | None, record: Record, prune: bool, force: bool,
                 uninstall: bool, selected: tuple[str, ...], review: bool = False) -> None:
        self.config, self.record, self.selected = config, record, selected
        self.prune, self.force, self.uninstall = prune, force, uninstall
        self.warnings: list[str] = []
        # diff/status: a missing target program (launchctl on Linux) leaves its live state
        # unknown instead of failing, so a Mac's config can be reviewed anywhere
        self.review = review
        # review: target -> why its installed state is unknown (cause, done, what to try)
        self.unknown: dict[str, str] = {}

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
    def skipped(self) -> dict[str, str]:
        """Jobs of the file that are not for this host (config/select.py): job -> why."""
        return {s.job: s.why for s in self.config.skipped} if self.config is not None else {}

    @cached_property
    def neighbours(self) -> dict[str, str]:
        return recorded_elsewhere(self.record.namespace)

    def other_owner(self, k: str, before: str | None) -> str | None:
        """Another namespace that installed this file (its header, else its record)."""
        if not carries_marker(before):
            return None  # absent, or not schedgen's at all (that conflict says so itself)
        ns = header_namespace(before)
        if ns is None:
            ns = self.neighbours.get(k)
        return ns if ns is not None and ns != self.record.namespace else None

    def job_targets(self, job: str | None) -> tuple[str, ...]:
        j = self.job(job)
        return j.targets if j is not None else ()

    @cached_property
    def renamed(self) -> dict[str, str]:
        """Jobs renamed in jobs.toml since the last apply: old name -> new name.

        A recorded job gone from jobs.toml is the same job under a new name when exactly
        one new job adopts what it adopted, or else has its command and schedule; its
        old files are then removed by a plain apply, not left as orphans.
        """
        if self.config is None or not self.record.settings:
            return {}
        recorded = self.record.settings
        new = {j.name: settings(j) for j in self.config.jobs if j.name not in recorded}

        def same(old: dict[str, object], now: dict[str, object]) -> bool:
            if old.get("adopts") or now.get("adopts"):
                return old.get("adopts") == now.get("adopts")
            return (old.get("command"), old.get("schedule")) == (now.get("command"),
                                                                 now.get("schedule"))

        out: dict[str, str] = {}
        for name, old in recorded.items():
            if name in self._jobs or name in self.skipped:
                continue
            hits = [n for n, now in new.items() if same(old, now)]
            if len(hits) == 1 and hits[0] not in out.values():
                out[name] = hits[0]
        return out

    def why_unwanted(self, job: str | None) -> str:
        if job in self.renamed:
            return f"job {job} is now job {self.renamed[job]} (renamed in jobs.toml)"
        if job in self.skipped:
            return f"job {job} is not for this host: {self.skipped[job]}"
        j = self.job(job)
        if j is None and self.config is not None and job in self.config.elsewhere:
            return f"job {job} is in the other scope now (its `scope` changed)"
        if j is None:
            return "its job is no longer in jobs.toml"
        if not j.enabled:
            return f"job {j.name} is disabled (enabled = false)"
        return f"job {j.name} no longer uses it (targets or paths changed)"

    def explicit(self, jobs: tuple[str, ...]) -> bool:
        """Is this artifact unwanted because the config says so (not just silent about it)?

        A job still in jobs.toml (disabled, or moved to another target or path) has its
        old artifacts removed by a plain apply, and so has one whose `hosts` no longer
        match this host. A job gone from jobs.toml leaves orphans, which only
        `apply --prune` removes.
        """
        if self.uninstall:
            return True
        moved = self.config.elsewhere if self.config is not None else ()
        return any(self.job(j) or j in self.renamed or j in self.skipped or j in moved
                   for j in jobs)


_PAST = {"create": "created", "update": "updated", "remove": "removed", "load": "loaded",
         "reload": "reloaded", "unload": "unloaded", "restore": "restored",
         "turn off": "turned off", "put back": "put back", "save": "saved"}


class ApplyContext:
    def __init__(self, *, record: Record, ops: Ops, force: bool,
                 say: Callable[[str], None]) -> None:
        self.record, self.ops, self.force, self.say = record, ops, force, say
        self.done: list[str] = []

    def did(self, verb: str, what: str) -> None:
        """Report one thing done (or, in a dry run, that would be done): did("create", x)."""
        line = f"{'would ' + verb if self.ops.dry_run else _PAST[verb]}: {what}"
        self.done.append(line)
        self.say(line)


class Planner(Protocol):
    name: str

    def plan(self, ctx: PlanContext, earlier: tuple[Change, ...]) -> list[Change]: ...

    def apply(self, change: Change, ctx: ApplyContext) -> None: ...
