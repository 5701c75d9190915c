"""Every artifact a config wants, target by target: the one place that lists them."""

from __future__ import annotations

from pathlib import Path

from schedgen.config.defaults import TARGETS
from schedgen.config.model import Config
from schedgen.paths import launch_agents_dir
from schedgen.render import artifacts

LOCAL_TARGETS = tuple(t for t in TARGETS if t != "kubernetes")


def desired(config: Config, targets: tuple[str, ...] | None = None,
            standalone: bool = False) -> list[artifacts.Artifact]:
    """Every artifact the config wants for the given targets (default: all it names):
    the runtime once per wrapper_dir (before the job files that source it), the job
    files, plists, units, the crontab block, CronJobs. standalone: job files with the
    runtime inlined."""
    wanted = targets or TARGETS
    out: list[artifacts.Artifact] = []
    wrapped: set[str] = set()
    runtimes: dict[Path, artifacts.Artifact] = {}
    for target in LOCAL_TARGETS:  # the targets whose jobs run through a wrapper here
        if target not in wanted:
            continue
        jobs = config.for_target(target)
        for job in jobs:
            if job.name not in wrapped:
                wrapped.add(job.name)
                rt = artifacts.runtime_path(job, config)
                if rt not in runtimes and not standalone:
                    runtimes[rt] = artifacts.Artifact("runtime", None, f"wrappers/{rt.name}", rt,
                                                      artifacts.runtime_text(), 0o644)
                nf = artifacts.notify_path(job, config)
                if (nf not in runtimes and not standalone
                        and artifacts.notify_settings(job) is not None):
                    runtimes[nf] = artifacts.Artifact("runtime", None, f"wrappers/{nf.name}", nf,
                                                      artifacts.notify_text(), 0o644)
                # 0700: a job file holds the job's env values and its ping URL, which
                # other users of the machine must not read; only its owner runs it.
                out.append(artifacts.Artifact("wrapper", job.name, f"wrappers/{job.name}.sh",
                                              job.wrapper_path,
                                              artifacts.wrapper(job, config, standalone), 0o700))
            if target == "launchd":
                out.append(artifacts.Artifact("plist", job.name, f"launchd/{job.label}.plist",
                                              launch_agents_dir() / f"{job.label}.plist",
                                              artifacts.plist(job, config)))
            if target == "systemd":
                # A target's rendering loaded only when a job uses it
                # (tests/test_layout.py: LAZY_EDGES).
                from schedgen.render.systemd_units import artifacts as systemd_units

                out += systemd_units(job, config)
        if target == "cron" and jobs:
            out.append(artifacts.Artifact("cron", None, "cron/crontab", None,
                                          artifacts.cron_block(config, jobs)))
    if "kubernetes" in wanted and any("kubernetes" in j.targets for j in config.jobs):
        from schedgen.render import kubernetes as kube

        out += [artifacts.Artifact("cronjob", j.name, f"kubernetes/{j.name}.yaml", None,
                                   kube.manifest(j, config, artifacts.MARKER))
                for j in kube.jobs(config)]
    return [*runtimes.values(), *out]
