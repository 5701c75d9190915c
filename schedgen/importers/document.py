"""`schedgen import`: jobs found in a crontab or in plists → a jobs.toml that validates.

The readers (import_cron, import_launchd) turn their source into `Found` jobs, each
holding jobs.toml keys, and `Skipped` notes for what cannot be represented. This
module names the jobs, writes the document with tomli-w, and checks it with
schedgen's own loader before anyone sees it: a job the loader rejects is dropped
and reported, never written. Imported jobs keep schedgen's default lock, and a note
says so; `--no-lock` writes `lock = false` instead.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedgen.config import load as cfg
from schedgen.errors import ConfigError, SchedgenError

_SANITISE = re.compile(r"[^a-z0-9_-]+")
_EXTENSIONS = (".sh", ".bash", ".zsh", ".py", ".rb", ".pl", ".js", ".mjs", ".ts", ".php", ".command")
# Programs that run another program: the job is named after what they run.
_WRAPPERS = {"env", "nice", "nohup", "exec", "sudo", "time", "ionice", "chronic", "caffeinate",
             "timeout", "flock", "command", "xargs", "npx", "pnpm", "yarn", "npm", "bunx", "uv",
             "poetry", "bundle", "run", "dlx"}
_INTERPRETERS = re.compile(
    r"(?:ba|z|da|k)?sh|python[0-9.]*|node|ruby|perl|php|deno|bun|osascript|tsx|ts-node")
_SETUP = {"cd", "export", "source", ".", "set", "umask", "ulimit", "test", "[", "true", ":"}
_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "{", "}"}
# What a note says of the default lock every imported job gets: each importer says it
# in its own words (its scheduler may or may not run a job twice at once).
LOCK_HOW = "import with --no-lock to write `lock = false` instead"


@dataclass(frozen=True)
class Found:
    """One job as found: jobs.toml keys plus where it came from."""

    source: str  # "crontab line 7", "com.me.backup.plist"
    name_hint: str  # a label or a command; the job name is derived from it
    keys: dict[str, Any] = field(default_factory=dict)
    remark: str = ""  # shown beside the source in the header ("user root")


@dataclass(frozen=True)
class Note:
    """Something the user should know: a skipped job or an ignored setting."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass(frozen=True)
class ImportResult:
    text: str  # the jobs.toml, validated
    jobs: tuple[str, ...]
    notes: tuple[Note, ...]
    origins: tuple[tuple[str, str], ...] = ()  # (job name, where it came from)


def job_name(hint: str, taken: set[str], tried: dict[str, int] | None = None) -> str:
    """A valid job name (``[a-z0-9][a-z0-9_-]*``, ≤ 64) from ``hint``, unique within ``taken``.
    ``tried`` (base name -> last suffix tried) lets 20,000 jobs of one program each
    start where the last one stopped, rather than count up from 2 again."""
    ascii_hint = unicodedata.normalize("NFKD", hint).encode("ascii", "ignore").decode()
    base = _SANITISE.sub("-", ascii_hint.lower()).strip("-_") or "job"
    base = re.sub(r"-{2,}", "-", base)[:60].rstrip("-_") or "job"
    tried = {} if tried is None else tried
    name, n = base, tried.get(base, 1)
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    tried[base] = n
    taken.add(name)
    return name


def program_name(command: str | list[str]) -> str:
    """The basename of what a command runs, skipping cd/env/nice and interpreters."""
    words = _words(command)  # separators apart even when written onto a word ("a;", "x&&y")
    segment: list[str] = []
    for word in [*words, ";"]:
        if word not in _SEPARATORS:
            segment.append(word)
            continue
        found = _segment_program(segment)
        if found:
            return found
        segment = []
    return "job"


# Everyday tools: a job running one is named after what it works on, when it says.
_TOOLS = {"date", "echo", "printf", "tar", "rsync", "cp", "mv", "rm", "find", "curl", "wget",
          "touch", "mkdir", "cat", "gzip", "zip", "ln", "du", "df", "ls", "tee", "true",
          "sleep", "logger", "git", "docker", "pg_dump", "mysqldump", "sqlite3", "scp",
          "restic", "borg", "rclone", "make"}
_REDIRECT = re.compile(r"[0-9]?>>?")


