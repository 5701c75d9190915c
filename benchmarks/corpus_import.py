"""Import every file of the real-world corpus and check what came out, line by line.

    .venv/bin/python benchmarks/corpus_import.py [CORPUS_DIR]

The corpus (crontabs and LaunchAgents plists collected from public repositories) is
found in $SCHEDGEN_CORPUS, the argument, or a `shared/corpus` folder beside a parent
of this checkout; it is used in place, never copied. Each crontab job line and each
plist is read a second time by an oracle written apart from the importer (for plists:
libplist's `plistutil`, as lenient as launchd, where it is installed), and each
imported job is compared with it: firing times by cronsim over a leap year, the argv
the rendered job file would exec (tests/import_oracle.py) against what cron's
`$SHELL -c` or launchd's ProgramArguments ran, environment, PATH and working
directory. Every line ends in one bucket: imported exactly, imported exactly but
with a note, imported differently with a note, skipped with a reason, or a failure
(imported wrongly without a note, dropped without a reason, a crash).
"""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cronsim import CronSim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from schedgen.config.load import loads
from schedgen.config.model import Config, Job
from schedgen.importers import cron_system as import_cron_system
from schedgen.importers.document import ImportResult
from schedgen.schedule.expressions import MACROS, Every
from schedgen.targets.cron.importer import LOCK_NOTE as CRON_LOCK_NOTE
from schedgen.targets.cron.importer import import_cron
from schedgen.targets.cron.render import cron_lines
from schedgen.targets.launchd.importer import LOCK_NOTE as LAUNCHD_LOCK_NOTE
from schedgen.targets.launchd.importer import import_launchd
from tests.import_oracle import job_argv, same_as_cron  # noqa: E402
from tests.oracles import cronsim_minutes, launchd_minutes  # noqa: E402

START, END = datetime(2028, 1, 1), datetime(2029, 1, 1)
# The corpus README names 7 system crontabs (a user field); these are they. The importer
# finds them on its own (header, path, --system); this list is only the answer key.
SYSTEM_FILES = {"05-bayusetia.txt", "09-awsmonitors.txt", "10-pi-loc.txt", "11-pi-backup.txt",
                "14-nginx-logrotate.txt", "37-0xalby-etc.txt", "38-freezer-mon-etc.txt"}
REASONS = [  # (pattern in a skip note, reason as counted)
    (r"runs as user", "runs as another user"),
    (r"looks like the user field", "user field in a file not known as a system crontab"),
    (r"unescaped %", "% sends stdin"),
    (r"^skipped: schedule |cron does not know", "not a valid schedule"),
    (r"not a cron job line", "not a cron job line"),
    (r"a system crontab line is: time fields", "system line without a user or command"),
    (r"CRON_TZ", "CRON_TZ"),
    (r"starts it on events", "started by events (KeepAlive, WatchPaths, ...)"),
    (r"nothing starts it", "nothing starts it"),
    (r"not a readable plist", "unreadable plist"),
    (r"StandardInPath|RootDirectory", "StandardInPath / RootDirectory"),
    (r"EnableGlobbing", "EnableGlobbing"),
]


@dataclass
class Tally:
    files: int = 0
    seen: int = 0
    buckets: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    notes_on_imported: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def add(self, bucket: str, what: str = "") -> None:
        self.buckets[bucket] += 1
        if bucket in ("wrong", "dropped", "crash"):
            self.failures.append(f"{bucket}: {what}")


def find_corpus(given: str | None = None) -> Path | None:
    for candidate in (given, os.environ.get("SCHEDGEN_CORPUS")):
        if candidate:
            return Path(candidate) if Path(candidate).is_dir() else None
    for parent in ROOT.parents:
        if (parent / "shared" / "corpus" / "cron").is_dir():
            return parent / "shared" / "corpus"
    return None


def reason(message: str) -> str:
    for pattern, name in REASONS:
        if re.search(pattern, message):
            return name
    return message.removeprefix("skipped: ").split(";")[0]


def note_kind(message: str) -> str:
    """The note without its particulars (paths, numbers, long quoted values)."""
    head = message.split(": ")[0].split("; ")[0]
    return re.sub(r"'[^']{4,}'|\"[^\"]{4,}\"|\S+/\S+|\d+", "…", head)


# --- cron ---------------------------------------------------------------------------

_ENV = re.compile(r"\s*([^\s=#]+)\s*=\s*(.*?)\s*")
_TIMES = re.compile(r"\s*(@\w+|(?:\S+\s+){4}\S+)\s+(.*)")


@dataclass(frozen=True)
class CronLine:
    number: int
    expr: str
    user: str | None
    command: str | None  # None: % sends stdin
    shell: str
    env: dict[str, str]
    path: list[str]
    home: str | None
    tz: bool


