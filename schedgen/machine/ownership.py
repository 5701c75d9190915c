"""The ownership record: what schedgen installed for a namespace, versioned.

One JSON file per namespace in the user's state dir. Each entry names an installed
artifact (a wrapper, a plist, the crontab block), the hash of the content schedgen
wrote, and the schedgen version that wrote it. Nothing is ever deleted that is not
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
from typing import NamedTuple

from schedgen import __version__, paths
from schedgen.errors import SchedgenError, SystemOpError
from schedgen.machine.fs import atomic_write

FORMAT = 1  # bump when the layout below changes; older readers refuse newer files


class Entry(NamedTuple):
    kind: str  # "wrapper" | "plist" | "cron"
    path: str | None  # None for the crontab block
    sha256: str
    job: str | None = None  # the job a wrapper or plist belongs to
    jobs: tuple[str, ...] = ()  # the jobs in the crontab block
    targets: tuple[str, ...] = ()  # the targets a wrapper serves
    mode: int | None = None
    schedgen_version: str = __version__
    installed_at: str = ""

    @property
    def key(self) -> str:
        return key(self.kind, self.path)


def key(kind: str, path: str | Path | None) -> str:
    return f"{kind}:{path}" if path is not None else kind


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Record:
    namespace: str
    entries: dict[str, Entry] = field(default_factory=dict)
    config: str = ""

    def get(self, k: str) -> Entry | None:
        return self.entries.get(k)

    def set(self, entry: Entry) -> None:
        self.entries[entry.key] = entry

    def drop(self, k: str) -> None:
        self.entries.pop(k, None)

    def of_kind(self, kind: str) -> list[Entry]:
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
        raise SchedgenError(f"{path}: cannot read the ownership record ({exc}); "
                            "move it away to let schedgen start a new one") from None
    fmt = data.get("format") if isinstance(data, dict) else None
    if not isinstance(fmt, int):
        raise SchedgenError(f"{path}: not a schedgen ownership record (no format number)")
    if fmt > FORMAT:
        raise SchedgenError(
            f"{path}: written by schedgen {data.get('schedgen_version', '?')} in record format "
            f"{fmt}; this schedgen ({__version__}) reads format {FORMAT}. Upgrade schedgen.")
    entries = {}
    for raw in data.get("artifacts", []):
        raw = {**raw, "jobs": tuple(raw.get("jobs", ())), "targets": tuple(raw.get("targets", ()))}
        e = Entry(**raw)
        entries[e.key] = e
    return Record(namespace, entries, data.get("config", ""))


def save(record: Record) -> None:
    """Write the record atomically; an empty record removes the file."""
    path = record_path(record.namespace)
    try:
        if not record.entries:
            path.unlink(missing_ok=True)
            return
        data = {
            "format": FORMAT,
            "schedgen_version": __version__,
            "namespace": record.namespace,
            "config": record.config,
            "updated_at": now(),
            "artifacts": [e._asdict() for e in sorted(record.entries.values(), key=lambda e: e.key)],
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
