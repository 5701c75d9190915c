"""The cron target: one managed block per namespace in the user's crontab.

Its parts: fit (what it refuses), plan (read, plan, apply), crontab (the program and
the block in the table), importer and cron_text (`import --from cron`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from schedgen.targets.cron import fit
from schedgen.targets.interface import Defaults, Refusal, Target

if TYPE_CHECKING:
    from schedgen.config.model import Config, Job
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact


class Cron(Defaults):
    name = "cron"
    imports = True
    kinds: tuple[str, ...] = ("cron",)
    schedule_kinds: tuple[str, ...] = ("cron",)

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        return fit.refusals(job, where)

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        from schedgen.render import artifacts

        if not jobs:
            return []
        return [artifacts.Artifact("cron", None, "cron/crontab", None,
                                   artifacts.cron_block(config, jobs))]

    def job_changes(self, change: Change, jobs: tuple[Job, ...]) -> dict[str, Change]:
        from schedgen.targets.cron.status import job_parts

        return job_parts(change, jobs)

    def kind_words(self, kind: str) -> str:
        return "crontab lines"

    def planner(self) -> Planner:
        from schedgen.targets.cron.plan import CronTarget

        return CronTarget()

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        from schedgen.targets.cron.importer import import_cron

        return import_cron(file, dest, system=system, lock=lock)


TARGET: Target = Cron()  # the type checker holds it to the interface
