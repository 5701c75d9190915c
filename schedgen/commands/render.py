"""`render --out DIR`: the desired state written as files, for review or another host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from schedgen import paths
from schedgen.commands import scopes
from schedgen.config.model import Config
from schedgen.config.select import load_here
from schedgen.errors import SchedgenError, SystemOpError
from schedgen.machine.fs import atomic_write
from schedgen.render.artifacts import Artifact, storing_compiled_templates
from schedgen.render.desired import desired
from schedgen.render.fit import for_targets


def render(config_path: Path, out: Path, targets: tuple[str, ...] | None,
           say: Callable[[str], None] | None = None, standalone: bool = False,
           host: str | None = None) -> list[Path]:
    """Write the desired state into `out`. With `targets`, render those targets for
    every job (a Linux user previews a Mac's plists); a job that cannot go there is
    named with the reason, and when no job can, nothing is written (exit 2).
    `host`: the jobs whose `hosts` match it (default: this machine's)."""
    config = load_here(config_path, host)
    for s in config.skipped:
        (say or print)(f"skipped: jobs.{s.job}: {s.why}")
    if not config.jobs:
        raise SchedgenError(f"nothing to render for host {config.host}: the `hosts` of "
                            "every job leave it out")
    if targets:
        config, why = for_targets(config, targets)
        if not config.jobs:
            raise SchedgenError(f"nothing to render for {', '.join(targets)}:\n"
                                + "\n".join(f"  {w}" for w in why))
        for w in why:
            (say or print)(f"skipped: {w}")

    with storing_compiled_templates():
        def scoped(part: Config) -> list[Artifact]:
            # a system job's files under system/: its wrappers and units are other files
            prefix = "system/" if paths.system() else ""
            return [a._replace(rel=prefix + a.rel) for a in desired(part, targets, standalone)]

        artifacts = [a for part in scopes.each(config, config.scopes, scoped) for a in part]
        for a in artifacts:
            a.content  # noqa: B018 -- rendered here, where compiled templates are kept
    if not artifacts:
        raise SchedgenError("nothing to render: every job is disabled (enabled = false)")
    written = []
    for a in artifacts:
        dest = out / a.rel
        try:
            atomic_write(dest, a.content, a.mode)
        except OSError as exc:
            raise SystemOpError(f"cannot write {dest}: {exc.strerror}") from None
        written.append(dest)
    return written
