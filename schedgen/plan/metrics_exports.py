"""The metrics file of a job that no longer runs here (removed from jobs.toml, disabled,
moved to another host, uninstalled), or whose metrics_dir moved, taken out of the old
metrics_dir: node_exporter would otherwise export its last values for ever, and an
alert on its last success would fire for a job that is gone.

Which jobs: those whose settings the record kept with a metrics_dir, and that after
the apply have no settings any more (nothing of theirs is installed) or another
metrics_dir. What is removed: only a file that schedgen's runs wrote (its series carry
the job's labels) or the link apply made for a system job (it points at the file in the
job's log folder). The job's log folder, with its counters, stays, like its runs.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedgen.config import metrics_names as metrics
from schedgen.plan import review
from schedgen.plan.changes import UNCHANGED

if TYPE_CHECKING:
    from schedgen.config.model import Config
    from schedgen.machine.ownership import Record
    from schedgen.plan.changes import Plan

_HEAD = 65536  # bytes read to find the job's labels: the file is a few kB
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def stale(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
          ) -> list[tuple[str, Mapping[str, Any]]]:
    """(job, its settings before) for each job whose kept metrics_dir no longer holds."""
    out = []
    for name, old in (before or {}).items():
        folder = old.get("metrics_dir") if isinstance(old, Mapping) else None
        if not isinstance(folder, str) or not folder:
            continue
        new = (after or {}).get(name)
        if (isinstance(new, Mapping) and new.get("metrics_dir") == folder
                and _scope(new) == _scope(old)):
            continue
        out.append((name, old))
    return out


def _scope(kept: Mapping[str, Any]) -> Any:
    # Settings kept before jobs had a scope have none: they were the user's.
    return kept.get("scope", "user")


def would_remove(config: Config, plan: Plan, record: Record) -> list[str]:
    """What `apply` would remove (diff's view): nothing to work out for a plan that changes
    nothing or a record that kept no metrics_dir, the usual case. (A plan only forgetting
    files already gone is in sync, yet apply forgets their jobs' settings too.)"""
    kept = record.settings or {}
    if (all(c.action == UNCHANGED for c in plan.changes)
            or not any(isinstance(s, Mapping) and s.get("metrics_dir") for s in kept.values())):
        return []
    out: list[str] = []
    remove(record.namespace, kept, review.settings_after(config, plan, record),
           lambda _verb, what: out.append(what), lambda _w: None, dry_run=True)
    return out


def remove(namespace: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
           did: Callable[[str, str], None], warn: Callable[[str], None], *,
           dry_run: bool = False) -> None:
    for name, old in stale(before, after):
        path = Path(old["metrics_dir"]) / metrics.file_name(namespace, name)
        if _same_folder(old, (after or {}).get(name)):
            continue  # the same folder by another name: the job still writes this file
        found = _ours(path, namespace, name, old)
        if found is None:
            continue
        try:
            # What was checked is what goes: not a file put in its place meanwhile (the
            # remaining window, from here to the unlink, is a name swap, never a read).
            st = path.lstat()
            if (st.st_dev, st.st_ino) != found:
                continue
            if not dry_run:
                path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            warn(f"could not remove {path}, the metrics file of job {name} that no longer "
                 f"runs here: {exc.strerror}; node_exporter still exports it")
            continue
        did("remove", f"metrics file {path} (job {name} no longer writes it)")


def _same_folder(old: Mapping[str, Any], new: Any) -> bool:
    folder = new.get("metrics_dir") if isinstance(new, Mapping) else None
    if not isinstance(folder, str) or not folder or _scope(new) != _scope(old):
        return False
    try:
        return os.path.samefile(old["metrics_dir"], folder)
    except OSError:
        return False


def _owners(old: Mapping[str, Any]) -> set[int]:
    """Who may have made the file: this user's runs; for a system job, its account's runs
    (a file from before the link) or root (apply's link)."""
    if _scope(old) != "system":
        return {os.geteuid()}
    owners = {0}
    account = old.get("user")
    if isinstance(account, str) and account:
        try:
            owners.add(pwd.getpwnam(account).pw_uid)
        except KeyError:
            pass
    return owners


def _ours(path: Path, namespace: str, name: str, old: Mapping[str, Any]
          ) -> tuple[int, int] | None:
    """(device, inode) of the file if it is the job's, else None. metrics_dir may be
    shared with other accounts: what is there is looked at without following a link,
    without waiting on a FIFO, and only if one of the job's owners made it."""
    try:
        st = path.lstat()
    except OSError:
        return None
    if st.st_uid not in _owners(old):
        return None
    if stat.S_ISLNK(st.st_mode):  # a system job's: apply's link to the file in its log folder
        log_root = old.get("log_root")  # the job's log folder is log_root/<job>
        if not isinstance(log_root, str):
            return None
        try:
            target = os.readlink(path)
        except OSError:
            return None
        ok = target == str(Path(log_root) / name / metrics.file_name(namespace, name))
        return (st.st_dev, st.st_ino) if ok else None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0 or st.st_uid not in _owners(old):
            return None
        head = os.read(fd, _HEAD)
    except OSError:
        return None
    finally:
        os.close(fd)
    mine = ("{" + metrics.labels(namespace, name)).encode("utf-8", "surrogateescape")
    return (st.st_dev, st.st_ino) if mine in head else None
