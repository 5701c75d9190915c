"""Read hand-written systemd user timers and their services into `Found` jobs.

Timers schedgen wrote itself (they carry its marker) are left out. OnCalendar lines
become cron expressions (schedgen.import_oncalendar; a list when there are several),
OnBootSec/OnStartupSec becomes @reboot, OnUnitActiveSec becomes @every. The service's
ExecStart is the command, with WorkingDirectory, Environment, EnvironmentFile and the
unit's Description. Anything else that changes when or how it runs is reported, and
a job that cannot be expressed is skipped with the reason.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.errors import SchedgenError
from schedgen.importers.document import LOCK_HOW, Found, ImportResult, Note, build
from schedgen.records.shown import shown
from schedgen.render.artifacts import MARKER
from schedgen.targets.systemd.from_oncalendar import NotExpressible, to_cron
from schedgen.targets.systemd.render import unit_dir
from schedgen.units import format_duration

# The PATH a user manager gives its services (unless environment.d says otherwise).
SYSTEMD_DEFAULT_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin",
                        "/bin"]
_TIMER_KEYS = {"OnCalendar", "OnBootSec", "OnStartupSec", "OnActiveSec", "OnUnitActiveSec",
               "Unit", "Persistent", "AccuracySec", "RandomizedDelaySec", "WakeSystem",
               "FixedRandomDelay"}
_SERVICE_KEYS = {"Type", "ExecStart", "WorkingDirectory", "Environment", "EnvironmentFile"}
# A unit name as systemd accepts one (unit_name_is_valid): never a path.
_UNIT_NAME = re.compile(r"[A-Za-z0-9:_.\\@-]{1,250}\.(?:service|timer)")
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # bytes surrogateescape could not decode
_SPAN = {"us": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "second": 1, "seconds": 1, "m": 60,
         "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600, "hour": 3600,
         "hours": 3600, "d": 86400, "day": 86400, "days": 86400, "w": 604800,
         "week": 604800, "weeks": 604800}


LOCK_NOTE = ("every imported job runs under schedgen's default lock (a run that finds the "
             "last one still going exits 75); a systemd timer never starts a service that is "
             "still running, so this only shows with `schedgen run`; " + LOCK_HOW)


def parse_unit(text: str, dropped: list[int] | None = None) -> dict[str, dict[str, list[str]]]:
    """Sections of a unit file: {section: {key: [values in order]}}; '' resets a key.
    A line that is not UTF-8 is ignored, as systemd ignores it (its number in ``dropped``)."""
    out: dict[str, dict[str, list[str]]] = {}
    section: dict[str, list[str]] = {}
    pending = ""
    for n, raw in enumerate(text.splitlines(), 1):
        if _NOT_UTF8.search(raw):
            if dropped is not None:
                dropped.append(n)
            continue
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = out.setdefault(line[1:-1], {})
            continue
        key, eq, value = line.partition("=")
        if eq:
            values = section.setdefault(key.strip(), [])
            if value.strip():
                values.append(value.strip())
            else:
                values.clear()
    return out


def _read(unit: Path, notes: list[Note]) -> dict[str, dict[str, list[str]]]:
    dropped: list[int] = []
    out = parse_unit(unit.read_text(encoding="utf-8", errors="surrogateescape"), dropped)
    if dropped:
        lines = ", ".join(map(str, dropped[:5])) + (", ..." if len(dropped) > 5 else "")
        notes.append(Note(unit.name, f"line{'s' if len(dropped) > 1 else ''} {lines} not UTF-8: "
                                     "ignored, as systemd ignores them"))
    return out


def seconds(span: str) -> int:
    """A systemd time span ('1h 30min', '90', '5m') in whole seconds."""
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*([a-z]*)", span.lower()):
        if unit not in _SPAN and unit:
            raise ValueError(f"time span {span!r}: unknown unit {unit!r}")
        total += float(number) * _SPAN.get(unit, 1)
    return int(total)


def read_timers(file: Path | None) -> tuple[list[Path], list[Note], Path]:
    folder = file if file is not None and file.is_dir() else (
        file.parent if file is not None else unit_dir())
    if file is not None and not file.exists():
        raise SchedgenError(f"{file}: no such timer or folder")
    timers = [file] if file is not None and file.is_file() else sorted(folder.glob("*.timer"))
    notes, out, ours = [], [], 0
    for t in timers:
        if not _UNIT_NAME.fullmatch(t.name):
            notes.append(Note(shown(t.name), "skipped: not a name systemd accepts for a unit"))
            continue
        try:
            text = t.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            notes.append(Note(t.name, f"skipped: cannot read it: {exc.strerror}"))
            continue
        if MARKER in text:
            ours += 1
            continue
        out.append(t)
    if ours:
        notes.append(Note(str(folder), f"left out {ours} timer{'s' if ours != 1 else ''} "
                                       "schedgen manages itself"))
    return out, notes, folder


def import_systemd(file: Path | None, dest: Path, lock: bool = True) -> ImportResult:
    timers, notes, folder = read_timers(file)
    found = [j for t in timers if (j := timer_job(t, notes)) is not None]
    result = build(found, "systemd", str(folder), dest, lock=lock, lock_note=LOCK_NOTE)
    return ImportResult(result.text, result.jobs, (*notes, *result.notes), result.origins)


def timer_job(timer: Path, notes: list[Note]) -> Found | None:
    where = timer.name

    def skip(why: str) -> None:
        notes.append(Note(where, f"skipped: {why}"))

    t = _read(timer, notes).get("Timer", {})
    unit = (t.get("Unit") or [timer.stem + ".service"])[-1]
    if not _UNIT_NAME.fullmatch(unit) or not unit.endswith(".service"):
        skip(f"Unit={shown(unit)} is not the name of a service unit (a unit name, never a path)")
        return None
    service_path = timer.with_name(unit)
    if not service_path.is_file():
        skip(f"its service {unit} is not in {timer.parent}")
        return None
    try:
        svc = _read(service_path, notes)
    except OSError as exc:
        skip(f"cannot read {unit}: {exc.strerror}")
        return None
    s = svc.get("Service", {})
    try:
        schedule = _schedule(t)
        command = _command(s.get("ExecStart", []))
    except (ValueError, NotExpressible) as exc:
        skip(str(exc))
        return None
    if isinstance(command, str):
        notes.append(Note(unit, "ExecStart uses $VARIABLES: imported as a bash string"))
    first = [k for k in ("OnBootSec", "OnStartupSec", "OnActiveSec") if t.get(k)]
    if t.get("OnUnitActiveSec") and first:
        notes.append(Note(where, f"{first[0]} only placed the first run; @every counts from "
                                 "when the timer starts"))
    keys: dict[str, Any] = {}
    description = (svc.get("Unit", {}).get("Description") or [""])[-1]
    if description:
        keys["description"] = description.replace("%%", "%")
    keys["command"] = command
    keys["schedule"] = schedule[0] if len(schedule) == 1 else schedule
    try:
        workdir = _specifiers((s.get("WorkingDirectory") or ["~"])[-1].lstrip("-"))
        env_files = [_specifiers(f.lstrip("-")) for f in s.get("EnvironmentFile", [])]
    except ValueError as exc:
        skip(str(exc))
        return None
    keys["working_dir"] = workdir
    env: dict[str, str] = {}
    for line in s.get("Environment", []):
        for pair in shlex.split(line):
            k, _, v = pair.partition("=")
            env[k] = v
    path = env.pop("PATH", None)
    keys["path"] = path.split(":") if path else list(SYSTEMD_DEFAULT_PATH)
    if env:
        keys["env"] = env
    if env_files:
        keys["env_file"] = env_files[-1]
        if len(env_files) > 1:
            notes.append(Note(where, "only the last EnvironmentFile is kept"))
    if not _enabled(timer):
        keys["enabled"] = False
        notes.append(Note(where, "the timer is not enabled: imported with enabled = false"))
    for key in sorted(set(t) - _TIMER_KEYS):
        notes.append(Note(where, f"{key} ignored: schedgen does not carry this key over"))
    for key in sorted(set(s) - _SERVICE_KEYS):
        notes.append(Note(unit, f"{key} ignored: schedgen does not carry this key over"))
    keys.update(_policies(t))
    if timer.parent == unit_dir():  # the user's own: apply turns it off, uninstall back on
        keys["adopts"] = f"systemd: {timer.name}"
    return Found(source=where, name_hint=_hint(timer.stem), keys=keys)


def _policies(t: dict[str, list[str]]) -> dict[str, Any]:
    """Persistent= and RandomizedDelaySec= as schedgen's run policies (docs/policies.md)."""
    keys: dict[str, Any] = {}
    if t.get("OnCalendar") and _yes((t.get("Persistent") or ["no"])[-1]):
        keys["catch_up"] = "once"
    delay = seconds((t.get("RandomizedDelaySec") or ["0"])[-1])
    if delay > 0:
        keys["random_delay"] = format_duration(delay)
        # systemd draws a fresh delay each time unless FixedRandomDelay= says otherwise.
        keys["random_delay_stable"] = _yes((t.get("FixedRandomDelay") or ["no"])[-1])
        if delay >= 3600:  # a delayed start is a late one: the bound must be above it
            keys["max_lateness"] = format_duration(delay + 3600)
    return keys


