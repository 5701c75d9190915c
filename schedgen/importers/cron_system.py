"""System crontabs (/etc/crontab, /etc/cron.d): a user name between the times and the command.

Which format a file has comes from its path, a header comment that names the user
column (Debian's stock `# m h dom mon dow user command`), or `--system`. The user
field is read with python-crontab's system-crontab reader; the command is taken
from it too, except where that reader is known to differ from cron (it ends the
command at the first ` #`, which cron passes on to the shell). python-crontab's
writer is never used (docs/design.md, "Known traps"). Lines for another user than the one running
schedgen are reported and skipped: a job of theirs cannot go into your crontab.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.importers.cron_command import unescape_command

SYSTEM_CRONTAB = Path("/etc/crontab")
SYSTEM_CRON_DIR = Path("/etc/cron.d")
# A header comment that names a user column, as Debian's, cronie's and busybox's stock
# files and hand-written ones do ("user-name command to be executed", "dow user command").
_HEADER = re.compile(
    r"(?:(?:\bdow|\bwday|\bweekday|\bday.of.week|\*)\s+(?:user(?:-?name)?|who|usr)\s+"
    r"(?:command|cmd)\b)"
    r"|(?:have\s+user\s*name\s+fields)", re.IGNORECASE)
_USER_NAME = re.compile(r"[a-z_][a-z0-9_.-]*\$?", re.IGNORECASE)
# Accounts that appear in the user field of system crontabs far more often than as programs.
_COMMON_ACCOUNTS = {"root", "ubuntu", "pi", "www-data", "nobody", "admin", "ec2-user", "centos",
                    "debian", "daemon", "postgres", "mysql", "deploy", "www", "apache", "nginx"}


class UserLine(NamedTuple):
    user: str
    command: str | None  # as cron runs it; None: an unescaped % sends stdin
    by_python_crontab: bool  # False where its reader falls short and the line was read as written


def is_system_path(path: Path) -> bool:
    """/etc/crontab or a file in /etc/cron.d (as the path is given, or as it resolves)."""
    for p in {path.absolute(), path.resolve()}:
        if p == SYSTEM_CRONTAB or p.parent == SYSTEM_CRON_DIR:
            return True
    return False


def ignored_by_debian(path: Path) -> bool:
    """Debian's cron skips /etc/cron.d files named with anything but [A-Za-z0-9_-]."""
    return path.absolute().parent == SYSTEM_CRON_DIR and not re.fullmatch(r"[A-Za-z0-9_-]+",
                                                                           path.name)


def header_names_user_field(comments: list[str]) -> bool:
    return any(_HEADER.search(c) for c in comments)


def current_user() -> str:
    """The user running schedgen: the one whose crontab and LaunchAgents it writes."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.geteuid())


@cache
def _system_tab() -> Any:
    from crontab import CronTab

    return CronTab(user=False, tab="")  # user=False: python-crontab's system-crontab mode


def split_user(line: str, raw_command: str) -> UserLine | None:
    """The user and the command of a system crontab line; None when there is no user field.

    ``raw_command`` is the text after the time fields, as written.
    """
    import logging

    from crontab import CronItem

    # python-crontab logs a line without a user at ERROR; the caller reports it instead.
    log = logging.getLogger("crontab")
    was, log.disabled = log.disabled, True
    try:
        item = CronItem.from_line(line, cron=_system_tab())
    finally:
        log.disabled = was
    words = raw_command.split(None, 1)
    if len(words) != 2:
        return None  # a user and no command, or no user: python-crontab agrees
    if not item.is_valid() or item.user != words[0]:
        # Its macro pattern stops at any '#' ("@daily root echo a#b" is not read at all).
        return UserLine(words[0], _unescape(words[1]), False)
    user = str(item.user)
    ours = _unescape(words[1])
    theirs = None if item.stdin is not None else str(item.command)
    # python-crontab ends the command at " #" (cron does not), and after "\\" reads "%"
    # differently from cron: there the line as written, read the way cron reads it, wins.
    agrees = not item.comment and (ours is None) == (theirs is None) and \
        (ours is None or ours.strip() == theirs)
    return UserLine(user, theirs if agrees else ours, agrees)


def _unescape(text: str) -> str | None:

    return unescape_command(text)


def looks_like_user_field(word: str, path: list[str]) -> bool:
    """A first command word that is an account and no program: likely a missed user field."""
    if "/" in word or not _USER_NAME.fullmatch(word):
        return False
    if not (word in _COMMON_ACCOUNTS or _is_account(word)):
        return False
    return shutil.which(word, path=os.pathsep.join(path)) is None


@cache  # asked once per line: each call reads the passwd database
def _is_account(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