def what_it_does(command: str | list[str]) -> str:
    """A name hint: the script a command runs; for an everyday tool (`date`, `tar`) the
    file it writes to (`date >> ~/heartbeat.log`: heartbeat), else the tool and what it
    works on (`tar -czf ~/b/notes.tgz ~/notes`: tar-notes)."""
    if not isinstance(command, str) and len(command) == 3 and command[1] == "-c" and \
            _INTERPRETERS.fullmatch(os.path.basename(command[0])):
        command = command[2]  # [SHELL, "-c", what cron ran]
    prog = program_name(command)
    if prog not in _TOOLS:
        return prog
    words = _words(command)
    for i, w in enumerate(words[:-1]):
        if _REDIRECT.fullmatch(w) and _stem(words[i + 1]) not in ("", "null"):
            return _stem(words[i + 1])
    at = next((i for i, w in enumerate(words) if os.path.basename(w) == prog), -1)
    args = []
    for w in words[at + 1:]:
        if w in _SEPARATORS or _REDIRECT.fullmatch(w):
            break
        if not w.startswith(("-", "+")) and _stem(w):  # "$HOME/x" is a path, "$X" nothing
            args.append(w)
    # a path says more than a word (`tar czf ~/b/notes.tgz`: notes, not czf)
    pick = next((w for w in args if "/" in w or "." in w), args[0] if args else None)
    return f"{prog}-{_stem(pick)}" if pick else prog


def _stem(word: str) -> str:
    """`~/backups/notes-$(date +%F).tgz` -> notes."""
    base = os.path.basename(word.rstrip("/")).lstrip(".")
    return re.split(r"[.$(`{%]", base, maxsplit=1)[0].strip("-_")


# A command with no quote, escape or comment splits as shlex would split it (at blanks
# and around runs of its punctuation) with one regex: shlex read 20,000 lines char by char.
_SHLEX_SPECIAL = re.compile(r"['\"\\#]")
_PLAIN_WORDS = re.compile(r"[();<>|&]+|[^ \t\r\n();<>|&]+")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_DURATION = re.compile(r"[0-9.]+[smhd]?")
_BLANK = re.compile(r"\s")


def _words(command: str | list[str]) -> list[str]:
    if not isinstance(command, str):
        return list(command)
    if _SHLEX_SPECIAL.search(command) is None:
        return _PLAIN_WORDS.findall(command)
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return command.split()


def _segment_program(words: list[str]) -> str | None:
    i = 0
    while i < len(words) and _ASSIGNMENT.fullmatch(words[i]):
        i += 1  # FOO=bar before the program
    if i >= len(words) or words[i] in _SETUP:
        return None
    prog = os.path.basename(words[i].rstrip("/")) or words[i]
    rest = words[i + 1:]
    if prog in _WRAPPERS or _INTERPRETERS.fullmatch(prog):
        if _INTERPRETERS.fullmatch(prog) and "-c" in rest:
            inner = rest[rest.index("-c") + 1:]
            return program_name(inner[0]) if inner else prog
        # what it runs is a file or a program: not an option, a duration or inline code
        args = [w for w in rest if not w.startswith("-") and not _DURATION.fullmatch(w)
                and not _ASSIGNMENT.fullmatch(w) and not _BLANK.search(w)]
        if args:
            inner_found = _segment_program(args)
            if inner_found:
                return inner_found
    for ext in _EXTENSIONS:
        if prog.lower().endswith(ext) and len(prog) > len(ext):
            return prog[: -len(ext)]
    return prog


def build(found: list[Found], target: str, origin: str, path: Path,
          lock: bool = True, lock_note: str = "") -> ImportResult:
    """Name the jobs, write the document and validate it; drop (and report) what fails.

    ``lock``: keep schedgen's default lock (said in ``lock_note``), or write ``lock = false``.
    """
    notes: list[Note] = []
    taken: set[str] = set()
    tried: dict[str, int] = {}
    named = [(job_name(f.name_hint, taken, tried), f) for f in found]
    factor = True
    while True:
        text, doc = _toml(named, target, origin, factor, lock)
        if not named:
            return ImportResult(text, (), tuple(notes))
        origins = tuple((n, f.source) for n, f in named)
        try:
            cfg.loads(text, path, _as_read(doc))
        except ConfigError as exc:
            bad = _jobs_named(exc, {n for n, _ in named})
            if not bad and factor:
                factor = False  # a shared value is bad: keep values per job to find whose
                continue
            if not bad:
                raise SchedgenError(f"import produced an invalid jobs.toml (a bug):\n{exc}") from None
            for name, f in named:
                if name in bad:
                    notes += [Note(f.source, f"skipped: {_field(p.where)}{p.message}")
                              for p in exc.problems if _problem_job(p.where) == name]
            named = [(n, f) for n, f in named if n not in bad]
            continue
        if lock:
            notes.append(Note(origin, lock_note))
        return ImportResult(text, tuple(n for n, _ in named), tuple(notes), origins)


