"""A config's two scopes, each worked on by itself: user (the default) and system.

A system-scope job is the machine's: its files are in the system folders (paths.py),
its ownership record is the system one, and only root may install it. Every command
that reads or changes what is installed goes through `each`, which gives the config's
jobs of one scope at a time with that scope's folders in force.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from schedgen import paths
from schedgen.config.model import Config, Job
from schedgen.errors import SchedgenError, UsageError
from schedgen.machine import ownership
from schedgen.plan import selected

T = TypeVar("T")


def recorded(namespace: str, scope: str) -> bool:
    """Has something been installed for this namespace in that scope?"""
    with paths.in_scope(scope):
        return ownership.record_path(namespace).exists()


def left(config_path: Path, namespace: str, scope: str) -> bool:
    """Did this jobs.toml install something of the namespace in that scope? A system
    install of the namespace from another file (root's /etc one, while a user keeps
    jobs of the same namespace name for themselves) is that file's, not this one's."""
    with paths.in_scope(scope):
        if not ownership.record_path(namespace).exists():
            return False
        try:
            made_by = ownership.load(namespace).config
        except SchedgenError:
            return True  # unreadable: the command working on it says so
    return not made_by or made_by == str(config_path)


def of(config: Config) -> tuple[str, ...]:
    """The scopes to work on: the config's, and a scope it left that still has a record
    it wrote (its jobs are removed there). A config of user-scope jobs only, with nothing
    of it installed system-wide, is the user scope alone, as before scopes."""
    found = set(config.scopes) or {paths.USER}
    if paths.SYSTEM not in found and left(config.path, config.namespace, paths.SYSTEM):
        found.add(paths.SYSTEM)
    return tuple(s for s in paths.SCOPES if s in found)


def each(config: Config, scopes: tuple[str, ...] | None,
         work: Callable[[Config], T]) -> list[T]:
    """`work` on the config's jobs of each scope in turn, with that scope's folders in
    force while it runs (a callback, not a generator: a generator left on an exception
    would keep the scope set for whatever runs next)."""
    out = []
    for scope in scopes or of(config):
        with paths.in_scope(scope):
            out.append(work(config.scoped(scope)))
    return out


class Records:
    """Each scope's ownership record of a namespace, read when first asked for."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._read: dict[str, ownership.Record] = {}

    def of(self, job: Job) -> ownership.Record:
        """The record the job is installed in (its scope's)."""
        if job.scope not in self._read:
            with paths.in_scope(job.scope):
                self._read[job.scope] = ownership.load(self.namespace)
        return self._read[job.scope]


def check_selected(config: Config, scopes: tuple[str, ...],
                   targets: tuple[str, ...] | None) -> None:
    """`--target T` names a target something of the config goes to, in either scope."""
    if not targets:
        return
    entries: dict[str, ownership.Installed] = {}
    for scope in scopes:
        with paths.in_scope(scope):
            record = ownership.load(config.namespace)
        entries.update({f"{scope}:{k}": e for k, e in record.entries.items()})
    selected.check(config, ownership.Record(config.namespace, entries), targets)


def require_root(config: Config, scopes: tuple[str, ...], command: str) -> None:
    """Refuse, before anything is touched, to change system scope as anyone but root, or
    for an account this host does not have."""
    if paths.SYSTEM not in scopes:
        return
    jobs = [j for j in config.jobs if j.scope == paths.SYSTEM]
    if os.geteuid() != 0:
        names = ", ".join(j.name for j in jobs) or f"namespace {config.namespace}"
        raise UsageError(
            f"{command}: system-scope jobs ({names}) are installed for the whole machine "
            "(/etc/cron.d, /Library/LaunchDaemons, /etc/systemd/system) and only root may do "
            f"that; nothing was changed. Run it as root: sudo schedgen {command} -c "
            f"{config.path}")
    missing = sorted({j.user for j in jobs if j.user and not _account(j.user)})
    if missing:
        raise UsageError(f"{command}: no account named {', '.join(missing)} on this host "
                         "(`user` of a system-scope job); nothing was changed. Create it, or "
                         "name an account this host has.")


def _account(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
