"""The cron target: one managed block per namespace in the user's crontab; in system
scope, one whole file per namespace in /etc/cron.d (crond.py).

Its parts: fit (what it refuses), plan (read, plan, apply), crontab (the program and
the block in the table), importer and cron_text (`import --from cron`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedgen.targets.cron import fit
from schedgen.targets.cron.words import ADOPT_NOTE
from schedgen.targets.interface import Defaults, Refusal, Target

if TYPE_CHECKING:
    from schedgen.config.model import Config, Job
    from schedgen.doctor import Check
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact


class Cron(Defaults):
    """All of a namespace's jobs in one block: its install time starts their schedules."""

    name = "cron"
    kinds: tuple[str, ...] = ("cron", "crond")
    imports = True
    adopts = True
    schedule_kinds = kinds
    drift_notes = {ADOPT_NOTE: ADOPT_NOTE}  # read only

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        return fit.refusals(job, where)

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        from schedgen.render import source
        from schedgen.render.artifacts import Artifact
        from schedgen.targets.cron import render

        if not jobs:
            return []
        from schedgen import paths

        if paths.system():
            from schedgen.targets.cron import crond

            return [crond.artifact(config, jobs)]
        # content rendered on first use only (render.cron_block looked up then)
        return [Artifact("cron", None, "cron/crontab", None,
                         lambda: render.cron_block(config, jobs),
                         source=source.of("cron", None, config, jobs))]

    def job_changes(self, change: Change, jobs: tuple[Job, ...]) -> dict[str, Change]:
        from schedgen.targets.cron.status import job_parts

        return job_parts(change, jobs)

    def diff_text(self, change: Change) -> tuple[str, str] | None:
        from schedgen.targets.cron import adopt

        if not isinstance(change.details, adopt.Adoption):
            return None
        lines = adopt.describe(change.details)
        return ("your own crontab lines the jobs replace:", "\n".join(lines)) if lines else None

    def change_json(self, change: Change) -> dict[str, Any]:
        from schedgen.targets.cron import adopt

        a = change.details
        if not isinstance(a, adopt.Adoption):
            return {}
        return {"adopted": [{"line": x.number, "text": x.text, "job": x.job,
                             "action": x.action} for x in a.lines],
                "adopted_missing": [{"job": j, "text": t} for j, t in a.missing]}

    def kind_words(self, kind: str) -> str:
        return "cron.d file" if kind == "crond" else "crontab lines"

    def planner(self) -> Planner:
        from schedgen import paths

        if paths.system():
            from schedgen.targets.cron.crond import CrondTarget

            return CrondTarget()
        from schedgen.targets.cron.plan import CronTarget

        return CronTarget()

    def doctor(self, jobs: tuple[Job, ...]) -> list[Check]:
        from schedgen.targets.cron.doctor import checks

        return checks(jobs)

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        from schedgen.targets.cron.importer import import_cron

        return import_cron(file, dest, system=system, lock=lock)


TARGET: Target = Cron()  # the type checker holds it to the interface
