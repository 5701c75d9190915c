"""Schedules in words kept between runs: loading cronsim's explainer was a third of the
work of a `diff` of a cron config.

A description is a function of the cron expression and of the code that writes it
(schedule/describe.py, cronsim, cron-descriptor), so the file is keyed by that code:
the sizes and modification times of its files, schedgen's version and Python's. Code
that changed finds a key that does not match and describes afresh; a missing,
unreadable or foreign file only costs time. Read by every command that renders;
written only by those that write anyway (`render`, `apply`), like the compiled templates.
"""

from __future__ import annotations

import json
import sys
from importlib import util
from pathlib import Path

from schedgen import __version__, cachefile
from schedgen.schedule import describe
from schedgen.sha import sha256

FILE = "describe.json"
_DESCRIBERS = ("cronsim", "cron_descriptor")


def _code_files() -> list[Path]:
    files = [Path(describe.__file__)]
    for name in _DESCRIBERS:
        spec = util.find_spec(name)  # a top-level name: found, not imported
        for place in (spec.submodule_search_locations or ()) if spec is not None else ():
            files += sorted(Path(place).glob("*.py"))
    return files


def key() -> str:
    """What the descriptions depend on besides the expression."""
    h = sha256(f"{__version__}\0{sys.version}".encode())
    for f in _code_files():
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"\0{f}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


# Per folder, what its file held when read with a matching key (or last written).
_ON_DISK: dict[Path, dict[str, str]] = {}
_MAX = 5000  # expressions kept; past that only this run's


def load(folder: Path) -> None:
    """Fill describe.KNOWN from the file, if the same code wrote it."""
    raw = cachefile.read(folder / FILE)  # not a FIFO, not another user's
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except ValueError:
        return
    if not isinstance(data, dict) or not isinstance(data.get("texts"), dict) \
            or data.get("key") != key():
        return
    # One line each, as describe_cron itself only ever returns (it ends in a comment).
    texts = {e: t for e, t in data["texts"].items() if isinstance(e, str) and isinstance(t, str)
             and len(t.splitlines()) == 1 and "\n" not in t}
    describe.KNOWN.update(texts)
    _ON_DISK[folder] = texts


def store(folder: Path) -> None:
    """Write what describe.KNOWN learned since load; never fails a command."""
    on_disk = _ON_DISK.get(folder, {})
    if all(on_disk.get(e) == t for e, t in describe.KNOWN.items()):
        return
    texts = {**on_disk, **describe.KNOWN} if len(on_disk) < _MAX else dict(describe.KNOWN)
    data = json.dumps({"key": key(), "texts": texts}, sort_keys=True).encode("utf-8")
    cachefile.write(folder, FILE, data)  # a cache that cannot be written only costs time
    _ON_DISK[folder] = texts
