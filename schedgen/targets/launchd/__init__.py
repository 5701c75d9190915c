"""The launchd target: one plist per job in ~/Library/LaunchAgents, loaded per user.

Its parts: fit (what it refuses), plan (read, plan, apply), launchctl (the program),
importer and plist_read (`import --from launchd`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedgen.targets.interface import Defaults, Refusal, Target, refuse_system
from schedgen.targets.launchd import fit
from schedgen.targets.launchd.launchctl import UNLOADED_NOTE
from schedgen.targets.launchd.words import ADOPT_NOTE

if TYPE_CHECKING:
    from schedgen.commands.status_types import JobStatus
    from schedgen.config.model import Config, Job
    from schedgen.doctor import Check
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact


class Launchd(Defaults):
    name = "launchd"
    imports = True
    adopts = True
    kinds: tuple[str, ...] = ("plist",)
    schedule_kinds: tuple[str, ...] = ("plist",)
    on_load = True
    facts = True
    drift_notes = {UNLOADED_NOTE: "not loaded", ADOPT_NOTE: ADOPT_NOTE}  # read only
    # StartInterval counts from when launchd loaded the job: no calendar time to show.
    every_words = ("{every}: launchd runs it every {interval} after it is loaded "
                   "(StartInterval); there is no calendar time")

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        return fit.refusals(job, where)

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        from schedgen.paths import launch_agents_dir
        from schedgen.render import source
        from schedgen.render.artifacts import Artifact
        from schedgen.targets.launchd import render

        folder = launch_agents_dir()
        # content rendered on first use only (render.plist looked up then)
        return [Artifact("plist", job.name, f"launchd/{job.label}.plist", path,
                         lambda job=job: render.plist(job, config),  # type: ignore[misc]
                         source=source.of("plist", path, config, (job,)))
                for job in jobs for path in (folder / f"{job.label}.plist",)]

    def planner(self) -> Planner:
        from schedgen.targets.launchd.plan import LaunchdTarget

        return LaunchdTarget()

    def change_json(self, c: Change) -> dict[str, Any]:
        from schedgen.targets.base import service

        if c.kind == "adopted":
            return {"label": c.details.label, "file": c.details.file,
                    "loaded": c.details.loaded, "kept_in": str(c.details.kept)}
        s = service(c)
        return {"label": s.label, "reload": c.reload, "deferred": c.deferred or None,
                "loaded": s.loaded, "pid": s.pid, "last_exit": s.last_exit}

    def diff_text(self, c: Change) -> tuple[str, str] | None:
        if c.kind != "adopted":
            return None
        from schedgen.targets.launchd.adopt import describe

        return ("your own plist the job replaces:", describe(c))

    def kind_words(self, kind: str) -> str:
        return "your own plist" if kind == "adopted" else kind

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        from schedgen.targets.launchd.status import with_facts

        return with_facts(jobs, changes)

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        running = (f"running, PID {facts['pid']}" if facts["pid"] else
                   "running unknown" if facts["loaded"] is None else "not running")
        loaded = ("loaded state unknown (no launchctl here)" if facts["loaded"] is None
                  else "loaded" if facts["loaded"] else "not loaded")
        last = f", last exit {facts['last_exit']}" if facts["last_exit"] is not None else ""
        lines = [f"  launchd    {facts['label']}: {loaded}, {running}{last}"]
        if facts.get("refused"):
            lines.append(f"  launchd    refused by launchd: {facts['refused']} "
                         "(`schedgen doctor` explains)")
        if facts.get("disabled"):
            lines.append("  launchd    disabled: launchd will not run it (Allow in the "
                         "Background switched off, or launchctl disable; `schedgen doctor` "
                         "explains)")
        return lines

    def gates(self, job: Job) -> bool:
        from schedgen.targets.launchd.render import gated

        return gated(job)

    def doctor(self, jobs: tuple[Job, ...]) -> list[Check]:
        from schedgen.targets.launchd.doctor import checks

        return checks(jobs)

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        from schedgen.targets.launchd.importer import import_launchd

        refuse_system(system)
        return import_launchd(file, dest, lock=lock)


TARGET: Target = Launchd()  # the type checker holds it to the interface
