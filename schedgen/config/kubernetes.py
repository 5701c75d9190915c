"""jobs.toml for target "kubernetes": the [kubernetes] table, and what cannot map to a CronJob.

Called by the loader (schedgen.config) with its checker, so every problem is reported
with the job and field, together with all the others.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from schedgen.config import values as f
from schedgen.config.model import Job, Kubernetes
from schedgen.schedule.kubernetes import kube_schedule

KEYS = ("image", "namespace", "env_secret", "service_account", "resources", "working_dir")
RESOURCE_KINDS = ("requests", "limits")
# A CronJob's name: a DNS label, at most 52 characters (its Jobs add an 11-character suffix).
CRONJOB_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,50}[a-z0-9])?")
DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?")
# cpu, memory, ephemeral-storage, hugepages-2Mi, example.com/gpu
RESOURCE_NAME = re.compile(r"(?:[a-z0-9.-]+/)?[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?")
QUANTITY = re.compile(r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|[numkMGTPE]|[KMGTPE]i)?")
IMAGE = re.compile(r"[^\s]+")


class Reports(Protocol):
    def add(self, where: str, message: str) -> None: ...


class Checker(Reports, Protocol):
    def parse(self, where: str, value: Any, parse: Any) -> Any: ...

    def table(self, where: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]: ...


def _name(pattern: re.Pattern[str], what: str) -> Any:
    return lambda v: f.matches(v, pattern, what)


def parse(ck: Checker, w: str, value: Any, needed: bool) -> Kubernetes | None:
    """[jobs.x.kubernetes]; `needed` when the job targets kubernetes (then image is required)."""
    raw = ck.table(f"{w}.kubernetes", value, KEYS)
    if "image" not in raw:
        if needed:
            ck.add(f"{w}.kubernetes.image", "missing (required for target kubernetes): the "
                                                "container image the job runs in")
        return None
    image = ck.parse(f"{w}.kubernetes.image", raw["image"],
                   _name(IMAGE, "container image (no spaces)"))
    ns = ck.parse(f"{w}.kubernetes.namespace", raw.get("namespace", "default"),
                _name(DNS_LABEL, "Kubernetes namespace (a-z, 0-9, '-', at most 63)"))
    secret = ck.parse(f"{w}.kubernetes.env_secret", raw["env_secret"],
                    _name(DNS_SUBDOMAIN, "Secret name")) if "env_secret" in raw else None
    account = ck.parse(f"{w}.kubernetes.service_account", raw["service_account"],
                     _name(DNS_SUBDOMAIN, "service account name")) if "service_account" in raw else None
    workdir = None
    if "working_dir" in raw:
        workdir = ck.parse(f"{w}.kubernetes.working_dir", raw["working_dir"], _container_path)
    resources = _resources(ck, f"{w}.kubernetes.resources", raw.get("resources", {}))
    if image is None or ns is None:
        return None
    return Kubernetes(image=image, namespace=ns, env_secret=secret, service_account=account,
                      resources=resources, working_dir=workdir)


def _container_path(value: Any) -> str:
    text = f.string(value)
    if not text.startswith("/") or "\0" in text or "\n" in text:
        raise ValueError(f"{text!r} must be an absolute path inside the image")
    return text


def _resources(ck: Checker, w: str, value: Any) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    out = []
    for kind, amounts in ck.table(w, value, RESOURCE_KINDS).items():
        if not isinstance(amounts, dict):
            ck.add(f"{w}.{kind}", f"expected a table like {{ cpu = \"500m\", memory = "
                                      f"\"256Mi\" }}, got {f.type_name(amounts)}")
            continue
        pairs = []
        for name, amount in amounts.items():
            where = f"{w}.{kind}.{name}"
            if not RESOURCE_NAME.fullmatch(name) or len(name) > 253:
                ck.add(where, f"{name!r} is not a resource name (like cpu, memory, "
                                  "example.com/gpu)")
                continue
            text = str(amount) if isinstance(amount, int | float) and not isinstance(amount, bool) \
                else amount
            if not isinstance(text, str) or not QUANTITY.fullmatch(text):
                ck.add(where, f"{amount!r} is not a Kubernetes quantity (like \"500m\", "
                                  "\"256Mi\", \"2\")")
                continue
            pairs.append((name, text))
        out.append((kind, tuple(pairs)))
    return tuple(out)


def unsent(job: Job) -> list[tuple[str, str]]:
    """Not a reason to leave a job out of `render --target kubernetes` (the CronJob is
    fine), but validate says it: nothing would ever send these."""
    out = []
    n = job.notify
    if n is not None and n.ping_url:
        out.append((".notify.ping_url", "target kubernetes: the pod runs the command without "
                                        "schedgen's wrapper, so nothing would ever ping; ping "
                                        "from the command itself, or keep this job on a "
                                        "machine target"))
    run_events = [e for e in (n.on if n is not None and n.channels() else ()) if e != "missed"]
    if run_events:
        out.append((".notify.on", f"target kubernetes: {', '.join(run_events)} would never be "
                                  "told: the pod runs the command without schedgen's wrapper, "
                                  "which sends the notify command, mail and webhook on this "
                                  "machine's targets"))
    return out


def unfit(job: Job) -> list[tuple[str, str]]:
    """Why the job cannot be a CronJob: (field under the job, message) each. validate and
    `render --target kubernetes` both ask here, so they never disagree."""
    why = "target kubernetes"
    out: list[tuple[str, str]] = []
    if not CRONJOB_NAME.fullmatch(job.name):
        out.append(("", f"{why}: {job.name!r} cannot name a CronJob: use a-z, 0-9 and '-', "
                        "ending with a letter or digit, at most 52 characters"))
    if job.queue is not None:
        out.append((".queue", f"{why}: a queue claims files from a folder on one machine, "
                              "and a CronJob's pods share no folder; keep this job on cron "
                              "or launchd"))
    if job.env_file is not None:
        out.append((".env_file", f"{why}: the env file is on this machine; put its variables "
                                 "in a Secret and name it in kubernetes.env_secret"))
    if job.lock is not None and job.lock.wait:
        out.append((".lock.wait", f"{why}: concurrencyPolicy Forbid skips a run while the "
                                  "last one is still running; it cannot wait for it"))
    args = [job.command] if isinstance(job.command, str) else list(job.command or ())
    if any("{artifact_dir}" in a for a in args):
        out.append((".command", f"{why}: {{artifact_dir}} is a run directory the wrapper "
                                "makes on this machine; a CronJob's pod has none"))
    schedule = job.schedule or ()
    if len(schedule) > 1:
        out.append((".schedule", f"{why}: a CronJob has one schedule, and this job has "
                                 f"{len(schedule)} expressions; split it into several jobs"))
    for entry in schedule[:1]:
        try:
            kube_schedule(entry)
        except ValueError as exc:
            out.append((".schedule", f"{why}: {exc}"))
    return out


def check_config(ck: Reports, namespace: str, jobs: list[Job], wanted: set[str]) -> None:
    """Checks across jobs: shared locks, and the namespace as a label value; `wanted`:
    the jobs that go to a cluster."""
    kube = [j for j in jobs if j.name in wanted]
    if not kube:
        return
    if not LABEL_VALUE.fullmatch(namespace) or len(namespace) > 63:
        ck.add("defaults.namespace", f"target kubernetes: {namespace!r} cannot be a label "
                                         "value (at most 63 characters, ending with a letter "
                                         "or digit)")
    by_lock: dict[str, list[str]] = {}
    for j in jobs:
        if j.lock is not None:
            by_lock.setdefault(j.lock.name, []).append(j.name)
    for j in kube:
        if j.lock is None:
            continue
        others = [n for n in by_lock[j.lock.name] if n != j.name]
        if others:
            ck.add(f"jobs.{j.name}.lock.name",
                       f"target kubernetes: lock {j.lock.name!r} is shared with "
                       f"{', '.join(others)}; concurrencyPolicy Forbid only keeps runs of one "
                       "CronJob apart, so nothing would stop them overlapping")
