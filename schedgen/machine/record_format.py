"""The ownership record on disk, read key by key; never `Installed(**raw)`.

Each known format has its reader. A record from a newer schedgen is refused as a
whole (its meaning may have changed), but within a known format an unknown key,
as a newer minor version could add, is kept and written back unchanged. Every
problem is reported at once, with where it is (`artifacts[2].sha256`).
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from schedgen import __version__
from schedgen.errors import RecordError
from schedgen.targets import registry

FORMAT = 1  # bump when the layout changes; older readers refuse newer files
SHARED_KINDS = ("runtime", "wrapper")  # the job files; each target names its own kinds


def kinds() -> tuple[str, ...]:
    return SHARED_KINDS + tuple(k for e in registry.entries() for k in e.kinds)

_SHA256 = re.compile(r"[0-9a-f]{64}")


class Installed(NamedTuple):
    """One artifact schedgen installed: what it is, where, and the hash of what it wrote."""

    kind: str  # one of kinds()
    path: str | None  # None for the crontab block
    sha256: str
    job: str | None = None  # the job a wrapper or plist belongs to
    jobs: tuple[str, ...] = ()  # the jobs in the crontab block
    targets: tuple[str, ...] = ()  # the targets a wrapper serves
    mode: int | None = None
    schedgen_version: str = __version__
    installed_at: str = ""
    # A digest of what it was rendered from (render/source.py); optional, added within
    # format 1: older readers keep it as an unknown key, and drop it when they rewrite
    # the artifact (so it never outlives the content it describes).
    source: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()  # keys this version does not know, kept as read

    @property
    def key(self) -> str:
        return key(self.kind, self.path)


def key(kind: str, path: str | Path | None) -> str:
    return f"{kind}:{path}" if path is not None else kind


class Document(NamedTuple):
    config: str
    artifacts: tuple[Installed, ...]
    extra: tuple[tuple[str, Any], ...]


def _type_name(value: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object", type(None): "null"}.get(type(value),
                                                                     type(value).__name__)


class _Reader:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def bad(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    def text(self, where: str, value: object, *, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            self.bad(where, f"expected a string, got {_type_name(value)}")
            return None
        return value

    def names(self, where: str, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.bad(where, f"expected a list of strings, got {_type_name(value)}")
            return ()
        return tuple(value)

    def digest(self, where: str, value: object) -> str | None:
        """An optional SHA-256 hex digest."""
        text = self.text(where, value, optional=True)
        if text is not None and not _SHA256.fullmatch(text):
            self.bad(where, "not a SHA-256 hex digest")
            return None
        return text

    def mode(self, where: str, value: object) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o7777:
            self.bad(where, f"expected permission bits (0-4095), got {value!r}")
            return None
        return value

    def artifact(self, where: str, raw: object) -> Installed | None:
        if not isinstance(raw, dict):
            self.bad(where, f"expected an object, got {_type_name(raw)}")
            return None
        start = len(self.problems)
        for required in ("kind", "sha256"):
            if required not in raw:
                self.bad(f"{where}.{required}", "missing")
        kind = self.text(f"{where}.kind", raw.get("kind", ""))
        if kind is not None and "kind" in raw and kind not in kinds():
            self.bad(f"{where}.kind", f"{kind!r} is not one of {', '.join(kinds())}")
        sha = self.text(f"{where}.sha256", raw.get("sha256", ""))
        if sha is not None and "sha256" in raw and not _SHA256.fullmatch(sha):
            self.bad(f"{where}.sha256", "not a SHA-256 hex digest")
        path = self.text(f"{where}.path", raw.get("path"), optional=True)
        if kind in ("wrapper", "plist") and path is None and "path" not in raw:
            self.bad(f"{where}.path", f"missing (a {kind} is a file)")
        entry = Installed(
            kind=kind or "", path=path, sha256=sha or "",
            job=self.text(f"{where}.job", raw.get("job"), optional=True),
            jobs=self.names(f"{where}.jobs", raw.get("jobs", [])),
            targets=self.names(f"{where}.targets", raw.get("targets", [])),
            mode=self.mode(f"{where}.mode", raw.get("mode")),
            schedgen_version=self.text(f"{where}.schedgen_version",
                                       raw.get("schedgen_version", "")) or "",
            installed_at=self.text(f"{where}.installed_at", raw.get("installed_at", "")) or "",
            source=self.digest(f"{where}.source", raw.get("source")),
            extra=tuple((k, v) for k, v in raw.items() if k not in _ARTIFACT_KEYS),
        )
        return entry if len(self.problems) == start else None


_ARTIFACT_KEYS = frozenset(Installed._fields) - {"extra"}
_TOP_KEYS = frozenset({"format", "schedgen_version", "namespace", "config", "updated_at",
                       "artifacts"})


def _read_1(data: dict[str, Any], reader: _Reader) -> Document:
    raw_artifacts = data.get("artifacts", [])
    if not isinstance(raw_artifacts, list):
        reader.bad("artifacts", f"expected a list, got {_type_name(raw_artifacts)}")
        raw_artifacts = []
    artifacts = [reader.artifact(f"artifacts[{i}]", raw) for i, raw in enumerate(raw_artifacts)]
    config = reader.text("config", data.get("config", "")) or ""
    extra = tuple((k, v) for k, v in data.items() if k not in _TOP_KEYS)
    return Document(config, tuple(a for a in artifacts if a is not None), extra)


# One reader per known format. A format 2 adds `2: _read_2` and turns what format 1
# said into the new model here, so every older record keeps working.
READERS: dict[int, Callable[[dict[str, Any], _Reader], Document]] = {1: _read_1}


def read(data: object, path: Path, namespace: str) -> Document:
    """The record's content, checked; RecordError (exit 3) naming every problem."""
    fmt = data.get("format") if isinstance(data, dict) else None
    if not isinstance(data, dict) or isinstance(fmt, bool) or not isinstance(fmt, int):
        raise RecordError(f"{path}: not a schedgen ownership record (no format number); "
                          "move it away to let schedgen start a new one")
    if fmt > FORMAT:
        raise RecordError(
            f"{path}: written by schedgen {data.get('schedgen_version', '?')} in record format "
            f"{fmt}; this schedgen ({__version__}) reads format {FORMAT}. Upgrade schedgen.")
    if fmt not in READERS:
        raise RecordError(f"{path}: record format {fmt} is not one schedgen ever wrote")
    reader = _Reader()
    doc = READERS[fmt](data, reader)
    if data.get("namespace", namespace) != namespace:
        reader.bad("namespace", f"says {data.get('namespace')!r}, but the file is for "
                                f"namespace {namespace!r}")
    if reader.problems:
        n = len(reader.problems)
        raise RecordError(
            f"{path}: the ownership record is damaged ({n} problem{'s' if n != 1 else ''}); "
            "nothing was changed. Fix it, or move it away to let schedgen start a new one "
            "(files it lists are then not known as schedgen's):\n"
            + "\n".join(f"  {p}" for p in reader.problems))
    return doc


def artifact_json(entry: Installed) -> dict[str, Any]:
    out: dict[str, Any] = dict(entry.extra)
    out.update((k, v) for k, v in entry._asdict().items() if k != "extra")
    out["jobs"], out["targets"] = list(entry.jobs), list(entry.targets)
    if entry.source is None:
        del out["source"]  # optional: absent, as older schedgens wrote and read it
    return out
