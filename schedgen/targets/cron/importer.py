"""Read a crontab (outside schedgen's own block) into `Found` jobs.

What cron does, reproduced: env lines apply to every job below them (PATH becomes
`path`, HOME is where the job runs); without a PATH line cron uses /usr/bin:/bin;
cron runs each command with ``$SHELL -c`` (/bin/sh unless SHELL says otherwise), so
an imported command keeps that shell; ``\\%`` is a literal percent sign; an unescaped
``%`` ends the command and feeds the rest to its stdin, which a schedgen job cannot
do, so such a line is reported and skipped rather than changed. A system crontab
(see import_cron_system) has a user name before each command. A comment directly
above a job becomes its description when it reads like one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from schedgen.config.model import PLACEHOLDERS
from schedgen.config.notify import ADDRESS
from schedgen.errors import SchedgenError
from schedgen.importers import cron_system as system_cron
from schedgen.importers.cron_command import CRON_DEFAULT_SHELL, as_command, unescape_command
from schedgen.importers.document import LOCK_HOW, Found, ImportResult, Note, build, what_it_does
from schedgen.schedule.expressions import MACROS, parse_entry
from schedgen.targets.cron import adopt, crontab
from schedgen.targets.cron import cron_text as text

# as_command and unescape_command live in import_cron_command; named here as before.
__all__ = ["as_command", "import_cron", "parse_crontab", "read_crontab", "unescape_command"]

CRON_DEFAULT_PATH = ["/usr/bin", "/bin"]  # Debian, cronie and macOS cron alike
# cron's own test: a name without spaces, then "=" (a job line never has that shape).
_ENV = re.compile(r"\s*([^\s=#]+)\s*=\s*(.*?)\s*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JOB = re.compile(r"\s*(@\S+|(?:\S+\s+){4}\S+)\s+(.*)")
_PLACEHOLDER = re.compile(r"\{(?:" + "|".join(PLACEHOLDERS) + r")\}")
_SANE_SHELL = re.compile(r"/[A-Za-z0-9_./+-]+")


LOCK_NOTE = ("every imported job runs under schedgen's default lock: a run that starts while "
             "the last one is still going exits 75 at once, where cron would have run both; "
             + LOCK_HOW)


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


def import_cron(file: Path | None, dest: Path, system: bool = False,
                lock: bool = True) -> ImportResult:
    """``system``: the file has a user field (also when its path or header says so)."""
    if system and file is None:
        file = system_cron.SYSTEM_CRONTAB
    table, origin = read_crontab(file)
    if file is not None and system_cron.is_system_path(file):
        system = True
    found, notes = parse_crontab(table, "crontab" if file is None else file.name,
                                 system=system or None)
    if file is not None and system_cron.ignored_by_debian(file):
        notes.insert(0, Note(file.name, "Debian's cron ignores a file in /etc/cron.d whose name "
                                        "holds other characters than letters, digits, _ and -: "
                                        "there these jobs never ran (cronie runs them)"))
    result = build(found, "cron", origin, dest, lock=lock, lock_note=LOCK_NOTE)
    return ImportResult(result.text, result.jobs, (*notes, *result.notes), result.origins)


_ADDRESS = re.compile(ADDRESS)


def mail_notify(mailto: str) -> dict[str, Any] | None:
    """MAILTO as a [notify]: mail through the local sendmail, as cron did (its
    comma-separated addresses as a list); None when no address in it is one schedgen takes."""
    to = [a.strip() for a in mailto.split(",") if _ADDRESS.fullmatch(a.strip())]
    if not to:
        return None
    return {"on": ["failure", "recovery"], "mail": to[0] if len(to) == 1 else to}


class _State:
    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.path = list(CRON_DEFAULT_PATH)
        self.home: str | None = None
        self.shell = CRON_DEFAULT_SHELL
        self.cron_tz: str | None = None
        self.mailto = ""


def parse_crontab(text_: str, where: str, system: bool | None = None,
                  user: str | None = None) -> tuple[list[Found], list[Note]]:
    """``system``: True/False, or None to decide from a header comment naming a user column;
    ``user``: who runs schedgen (default: the current user)."""
    found: list[Found] = []
    notes: list[Note] = []
    state = _State()
    comments: list[str] = []
    lines = text_.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        notes.append(Note(f"{where} line {len(lines)}", "has no newline at the end; some cron "
                                                         "versions ignore such a line (imported)"))
    if system is None:
        header = [ln.strip().lstrip("#") for ln in lines if ln.strip().startswith("#")]
        system = system_cron.header_names_user_field(header)
        if system:
            notes.append(Note(where, "read as a system crontab (a user name before each "
                                     "command): its header comment says so"))
    me = user or system_cron.current_user()
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
        if adopt.MARK.fullmatch(line):
            notes.append(Note(at, "turned off by schedgen (a job of its adopts it); not "
                                  "imported again"))
            comments = []
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            if text.is_stock_example(body, _JOB):
                comments.append("")  # a column header, not a description
            elif _looks_like_job(body):
                notes.append(Note(at, "commented-out job, not imported"))
                comments = []
            else:
                comments.append(body)
            continue
        env = _ENV.fullmatch(line)
        if env:
            _set_env(state, _unquote(env.group(1)), _unquote(env.group(2)), at, notes)
            comments = []  # a comment above a setting is about the setting
            continue
        job = _job(line, state, text.description(comments), at, notes, system, me)
        comments = []
        if job is not None:
            found.append(job)
    if in_block:
        notes.append(Note(where, "schedgen's block has no END line; everything after BEGIN was "
                                 "treated as schedgen's own"))
    return found, notes


def _looks_like_job(body: str) -> bool:
    m = _JOB.fullmatch(body)
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
        state.shell = value or CRON_DEFAULT_SHELL
        if not _SANE_SHELL.fullmatch(state.shell):
            notes.append(Note(at, f"SHELL={state.shell!r} is not a plain absolute path: cron "
                                  "cannot run the jobs below it either; they are imported with "
                                  "it as they are"))
    elif name == "MAILTO":
        state.mailto = value  # MAILTO="" turns mail off, as schedgen has it anyway
        if value and mail_notify(value) is None:
            notes.append(Note(at, f"MAILTO={value}: no address schedgen can mail (user@host, "
                                  "or a local user); the jobs below it get no [notify]"))
        elif value:
            notes.append(Note(at, f"MAILTO={value}: the jobs below it get a [notify] that mails "
                                  "it through the local sendmail on a failure and on the "
                                  "recovery after one (cron mailed any output); read it in "
                                  "the jobs.toml"))
    elif name == "MAILFROM":
        if value:
            notes.append(Note(at, "MAILFROM ignored: the [notify] mail goes out as sendmail's "
                                  "default sender"))
    elif name == "CRON_TZ":
        state.cron_tz = value or None
    else:
        state.env[name] = value


def _job(line: str, state: _State, description: str, at: str, notes: list[Note],
         system: bool, me: str) -> Found | None:
    def skip(why: str) -> None:
        notes.append(Note(at, f"skipped: {why}"))

    m = _JOB.fullmatch(line)
    if not m or not m.group(2).strip():
        notes.append(Note(at, "not a cron job line (expected 5 time fields or a macro, then a "
                              f"{'user and a ' if system else ''}command); skipped"))
        return None
    expr, rest = m.group(1), m.group(2).strip()
    if expr.startswith("@") and expr.lower() not in (*MACROS, "@reboot"):
        skip(f"cron does not know {expr!r}")
        return None
    try:
        entry = parse_entry(expr)
    except ValueError as exc:
        skip(f"schedule {expr!r}: {exc}")
        return None
    remark = ""
    if system:
        split = system_cron.split_user(line, rest)
        if split is None:
            skip(f"a system crontab line is: time fields, user, command; this one has only "
                 f"{rest!r} after the times")
            return None
        command = split.command
        remark = f"user {split.user}"
    else:
        command = unescape_command(rest)
    if command is None:
        skip("an unescaped % sends the rest of the line to the command's stdin, which a "
             "schedgen job cannot do; write the input into a script (or escape it as \\%) and "
             "import again")
        return None
    if not system:
        first = command.split()[0]
        if system_cron.looks_like_user_field(first, state.path):
            skip(f"{first!r} before the command looks like the user field of a system crontab "
                 "(/etc/crontab, /etc/cron.d), and is no program on the job's PATH; if this is "
                 "one, import it again with --system")
            return None
    if state.cron_tz:
        skip(f"CRON_TZ={state.cron_tz} runs it in another time zone, which schedgen cannot "
             "express")
        return None
    placeholder = _PLACEHOLDER.search(command)
    if placeholder:
        skip(f"the command holds {placeholder.group(0)}, which schedgen would replace at run "
             "time")
        return None
    if unescape_command(rest, bsd=True) != unescape_command(rest, bsd=False):
        notes.append(Note(at, "'\\\\' in the command: Debian's cron and cronie make it '\\', "
                              "BSD and macOS cron keep both; read as this host's cron does"))
    cmd = as_command(command, state.shell, home_from_env=state.home is not None)
    keys: dict[str, Any] = {}
    if description:
        keys["description"] = description
    keys["command"] = cmd
    keys["schedule"] = entry.text
    if system:  # the machine's job, run as the line's user (apply as root installs it)
        keys["scope"] = "system"
        keys["user"] = remark.removeprefix("user ")
    if state.home or not system:  # cron starts a system line in its user's home
        keys["working_dir"] = state.home or "~"
    if state.env:
        keys["env"] = dict(state.env)
    keys["path"] = list(state.path)
    if state.mailto:
        mail = mail_notify(state.mailto)
        if mail is not None:
            keys["notify"] = mail
    if not system:  # a line of the user's own crontab: apply turns it off, uninstall back on
        keys["adopts"] = f"cron: {line}"
    return Found(source=at, name_hint=what_it_does(cmd), keys=keys, remark=remark)
