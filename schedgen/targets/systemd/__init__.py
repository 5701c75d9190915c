"""The systemd target: a user service and timer per job, started by the user manager.

Its parts: render (the units), plan (read, plan, apply), systemctl (the program),
status (the unit's state in `status`), importer (`import --from systemd`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedgen.targets.interface import Defaults, Refusal, Target

if TYPE_CHECKING:
    from schedgen.commands.status_types import JobStatus
    from schedgen.config.model import Config, Job
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact
    from schedgen.schedule.expressions import Every


class Systemd(Defaults):
    name = "systemd"
    imports = True
    kinds: tuple[str, ...] = ("service", "timer")
    facts = True

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        return []  # OnCalendar, OnStartupSec and OnUnitActiveSec say every schedule

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        from schedgen.targets.systemd.render import artifacts

        return [a for job in jobs for a in artifacts(job, config)]

    def planner(self) -> Planner:
        from schedgen.targets.systemd.plan import SystemdTarget

        return SystemdTarget()

    def change_json(self, c: Change) -> dict[str, Any]:
        from schedgen.targets.base import service

        return {"unit": service(c).label, "reload": c.reload, "state": service(c).state}

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        from schedgen.targets.systemd.status import with_facts

        return with_facts(jobs, changes)

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        from schedgen.targets.systemd.status import systemd_lines

        return systemd_lines(facts)

    def drift_words(self, c: Change) -> str | None:
        from schedgen.plan.changes import UPDATE
        from schedgen.targets.systemd.status import NOT_ARMED

        return c.note if c.action == UPDATE and c.note == NOT_ARMED else None

    def every_note(self, every: Every) -> str | None:
        from schedgen.units import format_duration

        # OnUnitActiveSec counts from the last run's start, not the clock
        return (f"{every.text}: systemd runs it every {format_duration(every.seconds)} from "
                "the timer's start, then from each run's start; there is no calendar time")

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        from schedgen.errors import UsageError
        from schedgen.targets.systemd.importer import import_systemd

        if system:
            raise UsageError("--system is for --from cron (a crontab with a user field)")
        return import_systemd(file, dest, lock=lock)


TARGET: Target = Systemd()  # the type checker holds it to the interface