def _yes(value: str) -> bool:
    return value.strip().lower() in ("1", "yes", "y", "true", "t", "on")


def _schedule(t: dict[str, list[str]]) -> list[str]:
    exprs = [to_cron(v) for v in t.get("OnCalendar", [])]
    every = t.get("OnUnitActiveSec")
    # With OnUnitActiveSec, OnBootSec/OnStartupSec/OnActiveSec only place the first run.
    if not every and (t.get("OnBootSec") or t.get("OnStartupSec")):
        exprs.append("@reboot")
    if every:
        if exprs:
            raise ValueError("it has both OnUnitActiveSec and other triggers; schedgen cannot "
                             "combine @every with other expressions")
        n = seconds(every[-1])
        if n <= 0:
            raise ValueError(f"OnUnitActiveSec={every[-1]} is not a positive time span")
        exprs.append(f"@every {format_duration(n)}")
    if not exprs:
        raise ValueError("nothing schedgen can express starts it (no OnCalendar, OnBootSec, "
                         "OnStartupSec or OnUnitActiveSec)")
    return list(dict.fromkeys(exprs))


def _command(lines: list[str]) -> list[str] | str:
    if len(lines) != 1:
        raise ValueError(f"its service has {len(lines)} ExecStart lines; schedgen runs one "
                         "command")
    line = lines[0]
    while line[:1] in "@-:+!":
        if line[0] in "@":
            raise ValueError("ExecStart with '@' sets argv[0]; schedgen cannot say that")
        line = line[1:]
    words = [_specifiers(w) for w in shlex.split(line)]
    if any("$" in w for w in words):
        # systemd expands $VAR from the unit's environment: a bash string does the same
        # (each word in double quotes, as systemd's ${VAR} keeps it one word).
        return " ".join(_dquote(w) if "$" in w else shlex.quote(w) for w in words)
    return words


def _specifiers(text: str) -> str:
    """%h is the home directory and %% a percent sign; other specifiers are refused."""
    if re.search(r"%[^%h]", text.replace("%%", "")):
        raise ValueError(f"{text!r} uses systemd specifiers other than %h; write it out by hand")
    return re.sub(r"%(.)", lambda m: str(paths.home()) if m.group(1) == "h" else "%", text)


def _dquote(word: str) -> str:
    return '"' + re.sub(r'(["\\`])', r"\\\1", word) + '"'


def _enabled(timer: Path) -> bool:
    return any(p.name == timer.name for p in timer.parent.glob("*.wants/*"))


def _hint(stem: str) -> str:
    """backup-photos → backup-photos; com.me.sync → sync."""
    parts = [p for p in stem.split(".") if p]
    return parts[-1] if parts else stem
