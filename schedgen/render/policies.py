"""A job's run policies as the wrapper reads them: the start delay (random_delay).

A stable delay is worked out here, at render time, from the namespace, the job and the
host: the same on every run and every apply, different between jobs, and with no
$RANDOM in the wrapper (bash 3.2's is a weak generator). A fresh one is the wrapper's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedgen.config.model import Job
from schedgen.config.select import this_host
from schedgen.sha import sha256

if TYPE_CHECKING:  # datetime is not imported by apply's start-up for this
    from datetime import timedelta


def host() -> str:
    """The machine's name as `hosts` sees it (SCHEDGEN_HOST, else the short host name)."""
    return this_host()


def stable_offset(namespace: str, job: str, bound: int, on: str | None = None) -> int:
    """Seconds in [0, bound): one offset per namespace, job and host."""
    if bound <= 0:
        return 0
    digest = sha256(f"{namespace}\0{job}\0{on or host()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % bound


def settings(job: Job, namespace: str) -> str:
    """The job file's policy line ("" for a job without a start delay)."""
    if not job.random_delay:
        return ""
    if job.random_delay_stable:
        return f"sg_policy=1 sg_delay={stable_offset(namespace, job.name, job.random_delay)} sg_delay_max=0"
    return f"sg_policy=1 sg_delay=0 sg_delay_max={job.random_delay - 1}"


def window(job: Job, namespace: str) -> tuple[timedelta, timedelta] | None:
    """When a run starts after its firing: (earliest, latest); None without a delay. (A
    scheduler with a delay of its own picks its own stable offset: docs/policies.md.)"""
    from datetime import timedelta

    if not job.random_delay:
        return None
    if job.random_delay_stable:
        at = timedelta(seconds=stable_offset(namespace, job.name, job.random_delay))
        return at, at
    return timedelta(0), timedelta(seconds=job.random_delay)