def cron_runs(text: str) -> str | None:
    """cron's own % loop (Debian and cronie: a backslash escapes % and backslash)."""
    out, escaped = "", False
    for ch in text:
        if escaped:
            out = out[:-1] + ch if ch in "%\\" else out + ch
            escaped = False
        elif ch == "%":
            return None
        else:
            out += ch
            escaped = ch == "\\"
    return out


def cron_oracle(text: str, system: bool) -> list[CronLine]:
    lines = text.split("\n")
    env: dict[str, str] = {}
    shell, path, home, tz = "/bin/sh", ["/usr/bin", "/bin"], None, False
    out = []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _ENV.fullmatch(line)
        if m:
            name, value = m.group(1), m.group(2)
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            if name == "SHELL":
                shell = value
            elif name == "PATH":
                path = [p for p in value.split(":") if p]
            elif name == "CRON_TZ":
                tz = bool(value)
            elif name not in ("MAILTO", "MAILFROM"):
                env[name] = value
                home = value if name == "HOME" else home
            continue
        m = _TIMES.fullmatch(line)
        expr, rest = (m.group(1), m.group(2).strip()) if m else ("", line.strip())
        user = None
        if system and m:
            parts = rest.split(None, 1)
            user, rest = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], "")
        out.append(CronLine(number, expr, user, cron_runs(rest), shell, dict(env), list(path),
                            home, tz))
    return out


def first_firings(exprs: list[str], count: int = 3000) -> list[datetime]:
    """The first ``count`` times within the leap year that any of ``exprs`` fires."""
    times: set[datetime] = set()
    for expr in exprs:
        for n, t in enumerate(CronSim(MACROS.get(expr.lower(), expr), START - timedelta(minutes=1))):
            if n >= count or t >= END:
                break
            times.add(t)
    return sorted(times)[:count]


def same_times(expr: str, job: Job) -> bool:
    rendered = cron_lines(job)
    if expr.lower() == "@reboot":
        return rendered == ["@reboot"]
    # the same text is the same times for any cron; otherwise cronsim says
    return rendered == [expr] or first_firings(rendered) == first_firings([expr])


def check_cron(path: Path, tally: Tally, me: str, tmp: Path, flag: bool = False) -> None:
    """``flag``: import with --system."""
    tally.files += 1
    system = path.name in SYSTEM_FILES
    try:
        result = import_cron(path, tmp / "jobs.toml", system=flag)
        config = loads(result.text, tmp / "jobs.toml") if result.jobs else None
    except Exception:  # noqa: BLE001 - a crash is what this counts
        tally.add("crash", f"{path.name}: {traceback.format_exc(limit=3)}")
        return
    by_line = {int(src.rsplit(" ", 1)[1]): name for name, src in result.origins}
    notes = notes_by_source(result)
    for line in cron_oracle(path.read_text(encoding="utf-8"), system):
        tally.seen += 1
        here = notes.get(f"{path.name} line {line.number}", [])
        name = by_line.pop(line.number, None)
        where = f"{path.name} line {line.number}"
        if name is None:
            skips = [n for n in here if n.startswith("skipped") or "not a cron job line" in n]
            if skips:
                tally.add("skipped")
                tally.reasons[reason(skips[0])] += 1
            else:
                tally.add("dropped", where)
            continue
        assert config is not None
        job = config.job(name)
        home = str(Path.home())
        # a system crontab's line is a system-scope job run as its user field's account,
        # started where cron starts it (that account's home) unless HOME= says otherwise
        scope = ("user", None) if line.user is None else ("system", line.user)
        start = Path(line.home) if line.home else (Path(home) if line.user is None else None)
        exact = (line.command is not None and not line.tz
                 and (job.scope, job.user) == scope
                 and same_times(line.expr, job)
                 and same_as_cron(line.shell, line.command, job_argv(job, config), home)
                 and dict(job.env) == line.env and list(job.path) == line.path
                 and job.working_dir == start)
        judge(tally, exact, here, where)
    for number, name in by_line.items():
        tally.add("wrong", f"{path.name} line {number}: imported as {name} but no job line")


def judge(tally: Tally, exact: bool, here: list[str], where: str) -> None:
    for n in here:
        tally.notes_on_imported[note_kind(n)] += 1
    if exact:
        tally.add("exact, with a note" if here else "exact")
    elif here:
        tally.add("differs, with a note")
    else:
        tally.add("wrong", where)


def notes_by_source(result: ImportResult) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for note in result.notes:
        if note.message not in (CRON_LOCK_NOTE, LAUNCHD_LOCK_NOTE):
            out.setdefault(note.source, []).append(note.message)
    return out


# --- launchd ------------------------------------------------------------------------