def _problem_job(where: str) -> str | None:
    parts = where.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "jobs" else None


def _field(where: str) -> str:
    parts = where.split(".", 2)
    return f"{parts[2]}: " if len(parts) == 3 else ""


def _jobs_named(exc: ConfigError, names: set[str]) -> set[str]:
    hit = {_problem_job(p.where) for p in exc.problems}
    # Every problem must belong to a job, or dropping jobs cannot fix the document.
    if None in hit or not hit <= names:
        return set()
    return {h for h in hit if h}


def _as_read(value: Any) -> Any:
    """The document as tomllib would read it back: tuples are arrays (lists), tables are
    new dicts (the loader never shares one with a Found)."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _as_read(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _SCALARS else _as_read(v) for v in value]
    return value


_SCALARS = frozenset((str, int, float, bool))


def render_toml(named: list[tuple[str, Found]], target: str, origin: str,
                factor: bool = True, lock: bool = True) -> str:
    return _toml(named, target, origin, factor, lock)[0]


def _toml(named: list[tuple[str, Found]], target: str, origin: str,
          factor: bool = True, lock: bool = True) -> tuple[str, dict[str, Any]]:
    """The jobs.toml text and the document it is written from."""
    import tomli_w

    jobs = {name: dict(f.keys) for name, f in named}
    defaults: dict[str, Any] = {"targets": [target]}
    if not lock:
        defaults["lock"] = False
    for key in ("path", "working_dir") if factor else ():
        # The most common value (shared by two jobs at least) moves to [defaults]; the
        # readers give every job both keys, so no job silently inherits one.
        # Counted by value in one pass (comparing each with all was quadratic); on a tie
        # the value seen first wins.
        seen: dict[str, list[Any]] = {}  # repr -> [count, -first index, value]
        for i, v in enumerate(j[key] for j in jobs.values() if key in j):
            seen.setdefault(repr(v), [0, -i, v])[0] += 1
        count, _, common = max((tuple(c) for c in seen.values()), default=(0, 0, None))
        if count >= 2 or (count == 1 and len(jobs) == 1):
            defaults[key] = common
            for j in jobs.values():
                if j.get(key) == common:
                    del j[key]
    notifies = [j.get("notify") for j in jobs.values()]
    if factor and len(jobs) > 1 and notifies[0] is not None and \
            all(n == notifies[0] for n in notifies):
        defaults["notify"] = notifies[0]  # one MAILTO over every job
        for j in jobs.values():
            del j["notify"]
    doc = {"format": cfg.FORMAT, "defaults": defaults, "jobs": jobs}
    width = max((len(n) for n, _ in named), default=0)
    adopting = any("adopts" in f.keys for _, f in named)
    lines = [
        f"# Imported by `schedgen import --from {target}` from {origin}.",
        *(["# Each job's `adopts` names the original it replaces: `schedgen diff` shows it,",
           "# `schedgen apply` turns it off (so no job runs twice) and `schedgen uninstall`",
           "# puts it back as it was."] if adopting else
          ["# The originals are still installed: remove them before `schedgen apply`,",
           "# or every job runs twice."]),
        *(f"#   {n.ljust(width)}  <- {f.source}{f' ({f.remark})' if f.remark else ''}"
          for n, f in named),
        "",
    ]
    body = tomli_w.dumps(doc, multiline_strings=False)
    return "\n".join(lines) + _NOTIFY_HEADER.sub(_MAIL_WORDS, body), doc


_NOTIFY_HEADER = re.compile(r"^(\[(?:defaults|jobs\.[a-z0-9_-]+)\.notify\]\n)", re.MULTILINE)
_MAIL_WORDS = (
    "# From the crontab's MAILTO: cron mailed that address whatever a job printed. This\n"
    "# mails it through the local sendmail (`sendmail -t -i`) when a job fails, and when\n"
    "# it works again after a failure (what happened, the last lines of its stderr); each\n"
    "# run's output is kept in its run directory (`schedgen logs JOB`). Remove this table\n"
    "# for no mail.\n"
    "\\1")
