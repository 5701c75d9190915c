"""The systemd target: a user service and timer per job, started by the user manager.

Its parts: render (the units), plan (read, plan, apply), systemctl (the program),
status (the unit's state in `status`), importer (`import --from systemd`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedgen.targets.interface import Defaults, Refusal, Target, refuse_system
from schedgen.targets.systemd.systemctl import NOT_ARMED
from schedgen.targets.systemd.words import ADOPT_NOTE

if TYPE_CHECKING:
    from schedgen.commands.status_types import JobStatus
    from schedgen.config.model import Config, Job
    from schedgen.doctor import Check
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact
    from schedgen.schedule.expressions import Entry
    from schedgen.schedule.upcoming import Firings


class Systemd(Defaults):
    name = "systemd"
    imports = True
    adopts = True
    kinds: tuple[str, ...] = ("service", "timer")
    facts = True
    drift_notes = {NOT_ARMED: NOT_ARMED, ADOPT_NOTE: ADOPT_NOTE}  # read only
    dst_note = ("systemd: a time the clocks skip does not run that day, and a repeated time "
                "runs once, the first time (docs/timezones.md)")
    # OnUnitActiveSec counts from the last run's start, not the clock
    every_words = ("{every}: systemd runs it every {interval} from the timer's start, then "
                   "from each run's start; there is no calendar time")

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

        if c.kind == "adopted":
            return {"unit": c.details.timer, "service": c.details.service,
                    "enabled": c.details.enabled, "kept_in": str(c.details.kept)}
        return {"unit": service(c).label, "reload": c.reload, "state": service(c).state}

    def diff_text(self, c: Change) -> tuple[str, str] | None:
        if c.kind != "adopted":
            return None
        from schedgen.targets.systemd.adopt import describe

        return ("your own timer the job replaces:", describe(c))

    def kind_words(self, kind: str) -> str:
        return "your own timer" if kind == "adopted" else kind

    def firings(self, schedule: Sequence[Entry], n: int, start: datetime) -> Firings | None:
        from schedgen.schedule.upcoming import systemd_firings

        return systemd_firings(schedule, n, start)

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        from schedgen.targets.systemd.status import with_facts

        return with_facts(jobs, changes)

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        sd = facts
        if not sd.get("known"):
            return [f"  systemd    {sd.get('timer') or sd.get('service')}: state unknown"]
        if not sd.get("active"):
            return [f"  systemd    {sd.get('timer')}: not loaded"]
        state = f"{sd['active']} ({sd['sub']}), {sd.get('enabled') or 'no unit file'}"
        lines = [f"  systemd    {sd['timer']}: {state}",
                 f"             next elapse {sd.get('next_elapse') or 'n/a'}, last fired "
                 f"{sd.get('last_trigger') or 'never'}, result {sd.get('result') or 'n/a'}"]
        if sd.get("pid"):
            lines.append(f"             {sd['service']}: running, PID {sd['pid']}")
        return lines

    def doctor(self, jobs: tuple[Job, ...]) -> list[Check]:
        from schedgen.targets.systemd.doctor import checks

        return checks(jobs)

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        from schedgen.targets.systemd.importer import import_systemd

        refuse_system(system)
        return import_systemd(file, dest, lock=lock)


TARGET: Target = Systemd()  # the type checker holds it to the interface
