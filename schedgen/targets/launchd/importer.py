"""Read hand-written LaunchAgents plists into `Found` jobs (on any host, with plistlib).

Plists schedgen wrote itself (they carry its marker) are left out. What launchd
would do is reproduced: ProgramArguments run as an argv; StartCalendarInterval
becomes the fewest cron expressions with the same times; StartInterval becomes
@every; RunAtLoad becomes run_at_load, or @reboot when nothing else starts the
job; without WorkingDirectory launchd runs jobs in /, and resolves a relative one
from / (it expands neither ~ nor $VARS); without a PATH in EnvironmentVariables it
uses /usr/bin:/bin:/usr/sbin:/sbin. A job that also starts on other events
(KeepAlive, WatchPaths, ...) or runs as another user (UserName) cannot be
represented and is skipped. Files are read as leniently as launchd reads them
(import_plist_read).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from schedgen.config.model import PLACEHOLDERS
from schedgen.errors import SchedgenError
from schedgen.importers import cron_system as import_cron_system
from schedgen.importers.document import LOCK_HOW, Found, ImportResult, Note, build
from schedgen.paths import launch_agents_dir
from schedgen.render.artifacts import MARKER
from schedgen.targets.launchd.from_calendar import to_cron
from schedgen.targets.launchd.plist_read import read_plist
from schedgen.units import format_duration

_PLACEHOLDER = re.compile(r"\{(?:" + "|".join(PLACEHOLDERS) + r")\}")
LAUNCHD_DEFAULT_PATH = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
# Keys that start the job on something other than time: schedgen cannot say that.
_OTHER_TRIGGERS = ("WatchPaths", "QueueDirectories", "StartOnMount", "Sockets", "MachServices",
                   "LaunchEvents", "inetdCompatibility")
# Keys schedgen does not carry over; the job is imported and the key reported.
_IGNORED = {
    "StandardOutPath": "output goes to the job's schedgen run directory",
    "StandardErrorPath": "output goes to the job's schedgen run directory",
    "Umask": "the wrapper sets umask 077",
}
_HANDLED = {"Label", "Program", "ProgramArguments", "StartCalendarInterval", "StartInterval",
            "RunAtLoad", "EnvironmentVariables", "WorkingDirectory", "ThrottleInterval",
            "Disabled", "Comment"}


LOCK_NOTE = ("every imported job runs under schedgen's default lock (a run that finds the "
             "last one still going exits 75); launchd itself never starts a job that is "
             "still running, so this only shows with `schedgen run`; " + LOCK_HOW)


def read_plists(file: Path | None) -> tuple[list[tuple[Path, bytes]], list[Note], str]:
    """(path, bytes) of each plist to consider: ``file`` (a plist or a folder), or LaunchAgents."""
    folder = file if file is not None else launch_agents_dir()
    if file is not None and file.is_file():
        paths = [file]
    elif folder.is_dir():
        paths = sorted(folder.glob("*.plist"))
    elif file is not None:
        raise SchedgenError(f"{file}: no such plist or folder")
    else:
        paths = []
    out, notes, ours = [], [], 0
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError as exc:
            notes.append(Note(p.name, f"skipped: cannot read it: {exc.strerror}"))
            continue
        if MARKER.encode() in data:
            ours += 1
            continue
        out.append((p, data))
    if ours:
        notes.append(Note(str(folder), f"left out {ours} plist{'s' if ours != 1 else ''} "
                                       "schedgen manages itself"))
    return out, notes, str(folder)


def import_launchd(file: Path | None, dest: Path, lock: bool = True) -> ImportResult:
    plists, notes, origin = read_plists(file)
    found: list[Found] = []
    for path, data in plists:
        # A LaunchDaemon is the machine's: a system-scope job, run as its UserName
        job = plist_job(path.name, data, notes, daemon=path.parent.name == "LaunchDaemons")
        if job is not None:
            if path.parent == launch_agents_dir():  # apply unloads it, uninstall loads it
                job.keys["adopts"] = f"launchd: {path.name}"
            found.append(job)
    result = build(found, "launchd", origin, dest, lock=lock, lock_note=LOCK_NOTE)
    return ImportResult(result.text, result.jobs, (*notes, *result.notes), result.origins)


def label_name(label: str) -> str:
    """com.me.backup-photos → backup-photos; local.sync → sync."""
    parts = [p for p in label.split(".") if p]
    if len(parts) >= 3:
        parts = parts[2:]
    elif len(parts) == 2:
        parts = parts[1:]
    return "-".join(parts) or label


def plist_job(where: str, data: bytes, notes: list[Note], user: str | None = None,
              daemon: bool = False) -> Found | None:
    """``user``: who runs schedgen (default: the current user); ``daemon``: a LaunchDaemon,
    imported as a system-scope job that runs as its UserName (root when it has none)."""
    def skip(why: str) -> None:
        notes.append(Note(where, f"skipped: {why}"))

    read = read_plist(data)
    if read.plist is None:
        skip(f"not a readable plist: {read.error}")
        return None
    plist = read.plist
    for repair in read.repairs:
        notes.append(Note(where, f"read past {repair}, as launchd does"))
    if not isinstance(plist, dict):
        skip("the plist is not a dictionary")
        return None
    triggers = [k for k in _OTHER_TRIGGERS if k in plist]
    if plist.get("KeepAlive") not in (None, False):
        triggers.insert(0, "KeepAlive")
    if plist.get("OnDemand") is False:
        triggers.insert(0, "OnDemand = false")
    if triggers:
        skip(f"{', '.join(triggers)} starts it on events, not on a schedule; "
             "schedgen cannot represent that")
        return None
    if plist.get("EnableGlobbing"):
        skip("EnableGlobbing expands its arguments; schedgen passes them as they are")
        return None
    if "RootDirectory" in plist or "StandardInPath" in plist:
        skip(f"{'RootDirectory' if 'RootDirectory' in plist else 'StandardInPath'} "
             "cannot be represented")
        return None

    me = user or import_cron_system.current_user()
    if "UserName" in plist and not isinstance(plist["UserName"], str):
        skip("UserName is not a string")
        return None
    if "UserName" in plist and plist["UserName"] != me and not daemon:
        skip(f"runs as user {plist['UserName']!r} (UserName); schedgen installs jobs for you "
             f"({me}) only")
        return None
    command = _command(plist)
    if isinstance(command, str):
        skip(command)
        return None
    placeholder = next((m.group(0) for a in command for m in [_PLACEHOLDER.search(a)] if m), None)
    if placeholder:
        skip(f"an argument holds {placeholder}, which schedgen would replace at run time")
        return None
    if plist.get("Program") and plist.get("ProgramArguments") and \
            plist["ProgramArguments"][0] != plist["Program"]:
        notes.append(Note(where, f"argv[0] {plist['ProgramArguments'][0]!r} becomes the program "
                                 f"path {plist['Program']!r}"))
    if any(a == "~" or a.startswith("~/") for a in command):
        notes.append(Note(where, "launchd passes '~' in arguments as it is; schedgen expands it "
                                 "to your home directory"))
    keys: dict[str, Any] = {}
    if isinstance(plist.get("Comment"), str) and plist["Comment"].strip():
        keys["description"] = " ".join(plist["Comment"].split())
    keys["command"] = command
    try:
        schedule, run_at_load = _schedule(plist)
    except ValueError as exc:
        skip(str(exc))
        return None
    keys["schedule"] = schedule[0] if len(schedule) == 1 else schedule
    if run_at_load:
        keys["run_at_load"] = True
    env = plist.get("EnvironmentVariables", {})
    if not isinstance(env, dict):
        skip("EnvironmentVariables is not a dictionary")
        return None
    path = env.get("PATH")
    keys["working_dir"] = _working_dir(plist.get("WorkingDirectory", "/"), where, notes)
    if not isinstance(keys["working_dir"], str):
        skip("WorkingDirectory is not a string")
        return None
    other = {k: v for k, v in env.items() if k != "PATH"}
    if other:
        keys["env"] = other
    keys["path"] = [p for p in str(path).split(":") if p] if path else list(LAUNCHD_DEFAULT_PATH)
    if "ThrottleInterval" in plist:
        keys["throttle_interval"] = plist["ThrottleInterval"]
    if plist.get("Disabled") is True:
        keys["enabled"] = False
    if daemon:
        keys["scope"] = "system"
        keys["user"] = plist.get("UserName", "root")
    elif "UserName" in plist:
        notes.append(Note(where, f"UserName {me} is you: imported as one of your jobs"))
    for key in sorted(set(plist) - _HANDLED - {"KeepAlive", "OnDemand", "EnableGlobbing",
                                                "UserName"}):
        why = _IGNORED.get(key, "schedgen does not carry this key over")
        notes.append(Note(where, f"{key} ignored: {why}"))
    label = plist.get("Label")
    hint = label_name(label) if isinstance(label, str) and label else Path(where).stem
    return Found(source=where, name_hint=hint, keys=keys)


def _working_dir(value: Any, where: str, notes: list[Note]) -> Any:
    """Absolute, as launchd resolves it: from /, with ~ and $VARS taken literally."""
    if not isinstance(value, str) or value.startswith("/"):
        return value
    absolute = posixpath.normpath(posixpath.join("/", value))
    why = (" (launchd expands neither ~ nor $VARS there)" if value.startswith(("~", "$"))
           or "$" in value else "")
    notes.append(Note(where, f"WorkingDirectory {value!r} is relative: launchd runs the job in "
                             f"{absolute}{why}, and so will schedgen"))
    return absolute


def _command(plist: dict[str, Any]) -> list[str] | str:
    """The argv, or a string saying why there is none."""
    args = plist.get("ProgramArguments")
    program = plist.get("Program")
    if args is not None and (not isinstance(args, list) or not args
                             or not all(isinstance(a, str) for a in args)):
        return "ProgramArguments is not a non-empty list of strings"
    if program is not None and not isinstance(program, str):
        return "Program is not a string"
    if program:
        return [program, *(args[1:] if args else [])]
    if args:
        return list(args)
    return "it has neither Program nor ProgramArguments"


def _schedule(plist: dict[str, Any]) -> tuple[list[str], bool]:
    """(expressions, run_at_load); ValueError when there is none or it cannot be said."""
    exprs: list[str] = []
    calendar = plist.get("StartCalendarInterval")
    if calendar is not None:
        entries = calendar if isinstance(calendar, list) else [calendar]
        exprs = to_cron(entries)
        if not exprs:
            raise ValueError("its StartCalendarInterval can never fire")
    interval = plist.get("StartInterval")
    if interval is not None:
        if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
            raise ValueError(f"StartInterval {interval!r} is not a positive integer")
        if exprs:
            raise ValueError("it has both StartInterval and StartCalendarInterval; schedgen "
                             "cannot combine @every with other expressions")
        exprs = [f"@every {format_duration(interval)}"]
    run_at_load = plist.get("RunAtLoad") is True
    if not exprs:
        if not run_at_load:
            raise ValueError("nothing starts it: no StartCalendarInterval, StartInterval or "
                             "RunAtLoad")
        return ["@reboot"], False
    return exprs, run_at_load
