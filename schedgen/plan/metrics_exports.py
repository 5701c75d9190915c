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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from schedgen.config import metrics_names as metrics

Settings = Mapping[str, Any] | None
_HEAD = 65536  # bytes read to find the job's labels: the file is a few kB


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


def remove(namespace: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
           did: Callable[[str, str], None], warn: Callable[[str], None]) -> None:
    for name, old in stale(before, after):
        path = Path(old["metrics_dir"]) / metrics.file_name(namespace, name)
        if not _ours(path, namespace, name, old):
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            warn(f"could not remove {path}, the metrics file of job {name} that no longer "
                 f"runs here: {exc.strerror}; node_exporter still exports it")
            continue
        did("remove", f"metrics file {path} (job {name} no longer writes it)")


def _ours(path: Path, namespace: str, name: str, old: Mapping[str, Any]) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    if os.path.islink(path):  # a system job's: apply's link to the file in its log folder
        log_root = old.get("log_root")  # the job's log folder is log_root/<job>
        if not isinstance(log_root, str):
            return False
        try:
            return os.readlink(path) == str(Path(log_root) / name
                                            / metrics.file_name(namespace, name))
        except OSError:
            return False
    if not path.is_file() or st.st_size == 0:
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return False
    return ("{" + metrics.labels(namespace, name)).encode("utf-8", "surrogateescape") in head
