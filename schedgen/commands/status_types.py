"""What `status` reports: plain records, shared by the status command and its target parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedgen.outcomes.missed import Missed
from schedgen.records import runs


@dataclass(frozen=True)
class JobStatus:
    job: str
    enabled: bool
    targets: tuple[str, ...]
    schedule: str
    readable: str  # the schedule in words (schedgen.schedule.describe)
    installed: bool  # every artifact the job needs is there
    drift: tuple[str, ...]  # how the machine differs from the config for this job
    last_run: dict[str, Any] | None
    next_run: str | None  # ISO 8601, local time
    next_notes: tuple[str, ...]
    queue: runs.QueueDepth | None
    lock_held: bool | None
    # Each target's own facts, by its name (the target formats them: Target.status_lines)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    missed: Missed | None = None  # firings with no run (schedgen.outcomes.missed)


@dataclass(frozen=True)
class Status:
    namespace: str
    jobs: tuple[JobStatus, ...]
    other: tuple[str, ...]  # drift not tied to a job in the config (orphans)
    warnings: tuple[str, ...] = ()  # e.g. lingering is off, systemctl cannot be reached

    @property
    def drifted(self) -> bool:
        return bool(self.other) or any(j.drift for j in self.jobs)
