"""What `status` reports: plain records, shared by the status command and its target parts.

NamedTuples, as the config model: importing dataclasses (it imports inspect) was about
a twentieth of a 20-job `status`. A field's default is never changed in place (a new
dict is made: `js._replace(facts={**js.facts, ...})`), so one shared empty dict is safe.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from schedgen.machine.pause import Pause
from schedgen.outcomes.missed import Missed
from schedgen.records import runs


class JobStatus(NamedTuple):
    job: str
    enabled: bool
    targets: tuple[str, ...]
    schedule: str
    readable: str  # the schedule in words (schedgen.schedule.describe)
    installed: bool | None  # every artifact the job needs is there (None: unknown)
    drift: tuple[str, ...]  # how the machine differs from the config for this job
    last_run: dict[str, Any] | None
    next_run: str | None  # RFC 3339, UTC (schedule/when.py)
    next_notes: tuple[str, ...]
    queue: runs.QueueDepth | None
    lock_held: bool | None
    # Each target's own facts, by its name (the target formats them: Target.status_lines)
    facts: dict[str, dict[str, Any]] = {}  # noqa: RUF012 (never changed in place)
    missed: Missed | None = None  # firings with no run (schedgen.outcomes.missed)
    timezone: str | None = None  # the job's own zone: its times are shown in it
    policies: dict[str, Any] = {}  # noqa: RUF012 (output/policies.as_json)
    policy_words: tuple[str, ...] = ()  # output/policies.words: those not at their defaults
    paused: Pause | None = None  # schedgen pause: its firings are skipped
    user: str | None = None  # a system-scope job's account (None: a user-scope job)


class Status(NamedTuple):
    namespace: str
    jobs: tuple[JobStatus, ...]
    other: tuple[str, ...]  # drift not tied to a job in the config (orphans)
    warnings: tuple[str, ...] = ()  # e.g. lingering is off
    # (target, why): a scheduler that could not be read; its jobs' state is unknown
    unknown: tuple[tuple[str, str], ...] = ()
    host: str | None = None  # the host the jobs were chosen for (`hosts`)
    skipped: tuple[tuple[str, str], ...] = ()  # (job, why): in the file, not for that host
    # --host names another machine: only the desired side is known (its jobs, their
    # schedules and next runs); nothing installed there, and no run of it, is read here.
    elsewhere: bool = False

    @property
    def drifted(self) -> bool:
        return bool(self.other) or any(j.drift for j in self.jobs)
