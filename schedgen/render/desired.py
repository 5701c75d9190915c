"""Every artifact a config wants, target by target: the one place that lists them."""

from __future__ import annotations

from pathlib import Path

from schedgen.config.model import Config, Job
from schedgen.render import artifacts, source
from schedgen.targets import registry


def desired(config: Config, targets: tuple[str, ...] | None = None,
            standalone: bool = False) -> list[artifacts.Artifact]:
    """Every artifact the config wants for the given targets (default: all it names):
    the runtime once per wrapper_dir (before the job files that source it), the job
    files, then each target's own (plists, the crontab block, units, CronJobs) in the
    registry's order. standalone: job files with the runtime inlined."""
    wanted = targets or registry.names()
    out: list[artifacts.Artifact] = []
    wrapped: set[str] = set()
    runtimes: dict[Path, artifacts.Artifact] = {}
    # Per wrapper_dir, its runtime's path (most jobs share one folder: a Path made per job
    # was most of this loop's own time).
    runtime_at: dict[Path, Path] = {}
    for name in registry.names():
        # A target's code is loaded only when a job names it (start-up time).
        if name not in wanted or not any(name in j.targets for j in config.jobs):
            continue
        target = registry.get(name)
        jobs = (tuple(j for j in config.jobs if name in j.targets) if target.keeps_disabled
                else config.for_target(name))
        for job in jobs if target.local else ():
            if job.name in wrapped:
                continue
            wrapped.add(job.name)
            if not standalone:
                rt = runtime_at.get(job.wrapper_dir)
                if rt is None:
                    rt = runtime_at[job.wrapper_dir] = artifacts.runtime_path(job, config)
                if rt not in runtimes:
                    runtimes[rt] = artifacts.Artifact("runtime", None, f"wrappers/{rt.name}",
                                                      rt, artifacts.runtime_text, 0o644,
                                                      source.of("runtime", rt, config, ()))
                if artifacts.notify_settings(job) is not None:
                    nf = artifacts.notify_path(job, config)
                    if nf not in runtimes:
                        runtimes[nf] = artifacts.Artifact(
                            "runtime", None, f"wrappers/{nf.name}", nf, artifacts.notify_text,
                            0o644, source.of("runtime", nf, config, ()))
            # 0700: a job file holds the job's env values and its ping URL, which
            # other users of the machine must not read; only its owner runs it. A
            # system job's is root's and run by its user: 0755 (its secrets belong in
            # an env_file that user owns).
            wp = job.wrapper_path  # a new Path each time it is asked for
            out.append(artifacts.Artifact(
                "wrapper", job.name, f"wrappers/{job.name}.sh", wp,
                _wrapper(job, config, standalone), 0o755 if job.user else 0o700,
                None if standalone else source.of("wrapper", wp, config, (job,))))
        out += target.render(config, jobs)
    return [*runtimes.values(), *out]


def _wrapper(job: Job, config: Config, standalone: bool) -> artifacts.Render:
    """The job file, rendered when first asked for (looked up at that time, so a test can
    count renders)."""
    return lambda: artifacts.wrapper(job, config, standalone)
