"""A job's run policies (retries, overlap, queue failures) as `status` shows them: only
what differs from what a job does when it says nothing."""

from __future__ import annotations

from typing import Any

from schedgen.config.defaults import RETRY_DELAY_CAP
from schedgen.config.model import Job
from schedgen.units import format_duration


def as_json(job: Job) -> dict[str, Any]:
    retries = job.retries if job.queue is None else 0  # a queue's items: max_attempts
    return {
        "retries": retries,
        "retry_delay": job.retry_delay if retries else None,
        "backoff": job.backoff if retries else None,
        "on_busy": job.lock.on_busy if job.lock else None,
        "stop_on_failure": job.queue.stop_on_failure if job.queue else None,
    }


def words(job: Job) -> tuple[str, ...]:
    out = []
    if job.retries and job.queue is None:
        grows = f", then x{job.backoff:g} each (at most {format_duration(RETRY_DELAY_CAP)})" \
            if job.backoff != 1 else ""
        out.append(f"retries {job.retries}, {format_duration(job.retry_delay)} apart{grows}")
    if job.lock is not None and job.lock.on_busy == "replace":
        out.append("on busy: replace the running run")
    if job.queue is not None and job.queue.stop_on_failure:
        out.append("queue: stop at the first failing item")
    return tuple(out)
