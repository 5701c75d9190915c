"""`import --from cron|launchd|systemd`: read, convert, validate, and write ``--out`` if given."""

from __future__ import annotations

from pathlib import Path

from schedgen.errors import SchedgenError, SystemOpError, UsageError
from schedgen.importers.document import ImportResult
from schedgen.machine.fs import atomic_write
from schedgen.targets import registry


def run_import(source: str, file: Path | None, out: Path | None, force: bool,
               system: bool = False, lock: bool = True) -> ImportResult:
    """The work behind `schedgen import`: read, convert, validate, and write ``out`` if given.

    ``system``: the crontab has a user field (/etc/crontab style); ``lock``: see `build`.
    """
    if out is not None and out.exists() and not force:
        raise UsageError(f"{out} already exists; use --force to overwrite it")
    dest = out if out is not None else Path.cwd() / "jobs.toml"
    # The targets with a native format to read, by name.
    readers = sorted(n for n in registry.names() if registry.get(n).imports)
    result = (registry.get(source).import_jobs(file, dest, system=system, lock=lock)
              if source in readers else None)
    if result is None:
        raise UsageError(f"--from {source!r}: expected {', '.join(readers[:-1])} or {readers[-1]}")
    if not result.jobs:
        found = "".join(f"\n  {note}" for note in result.notes)
        raise SchedgenError(f"nothing to import from {source}{':' if found else ''}{found}")
    if out is not None:
        try:
            atomic_write(out, result.text)
        except OSError as exc:
            raise SystemOpError(f"cannot write {out}: {exc.strerror}") from None
    return result
