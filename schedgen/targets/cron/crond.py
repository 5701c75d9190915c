"""System scope: one whole file per namespace in /etc/cron.d, each line with its user.

cron reads every file there as root and runs each line as the user it names. The file
is root's, mode 0644 (cron ignores a group- or world-writable one), written atomically
(its temp name has dots, which cron skips), and named so that cron's run-parts rules
take it: letters, digits, `_` and `-` only (Debian's cron skips a name with a dot).
Owned whole by schedgen: the marker in its header and the ownership record.
"""

from __future__ import annotations

import re

from schedgen import paths
from schedgen.config.model import Config, Job
from schedgen.errors import UsageError
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import Artifact
from schedgen.targets.base import plan_files, remove_file, settle, write_file

KIND = "crond"
# cron's run-parts name rule (Debian cron(8)): a file whose name has anything else is skipped.
RUN_PARTS_NAME = re.compile(r"[A-Za-z0-9_-]+")


def file_name(namespace: str) -> str:
    name = f"schedgen-{namespace}"
    if not RUN_PARTS_NAME.fullmatch(name):  # a namespace is [A-Za-z0-9_-]: cannot happen
        raise UsageError(f"namespace {namespace!r}: cron would skip a file named {name!r}")
    return name


def artifact(config: Config, jobs: tuple[Job, ...]) -> Artifact:
    from schedgen.render import source
    from schedgen.targets.cron import render

    name = file_name(config.namespace)
    path = paths.system_path("/etc/cron.d") / name
    return Artifact(KIND, None, f"cron.d/{name}", path,
                    lambda: render.crond_file(config, jobs), 0o644,
                    source=source.of(KIND, path, config, jobs))


class CrondTarget:
    name = "cron"

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "cron" not in ctx.selected:
            return []
        jobs = tuple(j.name for j in ctx.config.for_target("cron")) if ctx.config else ()

        def targets_of(a: Artifact) -> tuple[str, ...]:
            return ("cron",)

        return [c._replace(jobs=jobs or c.jobs)
                for c in plan_files(self.name, KIND, ctx.artifacts(KIND), ctx, targets_of)]

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        if settle(ctx, change):
            return
        if change.action == p.DELETE:
            remove_file(ctx, change)
        else:
            write_file(ctx, change)