def oracle_plist(path: Path) -> Any:
    """The plist as libplist reads it (lenient, like launchd); plistlib without it."""
    data = path.read_bytes()
    if shutil.which("plistutil"):
        binary = subprocess.run(["plistutil", "-i", str(path), "-f", "bin", "-o", "-"],
                                capture_output=True)
        if binary.returncode == 0 and binary.stdout:
            data = binary.stdout
        else:
            return None
    try:
        return plistlib.loads(data)
    except Exception:  # noqa: BLE001
        return None


def check_plist(path: Path, tally: Tally, me: str, tmp: Path) -> None:
    tally.files += 1
    tally.seen += 1
    try:
        result = import_launchd(path, tmp / "jobs.toml")
        config = loads(result.text, tmp / "jobs.toml") if result.jobs else None
    except Exception:  # noqa: BLE001
        tally.add("crash", f"{path.name}: {traceback.format_exc(limit=3)}")
        return
    here = notes_by_source(result).get(path.name, [])
    if not result.jobs:
        skips = [n for n in here if n.startswith("skipped")]
        if skips:
            tally.add("skipped")
            tally.reasons[reason(skips[0])] += 1
        else:
            tally.add("dropped", path.name)
        return
    assert config is not None
    job = config.jobs[0]
    plist = oracle_plist(path)
    judge(tally, plist is not None and same_launchd(plist, job, config, me), here, path.name)


def same_launchd(plist: dict[str, Any], job: Job, config: Config, me: str) -> bool:
    if plist.get("KeepAlive") or plist.get("UserName", me) != me:
        return False
    args = list(plist.get("ProgramArguments") or [])
    argv = [plist["Program"], *args[1:]] if plist.get("Program") else args
    if job_argv(job, config) != argv:
        return False
    calendar = plist.get("StartCalendarInterval")
    exprs = [e.text for e in job.schedule if not isinstance(e, Every)]
    if calendar is not None:
        dicts = calendar if isinstance(calendar, list) else [calendar]
        if cronsim_minutes(exprs, START, END) != launchd_minutes(dicts, START, END):
            return False
    elif "StartInterval" in plist:
        if [e.seconds for e in job.schedule if isinstance(e, Every)] != [plist["StartInterval"]]:
            return False
    elif exprs != ["@reboot"]:
        return False
    env = dict(plist.get("EnvironmentVariables", {}))
    wanted_path = env.pop("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
    wd = os.path.normpath(os.path.join("/", plist.get("WorkingDirectory", "/")))
    return (dict(job.env) == env and ":".join(job.path) == wanted_path
            and str(job.working_dir) == wd
            and job.run_at_load == bool(plist.get("RunAtLoad") and (calendar or "StartInterval"
                                                                     in plist)))


# --- report -------------------------------------------------------------------------

KINDS = ("cron", "cron --system", "launchd")


def run(corpus: Path, kinds: tuple[str, ...] = KINDS) -> dict[str, Tally]:
    me = import_cron_system.current_user()
    tallies = {kind: Tally() for kind in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((corpus / "cron").iterdir()):
            if "cron" in tallies:
                check_cron(path, tallies["cron"], me, Path(tmp))
            if "cron --system" in tallies and path.name in SYSTEM_FILES:
                check_cron(path, tallies["cron --system"], me, Path(tmp), flag=True)
        for path in sorted((corpus / "launchd").glob("*.plist")) if "launchd" in tallies else ():
            check_plist(path, tallies["launchd"], me, Path(tmp))
    return tallies


def report(tallies: dict[str, Tally]) -> str:
    out = [f"(running as {import_cron_system.current_user()!r}: system crontab lines become "
           "system-scope jobs of their user field's account)"]
    for kind, t in tallies.items():
        unit = "plists" if kind == "launchd" else "job lines"
        out.append(f"\n{kind}: {t.files} files, {t.seen} {unit}")
        for bucket in ("exact", "exact, with a note", "differs, with a note", "skipped", "wrong",
                       "dropped", "crash"):
            out.append(f"  {bucket:<22} {t.buckets[bucket]:>4}")
        out.append("  skipped, by reason:")
        out += [f"    {n:>4}  {r}" for r, n in t.reasons.most_common()]
        out.append("  notes on imported jobs, by kind:")
        out += [f"    {n:>4}  {k}" for k, n in t.notes_on_imported.most_common()]
        out += [f"  FAIL {f}" for f in t.failures]
    return "\n".join(out)


def main() -> int:
    corpus = find_corpus(sys.argv[1] if len(sys.argv) > 1 else None)
    if corpus is None:
        print("corpus not found (give its folder, or set SCHEDGEN_CORPUS)", file=sys.stderr)
        return 2
    tallies = run(corpus)
    print(report(tallies))
    return 1 if any(t.failures for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
