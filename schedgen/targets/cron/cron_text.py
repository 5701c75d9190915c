"""Which crontab comments describe a job, and which are the file's furniture.

A description comes only from the comment lines directly above a job (no blank line
between) that read like prose: not a column header (`m h  dom mon dow   command`),
not ASCII art (`# |  .---- minute`, `#====#`), not a variable turned off
(`#SHELL=/bin/bash`), and at most three of them (more is documentation, like the
stock "Edit this file to introduce tasks..." text). The stock example lines
(`# *  *  *  *  * user-name command to be executed`, Debian's `0 5 * * 1 tar -zcf
/var/backups/home.tgz /home/`) are headers, not commented-out jobs.
"""

from __future__ import annotations

import re

MAX_LINES = 3
_COLUMN_WORDS = {
    "m", "h", "dom", "mon", "dow", "min", "mins", "minute", "minutes", "hour", "hours", "hr",
    "day", "days", "mday", "wday", "month", "months", "weekday", "weekdays", "week", "of",
    "command", "commands", "cmd", "user", "user-name", "username", "who", "to", "be",
    "executed", "execute", "run", "dayofmonth", "dayofweek", "day_of_month", "day_of_week",
    "any", "or",
}
_WORD = re.compile(r"[a-z_-]+")
_STOCK_COMMAND = re.compile(
    r"(?:user(?:-?name)?\s+)?(?:command|cmd)(?:\s+to\s+(?:be\s+)?execute[ds]?)?"
    r"|tar -zcf /var/backups/home\.tgz /home/?", re.IGNORECASE)
_DISABLED_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_MODELINE = re.compile(r"(?:vim?|ex):\s*set?\s", re.IGNORECASE)


def is_stock_example(body: str, job_line: re.Pattern[str]) -> bool:
    """A commented line that only shows the format: times, then 'command to be executed'."""
    m = job_line.fullmatch(body)
    # trailing box edges ("command   |") are art too
    return bool(m and _STOCK_COMMAND.fullmatch(re.sub(r"[\s|#]+$", "", m.group(2))))


def reads_like_description(line: str) -> bool:
    chars = [c for c in line if not c.isspace()]
    if not chars:
        return False
    if sum(c.isalnum() for c in chars) < 0.6 * len(chars):
        return False  # ASCII art, boxes, rulers
    words = _WORD.findall(line.lower())
    if len(words) >= 3 and sum(w in _COLUMN_WORDS for w in words) >= 0.75 * len(words):
        return False  # a column header
    return not (_DISABLED_ENV.fullmatch(line) or _MODELINE.match(line))


def description(comments: list[str]) -> str:
    """The description from the comment lines directly above a job ("" where none fits)."""
    run: list[str] = []
    for line in reversed(comments):
        if not reads_like_description(line):
            break
        run.append(line)
    if len(run) > MAX_LINES:
        return ""
    return " ".join(reversed(run))
