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
    """Where node_exporter finds the job's file."""
    return job.metrics_dir / file_name(namespace, job.name) if job.metrics_dir else None


def written_path(job: Job, namespace: str) -> Path | None:
    """Where the job's runs write it. A system job's runs, as its account, may not write
    node_exporter's folder: they write into their own log folder, and apply links the
    file there from metrics_dir (plan/system_dirs.py)."""
    if job.metrics_dir is None:
        return None
    if job.scope == "system":
        return job.log_dir / file_name(namespace, job.name)
    return prom_path(job, namespace)
