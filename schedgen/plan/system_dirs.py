"""A system-scope job's folders, made by apply (as root) before its files are written.

The job file and the runtime are root's, in a folder only root may write (0755): the
job's user runs them but cannot replace them, which would run its own code as root's
job. What the runs write is the job user's: its log folder (<log_root>/<job>, with
the run records) and its lock folder (0700), in root-owned parents. With metrics_dir,
the runs write their .prom file in their log folder and metrics_dir has a link to it:
node_exporter reads one folder, which the account may not write (and must not be given:
it could then replace other jobs' files there).
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from schedgen import paths
from schedgen.config import metrics_names as metrics
from schedgen.config.model import Config, Job
from schedgen.errors import SystemOpError, UsageError
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext


def prepare(config: Config, plan: p.Plan, ctx: ApplyContext) -> None:
    wanted = {c.job for c in plan.changes if c.after is not None and c.job}
    wanted |= {j for c in plan.changes if c.after is not None for j in c.jobs}
    for job in config.jobs:
        if job.name in wanted and job.user:
            _job(job, ctx)
            if job.metrics_dir is not None:
                _metrics_link(job, config.namespace, ctx)


def _job(job: Job, ctx: ApplyContext) -> None:
    try:
        account = pwd.getpwnam(job.user or "")
    except KeyError:  # a dry run asks no root and no account first
        raise UsageError(f"no account named {job.user} on this host (`user` of job "
                         f"{job.name})") from None
    _root_dir(job.wrapper_dir, ctx)
    _root_dir(job.log_root, ctx)
    _root_dir(job.lock_dir.parent, ctx)
    _users_dir(job.log_dir, 0o755, account, ctx)
    _users_dir(job.lock_dir, 0o700, account, ctx)


def _metrics_link(job: Job, namespace: str, ctx: ApplyContext) -> None:
    """<metrics_dir>/schedgen_<ns>_<job>.prom, a link (root's) to the file the runs
    write in the job's log folder; that file made empty (valid, no series) until the
    first run, so node_exporter never meets a dangling link."""
    link, target = metrics.prom_path(job, namespace), metrics.written_path(job, namespace)
    assert link is not None and target is not None and job.metrics_dir is not None
    account = pwd.getpwnam(job.user or "")
    ctx.ops.create_as(target, 0o644, account.pw_uid, account.pw_gid)
    if not job.metrics_dir.is_dir():
        ctx.ops.mkdir(job.metrics_dir, 0o755)
        ctx.did("create", f"folder {job.metrics_dir} (root's, 0755)")
    try:
        if os.readlink(link) == str(target):
            return
    except FileNotFoundError:
        pass
    except OSError:  # not a link: a file a run wrote there before, or a folder
        if link.is_dir():
            raise SystemOpError(f"{link} is a folder: the metrics file of job {job.name} "
                                "cannot be linked there; nothing was installed") from None
    ctx.ops.symlink(link, target)
    ctx.did("create", f"link {link} -> {target} (the metrics file {job.user}'s runs write)")


def _root_dir(path: Path, ctx: ApplyContext) -> None:
    """Made root's 0755 when missing; an existing one another account could write to
    (its owner, or group/other write) is refused: that account could swap the files.
    So is one below a folder another account could write to: it could rename the
    whole folder away and put one of its own in its place."""
    _above(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        ctx.ops.mkdir(path, 0o755)
        ctx.did("create", f"folder {path} (root's, 0755)")
        return
    if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _others_write(path, st)


def _above(path: Path) -> None:
    up = paths.open_above(path)
    if up is not None:
        raise _others_write(up, os.stat(up))


def _others_write(path: Path, st: os.stat_result) -> SystemOpError:
    return SystemOpError(
        f"{path} is writable by others than root (owner uid {st.st_uid}, mode "
        f"{stat.S_IMODE(st.st_mode):04o}): a system job's files there could be replaced "
        f"by another account; nothing was installed. chown root {path} && chmod go-w "
        f"{path}, or set wrapper_dir/log_root/lock_dir elsewhere")


def _users_dir(path: Path, mode: int, account: pwd.struct_passwd, ctx: ApplyContext) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        ctx.ops.mkdir(path, mode)
        ctx.ops.chown(path, account.pw_uid, account.pw_gid)
        ctx.did("create", f"folder {path} ({account.pw_name}'s, {mode:04o})")
        return
    if st.st_uid != account.pw_uid:
        # the job changed accounts: what the old one's runs left is the new one's, or its
        # runs cannot write there (and the old account could still change it)
        ctx.ops.give_tree(path, st.st_uid, account.pw_uid, account.pw_gid)
        ctx.did("update", f"folder {path} and what is in it given to {account.pw_name}")
