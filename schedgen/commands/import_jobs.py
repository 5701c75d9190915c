"""`import --from cron|launchd|systemd`: read, convert, validate, and write ``--out`` if given."""

from __future__ import annotations

from pathlib import Path

from schedgen.errors import SchedgenError, SystemOpError, UsageError
from schedgen.importers.cron import import_cron
from schedgen.importers.document import ImportResult
from schedgen.importers.launchd import import_launchd
from schedgen.importers.systemd import import_systemd
from schedgen.machine.fs import atomic_write


def run_import(source: str, file: Path | None, out: Path | None, force: bool,
               system: bool = False, lock: bool = True) -> ImportResult:
    """The work behind `schedgen import`: read, convert, validate, and write ``out`` if given.

    ``system``: the crontab has a user field (/etc/crontab style); ``lock``: see `build`.
    """
    if out is not None and out.exists() and not force:
        raise UsageError(f"{out} already exists; use --force to overwrite it")
    dest = out if out is not None else Path.cwd() / "jobs.toml"
    if source == "cron":
        result = import_cron(file, dest, system=system, lock=lock)
    elif source == "launchd":
        if system:
            raise UsageError("--system is for --from cron (a crontab with a user field)")
        result = import_launchd(file, dest, lock=lock)
    elif source == "systemd":
        if system:
            raise UsageError("--system is for --from cron (a crontab with a user field)")
        result = import_systemd(file, dest, lock=lock)
    else:
        raise UsageError(f"--from {source!r}: expected cron, launchd or systemd")
    if not result.jobs:
        found = "".join(f"\n  {note}" for note in result.notes)
        raise SchedgenError(f"nothing to import from {source}{':' if found else ''}{found}")
    if out is not None:
        try:
            atomic_write(out, result.text)
        except OSError as exc:
            raise SystemOpError(f"cannot write {out}: {exc.strerror}") from None
    return result
