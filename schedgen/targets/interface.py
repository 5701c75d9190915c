"""What a target is: the one shape every folder under schedgen/targets/ gives.

A target answers for itself, and nothing else in schedgen knows its name:
- fit: what it refuses of a job (`validate` reports it, `render --target` skips the
  job with it: one check, so they cannot disagree);
- render: its artifacts for a config;
- plan and apply: a `Planner` (schedgen.plan.context) that reads what is installed,
  plans the changes and carries them out, loaded only when there is work for it;
- status: the facts of its own it adds to a job's status and to a change, and how
  they read (text and --json);
- import: jobs from its native format, when it has one.
The registry (schedgen.targets.registry) lists the targets; `docs/targets.md` is the
contributor's guide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from schedgen.errors import UsageError

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from schedgen.commands.status_types import JobStatus
    from schedgen.config.model import Config, Job
    from schedgen.doctor import Check
    from schedgen.importers.document import ImportResult
    from schedgen.plan.changes import Change
    from schedgen.plan.context import Planner
    from schedgen.render.artifacts import Artifact
    from schedgen.schedule.expressions import Entry
    from schedgen.schedule.upcoming import Firings


class Refusal(NamedTuple):
    where: str  # as validate reports it: `where` given, or a key under it
    message: str  # as validate reports it
    renders: bool = False  # the artifact is still fine: `render --target` does not skip it


class Target(Protocol):
    name: str
    kinds: tuple[str, ...]  # what it installs, as the ownership record names the kinds
    local: bool  # its jobs run from a job file (wrapper) on this machine
    keeps_disabled: bool  # a disabled job stays installed (suspended), not removed
    imports: bool  # `import --from NAME` reads its native format
    # An imported job's `adopts = "NAME: ..."` names what apply turns off in its scheduler
    # (the crontab line, the plist, the unit) and uninstall puts back.
    adopts: bool
    # The scheduler loads the job: an @every counts from the load (no calendar time),
    # run_at_load starts it then, and a firing missed asleep runs once at wake.
    on_load: bool
    schedule_kinds: tuple[str, ...]  # kinds whose install time starts its schedule
    facts: bool  # it adds facts of its own to a job's status (JSON: a key by its name)
    # How `status` words a drift its plan notes: an update with this note -> these words.
    drift_notes: dict[str, str]
    # Why an @every has no calendar time under it, with {every} and {interval} ("": it has).
    every_words: str
    dst_note: str  # with `firings`: what it does at a clock change

    def refusals(self, job: Job, where: str) -> list[Refusal]:
        """What keeps this job from going to this target (empty: it fits); `where` is
        how validate names the job (jobs.NAME)."""
        ...

    def config_refusals(self, namespace: str, jobs: Sequence[Job]) -> list[tuple[str, str]]:
        """(where, message) across the config's jobs, asked when one goes to it."""
        ...

    def render(self, config: Config, jobs: tuple[Job, ...]) -> list[Artifact]:
        """Its own artifacts for these jobs (the job files are rendered for it)."""
        ...

    def planner(self) -> Planner:
        """Reads what is installed, plans, applies: its code loaded on demand."""
        ...

    def change_json(self, change: Change) -> dict[str, Any]:
        """Its own facts of a change, for `diff --json` (empty: none)."""
        ...

    def firings(self, schedule: Sequence[Entry], n: int, start: datetime) -> Firings | None:
        """The next firings as it reads the clock, where that differs from cron's reading
        (None: it does not); `dst_note` says how."""
        ...

    def diff_text(self, change: Change) -> tuple[str, str] | None:
        """A title and text `diff` prints after the change's own diff (None: nothing)."""
        ...

    def job_changes(self, change: Change, jobs: tuple[Job, ...]) -> dict[str, Change]:
        """A change of its split into each job's own part (status reports per job)."""
        ...

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        """The jobs' status with its own facts added (`changes`: those of its kinds)."""
        ...

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        """Its facts of one job, as `status` prints them."""
        ...


    def kind_words(self, kind: str) -> str:
        """An artifact kind of its, as `status` names it."""
        ...


    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        """`import --from NAME`: jobs from its native format (None: it has none)."""
        ...

    def gates(self, job: Job) -> bool:
        """Does it fire this job (a job without a zone) more often than its schedule? Then
        its scheduler passes the job file `--gate`, and the job file's gate, in the host's
        zone, drops those fires that are not firings (templates/runtime/81-tzgate.sh)."""
        ...

    def doctor(self, jobs: tuple[Job, ...]) -> list[Check]:
        """`doctor`: its own checks of this host and of these jobs of its (each Check
        with the job's name, or None for the host)."""
        ...


class Defaults:
    """What a target that says nothing more gives: a local target that refuses nothing
    beyond its jobs' own refusals, with no facts of its own and no importer."""

    local = True
    keeps_disabled = False
    imports = False
    adopts = False
    on_load = False
    schedule_kinds: tuple[str, ...] = ()
    facts = False
    drift_notes: dict[str, str] = {}  # read only
    every_words = ""
    dst_note = ""

    def firings(self, schedule: Sequence[Entry], n: int, start: datetime) -> Firings | None:
        return None

    def config_refusals(self, namespace: str, jobs: Sequence[Job]) -> list[tuple[str, str]]:
        return []

    def change_json(self, change: Change) -> dict[str, Any]:
        return {}

    def import_jobs(self, file: Path | None, dest: Path, *, system: bool,
                    lock: bool) -> ImportResult | None:
        return None

    def diff_text(self, change: Change) -> tuple[str, str] | None:
        return None

    def job_changes(self, change: Change, jobs: tuple[Job, ...]) -> dict[str, Change]:
        return {change.job: change} if change.job else {}

    def with_facts(self, jobs: tuple[JobStatus, ...], changes: list[Change],
                   namespace: str) -> tuple[JobStatus, ...]:
        return jobs

    def status_lines(self, facts: dict[str, Any]) -> list[str]:
        return []

    def kind_words(self, kind: str) -> str:
        return kind

    def gates(self, job: Job) -> bool:
        return False

    def doctor(self, jobs: tuple[Job, ...]) -> list[Check]:
        return []


def refuse_system(system: bool) -> None:
    """`import --system` reads a crontab's user field: no other format has one."""
    if system:
        raise UsageError("--system is for --from cron (a crontab with a user field)")
