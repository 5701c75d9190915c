"""The ownership record: what schedgen installed for a namespace, versioned.

One JSON file per namespace in the user's state dir. Each entry names an installed
artifact (a wrapper, a plist, the crontab block), the hash of the content schedgen
wrote, and the schedgen version that wrote it (its format: record_format.py). Nothing is ever deleted that is not
recorded here; a hash that no longer matches the disk means someone edited the file.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedgen import __version__, paths
from schedgen.errors import RecordError, SystemOpError
from schedgen.machine.fs import atomic_write
from schedgen.machine.record_format import FORMAT, Installed, artifact_json, key, read

__all__ = ["FORMAT", "Installed", "Record", "apply_lock", "key", "load", "now", "record_path",
           "save"]

def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Record:
    namespace: str
    entries: dict[str, Installed] = field(default_factory=dict)
    config: str = ""
    extra: tuple[tuple[str, Any], ...] = ()  # top-level keys a newer minor version wrote

    def get(self, k: str) -> Installed | None:
        return self.entries.get(k)

    def set(self, entry: Installed) -> None:
        self.entries[entry.key] = entry

    def drop(self, k: str) -> None:
        self.entries.pop(k, None)

    def of_kind(self, kind: str) -> list[Installed]:
        return [e for e in self.entries.values() if e.kind == kind]


def record_path(namespace: str) -> Path:
    return paths.state_dir() / "installed" / f"{namespace}.json"


def load(namespace: str) -> Record:
    path = record_path(namespace)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Record(namespace)
    except (OSError, ValueError) as exc:
        raise RecordError(f"{path}: cannot read the ownership record ({exc}); "
                          "move it away to let schedgen start a new one") from None
    doc = read(data, path, namespace)
    return Record(namespace, {e.key: e for e in doc.artifacts}, doc.config, doc.extra)


def save(record: Record) -> None:
    """Write the record atomically; an empty record removes the file."""
    path = record_path(record.namespace)
    try:
        if not record.entries:
            path.unlink(missing_ok=True)
            return
        data = {
            **dict(record.extra),
            "format": FORMAT,
            "schedgen_version": __version__,
            "namespace": record.namespace,
            "config": record.config,
            "updated_at": now(),
            "artifacts": [artifact_json(e)
                          for e in sorted(record.entries.values(), key=lambda e: e.key)],
        }
        atomic_write(path, json.dumps(data, indent=2) + "\n", 0o600)
    except OSError as exc:
        raise SystemOpError(f"cannot write the ownership record {path}: {exc.strerror}") from None


@contextmanager
def apply_lock(on_wait: object = None) -> Iterator[None]:
    """Serialise apply/uninstall runs on this machine (the crontab is shared by namespaces)."""
    path = paths.state_dir() / "apply.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise SystemOpError(f"cannot open the lock file {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if callable(on_wait):
                on_wait(f"waiting for another schedgen apply to finish ({path})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
