"""The ownership record: what schedgen installed for a namespace, versioned.

One JSON file per namespace in the user's state dir. Each entry names an installed
artifact (a wrapper, a plist, the crontab block), the hash of the content schedgen
wrote, and the schedgen version that wrote it (its format: record_format.py). Nothing is ever deleted that is not
recorded here; a hash that no longer matches the disk means someone edited the file.
It also keeps each installed job's settings in jobs.toml terms (env values only as
digests), so `diff` can say what changed in those terms; a record written before
that has none, and `diff` then shows file diffs only.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from schedgen import __version__, paths
from schedgen.errors import RecordError, SystemOpError
from schedgen.machine.fs import atomic_write
from schedgen.machine.record_format import FORMAT, Installed, artifact_json, key, read

__all__ = ["FORMAT", "Installed", "Record", "apply_lock", "key", "load", "now", "record_path",
           "save"]

_SECOND: list[tuple[int, str]] = []  # the last second put in words


def now() -> str:
    """The time to the second, as the record writes it: put in words once a second (an
    entry per artifact asked for it, a strftime each)."""
    second = int(time.time())  # time, not datetime: an import less at start-up
    if not _SECOND or _SECOND[0][0] != second:
        _SECOND[:] = [(second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))]
    return _SECOND[0][1]


class Record:
    """A plain class, not a dataclass: defining one costs every command's start-up ~1 ms."""

    __slots__ = ("namespace", "entries", "config", "extra", "settings")

    def __init__(self, namespace: str, entries: dict[str, Installed] | None = None,
                 config: str = "", extra: tuple[tuple[str, Any], ...] = (),
                 settings: dict[str, dict[str, Any]] | None = None) -> None:
        self.namespace = namespace
        self.entries: dict[str, Installed] = {} if entries is None else entries
        self.config = config
        self.extra = extra  # top-level keys a newer minor version wrote
        # job -> its settings when last installed (plan/review.py); None: an older record
        self.settings = settings

    def _fields(self) -> tuple[object, ...]:
        return (self.namespace, self.entries, self.config, self.extra, self.settings)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return (f"Record(namespace={self.namespace!r}, entries={self.entries!r}, "
                f"config={self.config!r}, extra={self.extra!r}, settings={self.settings!r})")

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
    extra = dict(doc.extra)
    settings = extra.pop("jobs", None)
    if settings is not None and not (isinstance(settings, dict) and all(
            isinstance(v, dict) for v in settings.values())):
        settings = None  # unreadable: review falls back to file diffs
    return Record(namespace, {e.key: e for e in doc.artifacts}, doc.config,
                  tuple(extra.items()), settings)


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
            "jobs": dict(sorted((record.settings or {}).items())),
        }
        # The system record is readable by all (status and diff of system jobs as a user);
        # it holds env values only as digests.
        atomic_write(path, _layout(data), 0o644 if paths.system() else 0o600)
    except OSError as exc:
        raise SystemOpError(f"cannot write the ownership record {path}: {exc.strerror}") from None


def _dumps() -> Callable[[Any], str]:
    """json.dumps(value) with its default options, by the same C encoder made once: made
    per call (what json.dumps does) it was a fifth of laying out a record of 200 jobs."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without json's C part: json.dumps, as it does it
        return json.dumps
    encoder = json.JSONEncoder()
    try:  # json's own internal call, whose arguments a later Python may change
        encode = make({}, encoder.default, json.encoder.encode_basestring_ascii, None, ": ",
                      ", ", False, False, True)
        probe = {"é\n": [1, 2.5, None, True, "\x00"]}
        if "".join(encode(probe, 0)) != json.dumps(probe):
            return json.dumps
    except (TypeError, ValueError):
        return json.dumps

    def dumps(v: Any) -> str:
        if isinstance(v, str):  # as JSONEncoder.encode: a string directly
            return json.encoder.encode_basestring_ascii(v)
        return "".join(encode(v, 0))

    return dumps


def _layout(data: dict[str, Any]) -> str:
    """The record as JSON for people too: a key per line, each artifact and each job's
    settings on a line of its own. json.dumps(indent=...) would lay it out by its pure
    Python encoder, at several times the cost, which a record of thousands of artifacts
    paid on every apply; without indent it uses its C encoder."""
    dumps = _dumps()

    def value(v: Any) -> str:
        if isinstance(v, list) and v:
            return "[\n" + ",\n".join(f"    {dumps(x)}" for x in v) + "\n  ]"
        if isinstance(v, dict) and v:
            return "{\n" + ",\n".join(f"    {dumps(k)}: {dumps(x)}"
                                      for k, x in v.items()) + "\n  }"
        return dumps(v)

    return "{\n" + ",\n".join(f"  {dumps(k)}: {value(v)}" for k, v in data.items()) + "\n}\n"


TEST_LOCK = "SCHEDGEN_TEST_APPLY_LOCK"  # test seam: tests with fake crontabs lock apart


def lock_path() -> Path:
    """One apply lock per user, whatever HOME or XDG_STATE_HOME say: the crontab is per
    user, so applies with different state dirs must still take turns."""
    seam = os.environ.get(TEST_LOCK)
    if seam:
        return Path(seam)
    return Path("/tmp") / f"schedgen-{os.getuid()}" / "apply.lock"


def private_dir(path: Path) -> None:
    """Create `path` 0700, or accept it only if it is ours, a real folder and private."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        raise SystemOpError(f"cannot create the private folder {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise SystemOpError(f"{path} is not a private folder of this user (a symlink, someone "
                            "else's, or open to others); remove it and run the command again")


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass  # no reader, or no stdout: the wait goes on unsaid


@contextmanager
def apply_lock(on_wait: object = None) -> Iterator[None]:
    """Serialise apply/uninstall runs of this user (the crontab is shared by namespaces)."""
    path = lock_path()
    if os.environ.get(TEST_LOCK):
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        private_dir(path.parent)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise SystemOpError(f"cannot open the lock file {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if callable(on_wait):
                on_wait(f"waiting for another schedgen apply to finish ({path})")
                _flush_stdout()  # a pipe's lines go in blocks: this one must show while it waits
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
