"""A job as a Kubernetes CronJob (target "kubernetes", docs/kubernetes.md).

One CronJob per job, named after it, labelled so schedgen can find (and only ever
prune) its own. There is no wrapper in the pod: what the wrapper does on a machine
maps to the CronJob's own fields, and what does not map was refused by validate
(schedgen.kube_config).
"""

from __future__ import annotations

from typing import Any

from schedgen.config.model import Config, Job
from schedgen.machine import pause
from schedgen.render import yamlout
from schedgen.schedule.describe import describe_entries
from schedgen.schedule.kubernetes import kube_schedule

MANAGED_BY = "app.kubernetes.io/managed-by"
NAMESPACE_LABEL = "schedgen/namespace"
JOB_LABEL = "schedgen/job"
# Which machine applied the CronJob (schedgen.targets.kubernetes.cronjobs.install_id): one cluster,
# several machines with one namespace, and each removes only what it applied itself.
INSTALL_LABEL = "schedgen/install"
API_VERSION = "batch/v1"
KIND = "CronJob"
# The wrapper's placeholders that have a meaning in a pod, as Kubernetes variable references.
_PLACEHOLDERS = {"{run_id}": "$(SCHEDGEN_RUN_ID)", "{job}": "$(SCHEDGEN_JOB)"}


def labels(namespace: str, job: str | None = None) -> dict[str, str]:
    out = {MANAGED_BY: "schedgen", NAMESPACE_LABEL: namespace}
    if job is not None:
        out[JOB_LABEL] = job
    return out


def selector(namespace: str) -> str:
    """The label selector for everything schedgen applied for `namespace`."""
    return ",".join(f"{k}={v}" for k, v in labels(namespace).items())


def job_zone(job: Job) -> str | None:
    """The job's IANA time zone, once jobs.toml has one (docs/design.md, "Time zones"); None: the cluster's."""
    zone: object = job.timezone
    name = getattr(zone, "key", zone)  # a ZoneInfo or its IANA name
    return name if isinstance(name, str) and name else None


def k8s_arg(arg: str) -> str:
    """One argv element for a container's command.

    Kubernetes expands `$(VAR)` in command and reduces `$$` to `$`, so every `$` is
    doubled (the argument arrives as written) and the placeholders become references
    to the variables set below.
    """
    text = arg.replace("$", "$$")
    for placeholder, ref in _PLACEHOLDERS.items():
        text = text.replace(placeholder, ref)
    return text


def command(job: Job) -> list[str]:
    if isinstance(job.command, str):
        return ["bash", "-c", k8s_arg(job.command)]
    return [k8s_arg(a) for a in job.command]


def cronjob(job: Job, namespace: str, zone: str | None = None,
            install: str | None = None, paused: bool = False) -> dict[str, Any]:
    """The manifest as a dict, keys in the order they are written."""
    k = job.kubernetes
    assert k is not None, job.name  # validate requires [kubernetes] for this target
    own = labels(namespace, job.name)
    container: dict[str, Any] = {"name": job.name, "image": k.image, "command": command(job)}
    if k.working_dir:
        container["workingDir"] = k.working_dir
    container["env"] = [
        {"name": "SCHEDGEN_JOB", "value": job.name},
        # The pod's name: unique per run, as the wrapper's run ID is.
        {"name": "SCHEDGEN_RUN_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        # Values are expanded like command (`$(VAR)`, `$$`), so they get the same escaping.
        *({"name": n, "value": v.replace("$", "$$")} for n, v in job.env),
    ]
    if k.env_secret:
        container["envFrom"] = [{"secretRef": {"name": k.env_secret}}]
    if k.resources:
        container["resources"] = {kind: dict(amounts) for kind, amounts in k.resources}
    pod: dict[str, Any] = {"restartPolicy": "Never"}
    if k.service_account:
        pod["serviceAccountName"] = k.service_account
    pod["containers"] = [container]
    job_spec: dict[str, Any] = {"backoffLimit": 0}  # a failed run is not retried, as on cron
    if job.timeout:
        job_spec["activeDeadlineSeconds"] = job.timeout
    job_spec["template"] = {"metadata": {"labels": own}, "spec": pod}
    meta: dict[str, Any] = {"name": job.name, "namespace": k.namespace,
                            "labels": {**own, INSTALL_LABEL: install} if install else own}
    if job.description:
        meta["annotations"] = {"schedgen/description": job.description}
    spec: dict[str, Any] = {"schedule": kube_schedule(job.schedule[0])}
    if zone:
        spec["timeZone"] = zone
    spec.update({
        "concurrencyPolicy": "Forbid" if job.lock is not None else "Allow",
        # A start more than max_lateness after its firing is not made (docs/policies.md).
        "startingDeadlineSeconds": job.max_lateness,
        "suspend": not job.enabled or paused,
        "successfulJobsHistoryLimit": job.logs.keep_runs,
        "failedJobsHistoryLimit": job.logs.keep_runs,
        "jobTemplate": {"metadata": {"labels": own}, "spec": job_spec},
    })
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": spec}


def manifest(job: Job, config: Config, marker: str, install: str | None = None) -> str:
    """The YAML file: a header saying what wrote it (with the marker), then the CronJob.
    `install`: the applying machine's ID (apply labels with it; `render --out` does not,
    its files are for anyone)."""
    zone = job_zone(job)
    paused = pause.paused(config.namespace, job.name) is not None  # schedgen pause
    data = cronjob(job, config.namespace, zone, install, paused)
    words = describe_entries(job.schedule) + (f" ({zone})" if zone else "")
    head = [
        f"# Generated by schedgen from {config.path} (namespace {config.namespace}). {marker}",
        "# Do not edit: change jobs.toml and run `schedgen apply`.",
        f"# {job.schedule[0].text}: {words}".replace("\n", " "),
    ]
    return "\n".join(head) + "\n" + yamlout.dump(data)


def jobs(config: Config) -> tuple[Job, ...]:
    """Jobs that want a CronJob: disabled ones too (they become suspended)."""
    return tuple(j for j in config.jobs if "kubernetes" in j.targets)
