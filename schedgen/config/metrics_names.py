"""Where a job's metrics file goes and how its labels are written (the job file carries
both, the wrapper writes the file, `schedgen metrics` reads and prints the same)."""

from __future__ import annotations

from pathlib import Path

from schedgen.config.model import Job


def label_value(v: str) -> str:
    """A label value as the exposition format quotes it: \\ " and newline escaped."""
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels(namespace: str, job: str) -> str:
    return f'namespace="{label_value(namespace)}",job="{label_value(job)}"'


def file_name(namespace: str, job: str) -> str:
    return f"schedgen_{namespace}_{job}.prom"


def prom_path(job: Job, namespace: str) -> Path | None:
    return job.metrics_dir / file_name(namespace, job.name) if job.metrics_dir else None
