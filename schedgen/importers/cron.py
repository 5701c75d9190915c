"""Read a user's crontab (outside schedgen's own block) into `Found` jobs.

What cron does, reproduced: env lines apply to every job below them (PATH becomes
`path`, HOME is where the job runs); without a PATH line cron uses /usr/bin:/bin;
``\\%`` is a literal percent sign; an unescaped ``%`` ends the command and feeds the
rest to its stdin, which a schedgen job cannot do, so such a line is reported and
skipped rather than changed. A comment block right above a job becomes its description.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from schedgen.errors import SchedgenError
from schedgen.importers.document import Found, ImportResult, Note, build, program_name
from schedgen.schedule.expressions import MACROS, parse_entry
from schedgen.targets import crontab

CRON_DEFAULT_PATH = ["/usr/bin", "/bin"]  # Debian, cronie and macOS cron alike
# cron's own test: a name without spaces, then "=" (a job line never has that shape).
_ENV = re.compile(r"\s*([^\s=#]+)\s*=\s*(.*?)\s*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JOB = re.compile(r"\s*(@\S+|(?:\S+\s+){4}\S+)\s+(.*)")
_SAFE_WORD = re.compile(r"(?:~/)?[A-Za-z0-9_@%+=:,./-]+")
# Shell words that are not programs: such a command stays a `bash -c` string.
_SHELL_WORDS = {
    "!", ".", ":", "[", "[[", "alias", "bg", "break", "builtin", "case", "cd", "command",
    "continue", "declare", "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit",
    "export", "false", "fi", "for", "function", "getopts", "hash", "if", "jobs", "kill", "let",
    "local", "printf", "pwd", "read", "readonly", "return", "select", "set", "shift", "source",
    "test", "then", "time", "times", "trap", "true", "type", "typeset", "ulimit", "umask",
    "unalias", "unset", "until", "wait", "while", "{", "}",
}
_PLAIN_SHELLS = {"/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash", "sh", "bash"}


def read_crontab(file: Path | None) -> tuple[str, str]:
    """The crontab text and where it came from: ``file``, or `crontab -l` found on PATH."""
    if file is not None:
        try:
            return file.read_text(encoding="utf-8"), str(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise SchedgenError(f"cannot read {file}: {exc}") from None
    # The same reader `apply` uses: "no crontab for <user>" is an empty table.
    table = crontab.read()
    return table.text, "the crontab (crontab -l)" if table.present else "the crontab (empty)"


def import_cron(file: Path | None, dest: Path) -> ImportResult:
    text, origin = read_crontab(file)
    found, notes = parse_crontab(text, "crontab" if file is None else file.name)
    result = build(found, "cron", origin, dest)
    return ImportResult(result.text, result.jobs, (*notes, *result.notes), result.origins)


def unescape_command(command: str) -> str | None:
    """cron's view of a command: ``\\%`` → ``%``; None when an unescaped % sends stdin."""
    out, i = [], 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and command[i + 1:i + 2] == "%":
            out.append("%")
            i += 2
            continue
        if ch == "%":
            return None
        out.append(ch)
        i += 1
    return "".join(out)


def as_command(command: str) -> str | list[str]:
    """An argv list when the shell would only split on spaces, else the string for bash -c."""
    words = command.split()
    if (words and all(_SAFE_WORD.fullmatch(w) for w in words) and words[0] not in _SHELL_WORDS
            and "=" not in words[0]):
        return words
    return command


class _State:
    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.path = list(CRON_DEFAULT_PATH)
        self.home: str | None = None
        self.shell = "/bin/sh"
        self.cron_tz: str | None = None


