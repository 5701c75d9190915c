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


def job_name(hint: str, taken: set[str]) -> str:
    """A valid job name (``[a-z0-9][a-z0-9_-]*``, ≤ 64) from ``hint``, unique within ``taken``."""
    ascii_hint = unicodedata.normalize("NFKD", hint).encode("ascii", "ignore").decode()
    base = _SANITISE.sub("-", ascii_hint.lower()).strip("-_") or "job"
    base = re.sub(r"-{2,}", "-", base)[:60].rstrip("-_") or "job"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def program_name(command: str | list[str]) -> str:
    """The basename of what a command runs, skipping cd/env/nice and interpreters."""
    if isinstance(command, str):
        try:  # separators apart even when written onto a word ("a;", "x&&y")
            lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError:
            words = command.split()
    else:
        words = list(command)
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


def _segment_program(words: list[str]) -> str | None:
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i]):
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
        args = [w for w in rest if not w.startswith("-") and not re.fullmatch(r"[0-9.]+[smhd]?", w)
                and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w) and not re.search(r"\s", w)]
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
    named = [(job_name(f.name_hint, taken), f) for f in found]
    factor = True
    while True:
        text = render_toml(named, target, origin, factor, lock)
        if not named:
            return ImportResult(text, (), tuple(notes))
        origins = tuple((n, f.source) for n, f in named)
        try:
            cfg.loads(text, path)
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


def render_toml(named: list[tuple[str, Found]], target: str, origin: str,
                factor: bool = True, lock: bool = True) -> str:
    import tomli_w

    jobs = {name: dict(f.keys) for name, f in named}
    defaults: dict[str, Any] = {"targets": [target]}
    if not lock:
        defaults["lock"] = False
    for key in ("path", "working_dir") if factor else ():
        # The most common value (shared by two jobs at least) moves to [defaults]; the
        # readers give every job both keys, so no job silently inherits one.
        values = [j[key] for j in jobs.values() if key in j]
        counts = [(sum(v == w for w in values), -i, v) for i, v in enumerate(values)]
        count, _, common = max(counts, default=(0, 0, None))
        if count >= 2 or (count == 1 and len(jobs) == 1):
            defaults[key] = common
            for j in jobs.values():
                if j.get(key) == common:
                    del j[key]
    doc = {"format": cfg.FORMAT, "defaults": defaults, "jobs": jobs}
    width = max((len(n) for n, _ in named), default=0)
    lines = [
        f"# Imported by `schedgen import --from {target}` from {origin}.",
        "# The originals are still installed: remove them before `schedgen apply`,",
        "# or every job runs twice.",
        *(f"#   {n.ljust(width)}  <- {f.source}{f' ({f.remark})' if f.remark else ''}"
          for n, f in named),
        "",
    ]
    return "\n".join(lines) + tomli_w.dumps(doc, multiline_strings=False)
