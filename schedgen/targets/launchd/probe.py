"""The TCC probe: a one-shot agent, loaded into the job's own launchd domain with the
job's interpreter and PATH, that lists each protected folder the job's paths touch and
writes what it may read. A folder readable from a terminal may not be from launchd: the
grant belongs to the program launchd starts (github.com/theQuert/cc-reaper/issues/21,
github.com/tomcounsell/ai/issues/2327), so only a run from there can tell.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import time
from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.config.model import Job
from schedgen.machine.fs import atomic_write
from schedgen.machine.ops import run

FILES_AND_FOLDERS = "Files and Folders"
FULL_DISK = "Full Disk Access"


class Area(NamedTuple):
    folder: Path  # what the probe lists
    what: str  # as System Settings names it
    pane: str  # Privacy & Security → this


def _home_areas() -> list[tuple[str, str, str]]:
    return [("Desktop", "Desktop", FILES_AND_FOLDERS),
            ("Documents", "Documents", FILES_AND_FOLDERS),
            ("Downloads", "Downloads", FILES_AND_FOLDERS),
            ("Library/Mobile Documents", "iCloud Drive", FILES_AND_FOLDERS),
            ("Library/Mail", "Mail data", FULL_DISK),
            ("Library/Messages", "Messages data", FULL_DISK),
            ("Library/Safari", "Safari data", FULL_DISK),
            ("Library/Cookies", "cookies", FULL_DISK),
            ("Library/Application Support/com.apple.TCC", "the privacy database", FULL_DISK),
            ("Library/Containers", "other apps' containers", FULL_DISK)]


def area_of(p: Path) -> Area | None:
    home = paths.home()
    for rel, what, pane in _home_areas():
        root = home / rel
        if p == root or root in p.parents:
            return Area(root, what, pane)
    parts = p.parts
    if len(parts) >= 3 and parts[1] == "Volumes":
        return Area(Path("/", "Volumes", parts[2]), f"the volume {parts[2]}", FILES_AND_FOLDERS)
    if p == Path("/Library/Application Support/com.apple.TCC"):
        return Area(p, "the privacy database", FULL_DISK)
    return None


def touched(job: Job) -> list[Path]:
    """Every path the job names: its command's words, folders and files."""
    words = list(job.command) if isinstance(job.command, tuple) else _split(job.command)
    out: list[Path] = []
    for w in words:
        w = w.split("=", 1)[1] if w.startswith("-") and "=" in w else w
        if w.startswith(("/", "~")):
            out.append(Path(os.path.expanduser(w)))
    for p in (job.working_dir, job.env_file, job.log_root, job.lock_dir, job.wrapper_dir):
        if p is not None:
            out.append(p)
    if job.queue is not None:
        q = job.queue
        out += [q.inbox, q.processing, q.processed, q.failed]
    return out


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def areas(job: Job) -> list[Area]:
    found: dict[Path, Area] = {}
    for p in touched(job):
        a = area_of(p)
        if a is not None:
            found.setdefault(a.folder, a)
    return list(found.values())


def interpreter(job: Job) -> str:
    """What launchd starts for the job: the job file's interpreter (its #! line)."""
    try:
        with open(job.wrapper_path, encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return "/bin/bash"
    return first[2:].split()[0] if first.startswith("#!") and first[2:].split() else "/bin/bash"


# Lists each folder; "denied" only for EPERM (what TCC answers), so a folder that is
# absent or unreadable for plain Unix reasons is not taken for a missing grant.
SCRIPT = r'''out=$1; shift
tmp="$out.tmp"
: >"$tmp"
for d in "$@"; do
  if [ ! -e "$d" ]; then
    printf 'absent\t%s\t\n' "$d" >>"$tmp"
  elif err=$(ls -A "$d" 2>&1 >/dev/null); then
    printf 'ok\t%s\t\n' "$d" >>"$tmp"
  else
    err=${err//$'\n'/ }
    case $err in
      *"Operation not permitted"*) printf 'denied\t%s\t%s\n' "$d" "$err" >>"$tmp" ;;
      *) printf 'error\t%s\t%s\n' "$d" "$err" >>"$tmp" ;;
    esac
  fi
done
mv -f "$tmp" "$out"
'''


class Outcome(NamedTuple):
    results: dict[Path, tuple[str, str]]  # folder -> (ok|denied|absent|error, message)
    error: str  # launchctl's refusal, or a timeout ("" when the probe ran)


def probe(job: Job, folders: list[Path], domain: str, wait: float = 15.0) -> Outcome:
    """Load the probe agent, wait for its answer, unload it and remove its files."""
    label = f"{job.label_prefix}.doctor-probe"
    work = paths.state_dir() / "doctor"
    plist_path, result = work / f"{label}.plist", work / f"{label}.result"
    result.unlink(missing_ok=True)
    plist = {"Label": label, "RunAtLoad": True,  # once per load: no schedule, no KeepAlive
             "ProgramArguments": [interpreter(job), "-c", SCRIPT, "schedgen-probe",
                                  str(result), *map(str, folders)],
             "EnvironmentVariables": {"PATH": ":".join(job.path)},
             "StandardErrorPath": str(work / f"{label}.err")}
    atomic_write(plist_path, plistlib.dumps(plist), 0o644)
    run(["launchctl", "bootout", f"{domain}/{label}"])  # a probe left by an earlier doctor
    r = run(["launchctl", "bootstrap", domain, str(plist_path)])
    try:
        if not r.ok:
            return Outcome({}, r.message())
        deadline = time.monotonic() + wait
        while not result.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not result.exists():
            return Outcome({}, f"the probe wrote nothing in {wait:g} seconds")
        out: dict[Path, tuple[str, str]] = {}
        for line in result.read_text(encoding="utf-8", errors="replace").splitlines():
            verdict, _, rest = line.partition("\t")
            folder, _, message = rest.partition("\t")
            out[Path(folder)] = (verdict, message)
        return Outcome(out, "")
    finally:
        if r.ok:
            run(["launchctl", "bootout", f"{domain}/{label}"])
        for f in (plist_path, result, work / f"{label}.err"):
            f.unlink(missing_ok=True)