def parse_crontab(text: str, where: str) -> tuple[list[Found], list[Note]]:
    found: list[Found] = []
    notes: list[Note] = []
    state = _State()
    comments: list[str] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        notes.append(Note(f"{where} line {len(lines)}", "has no newline at the end; some cron "
                                                         "versions ignore such a line (imported)"))
    in_block = False
    for number, raw in enumerate(lines, 1):
        at = f"{where} line {number}"
        line = raw.rstrip("\r")
        stripped = line.strip()
        if in_block:
            in_block = not stripped.startswith("# END schedgen")
            continue
        if stripped.startswith("# BEGIN schedgen"):
            in_block = True
            comments = []
            continue
        if not stripped:
            comments = []
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            if _looks_like_job(body):
                notes.append(Note(at, "commented-out job, not imported"))
                comments = []
            elif body:
                comments.append(body)
            continue
        env = _ENV.fullmatch(line)
        if env:
            _set_env(state, _unquote(env.group(1)), _unquote(env.group(2)), at, notes)
            continue
        job = _job(line, state, comments, at, notes)
        comments = []
        if job is not None:
            found.append(job)
    if in_block:
        notes.append(Note(where, "schedgen's block has no END line; everything after BEGIN was "
                                 "treated as schedgen's own"))
    return found, notes


def _looks_like_job(text: str) -> bool:
    m = _JOB.fullmatch(text)
    if not m or not m.group(2).strip():
        return False
    try:
        parse_entry(m.group(1))
    except ValueError:
        return False
    return m.group(1).startswith("@") or m.group(1)[0].isdigit() or m.group(1)[0] == "*"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _set_env(state: _State, name: str, value: str, at: str, notes: list[Note]) -> None:
    if not _ENV_NAME.fullmatch(name):
        notes.append(Note(at, f"{name!r} is not a variable name a shell can export; ignored"))
    elif name == "PATH":
        state.path = [p for p in value.split(":") if p]
    elif name == "HOME":
        state.home = value
        state.env[name] = value
    elif name == "SHELL":
        state.shell = value
    elif name in ("MAILTO", "MAILFROM"):
        notes.append(Note(at, f"{name} ignored: schedgen keeps each run's output in its run "
                              "directory instead of mailing it"))
    elif name == "CRON_TZ":
        state.cron_tz = value or None
    else:
        state.env[name] = value


def _job(line: str, state: _State, comments: list[str], at: str,
         notes: list[Note]) -> Found | None:
    m = _JOB.fullmatch(line)
    if not m or not m.group(2).strip():
        notes.append(Note(at, "not a cron job line (expected 5 time fields or a macro, then a "
                              "command); skipped"))
        return None
    expr, rest = m.group(1), m.group(2).strip()
    if expr.startswith("@") and expr.lower() not in (*MACROS, "@reboot"):
        notes.append(Note(at, f"skipped: cron does not know {expr!r}"))
        return None
    try:
        entry = parse_entry(expr)
    except ValueError as exc:
        notes.append(Note(at, f"skipped: schedule {expr!r}: {exc}"))
        return None
    command = unescape_command(rest)
    if command is None:
        notes.append(Note(at, "skipped: an unescaped % sends the rest of the line to the "
                              "command's stdin, which a schedgen job cannot do; write the input "
                              "into a script (or escape it as \\%) and import again"))
        return None
    if state.cron_tz:
        notes.append(Note(at, f"skipped: CRON_TZ={state.cron_tz} runs it in another time zone, "
                              "which schedgen cannot express"))
        return None
    cmd = as_command(command)
    if isinstance(cmd, str) and state.shell not in _PLAIN_SHELLS:
        notes.append(Note(at, f"skipped: SHELL={state.shell} runs this command, schedgen runs "
                              "command strings with bash"))
        return None
    keys: dict[str, Any] = {}
    description = " ".join(comments)
    if description:
        keys["description"] = description
    keys["command"] = cmd
    keys["schedule"] = entry.text
    keys["working_dir"] = state.home or "~"
    if state.env:
        keys["env"] = dict(state.env)
    keys["path"] = list(state.path)
    return Found(source=at, name_hint=program_name(cmd), keys=keys)
