"""A cron command as cron runs it, and the job command that runs it the same way.

cron hands the text after the time fields (after `%` handling) to ``$SHELL -c``. The
job keeps that shell: plain words need none and become an argv; a command for
/bin/bash stays a string (schedgen runs strings with `bash -c`); any other shell is
kept as ``[SHELL, "-c", command]``, so `cmd &> file` or `echo 'a\tb'` mean under
dash what they meant under dash.
"""

from __future__ import annotations

import re
import sys

CRON_DEFAULT_SHELL = "/bin/sh"
_SAFE_WORD = re.compile(r"(?:~/)?[A-Za-z0-9_@%+=:,./-]+")
# Shell words that are not programs: such a command keeps its shell.
_SHELL_WORDS = {
    "!", ".", ":", "[", "[[", "alias", "bg", "break", "builtin", "case", "cd", "command",
    "continue", "declare", "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit",
    "export", "false", "fi", "for", "function", "getopts", "hash", "if", "jobs", "kill", "let",
    "local", "printf", "pwd", "read", "readonly", "return", "select", "set", "shift", "source",
    "test", "then", "time", "times", "trap", "true", "type", "typeset", "ulimit", "umask",
    "unalias", "unset", "until", "wait", "while", "{", "}",
}
# Where schedgen's own `bash -c` (bash from the job's PATH) is the shell cron used.
_BASH = {"/bin/bash", "/usr/bin/bash"}
# Shells that split plain words as sh does: a plain-word command needs none of them.
_WORD_SPLITTING_SHELL = re.compile(r"(?:.*/)?(?:(?:ba|da|z|k|mk|a|c|tc)?sh|fish)")


def unescape_command(command: str, bsd: bool | None = None) -> str | None:
    """The command as cron runs it; None when an unescaped % sends the rest to stdin.

    cron's own loop: a backslash escapes the next character, and is dropped before `%`
    (and, in Debian's cron and cronie, before a second backslash; BSD and macOS cron
    keep it there). ``bsd`` defaults to the cron of this host.
    """
    if "%" not in command and "\\" not in command:
        return command  # nothing to read: most lines (a character loop for each was slow)
    bsd = sys.platform == "darwin" if bsd is None else bsd
    out: list[str] = []
    escaped = False
    for ch in command:
        if escaped:
            if ch == "%" or (ch == "\\" and not bsd):
                out[-1] = ch  # the escaping backslash goes
            else:
                out.append(ch)
            escaped = False
            continue
        if ch == "%":
            return None
        out.append(ch)
        escaped = ch == "\\"
    return "".join(out)


def as_command(command: str, shell: str = CRON_DEFAULT_SHELL,
               home_from_env: bool = False) -> str | list[str]:
    """What runs ``command`` as ``shell -c`` would: plain words become an argv; a command
    for /bin/bash stays a string (schedgen runs strings with bash -c); any other shell is
    kept as ``[shell, "-c", command]``."""
    words = command.split()
    plain = (words and all(_SAFE_WORD.fullmatch(w) for w in words)
             and words[0] not in _SHELL_WORDS and "=" not in words[0]
             # with HOME= in the crontab, the shell's ~ is that HOME, not yours
             and not (home_from_env and any(w.startswith("~") for w in words)))
    if plain and _WORD_SPLITTING_SHELL.fullmatch(shell):
        return words
    if shell in _BASH:
        return command
    if home_from_env and command.startswith("~"):
        # schedgen expands a leading ~/ in an argument to your home; the shell, to this HOME
        command = " " + command
    return [shell, "-c", command]
