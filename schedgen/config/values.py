"""Parsers for single jobs.toml values. Each returns the typed value or raises ValueError."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from schedgen.config.model import PLACEHOLDERS, Command
from schedgen.paths import expand, expand_home
from schedgen.targets import registry
from schedgen.units import parse_duration, parse_size

JOB_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
LOCK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LABEL_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9]|[A-Za-z0-9]")
NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
# An account name as useradd and macOS take it (a cron.d user field, a plist UserName).
USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
# Shell variables the wrapper's runtime relies on (besides its own sg_*): an `env` key
# may not overwrite them.
RUNTIME_NAMES = ("IFS", "SECONDS", "EPOCHSECONDS")
# Variables bash sets itself (read-only or dynamic: a value given is dropped or replaced)
# or reads to decide how it runs (globbing, POSIX mode, read timeouts, function depth,
# which commands exist): the wrapper is bash, so set in `env` they never reach the
# command as given, or break the wrapper's own work.
BASH_NAMES = frozenset((
    "BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0",
    "BASH_CMDS", "BASH_COMPAT", "BASH_LINENO", "BASH_SOURCE", "BASH_SUBSHELL",
    "BASH_VERSINFO", "BASH_VERSION", "DIRSTACK", "EPOCHREALTIME", "EUID", "EXECIGNORE",
    "FUNCNAME", "FUNCNEST", "GLOBIGNORE", "GROUPS", "HISTCMD", "LINENO", "PIPESTATUS",
    "POSIXLY_CORRECT", "PPID", "RANDOM", "SHELLOPTS", "SHLVL", "SRANDOM", "TMOUT", "UID", "_"))
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def type_name(value: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type_name(value)}")
    return value


def one_line(value: Any) -> str:
    text = string(value)
    if "\n" in text or "\r" in text or "\0" in text:
        raise ValueError("must be a single line (it is written into crontab and plist comments)")
    return text


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {type_name(value)}")
    return value


def integer(value: Any, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type_name(value)}")
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}-{hi}" if hi is not None else f"at least {lo}"
        raise ValueError(f"{value} is out of range ({rng})")
    return value


def exit_status(value: Any) -> int:
    return integer(value, 0, 255)


def duration(value: Any, positive: bool = False) -> int:
    seconds = parse_duration(value)
    if positive and seconds <= 0:
        raise ValueError("must be longer than zero")
    return seconds


def size(value: Any) -> int:
    n = parse_size(value)
    if n <= 0:
        raise ValueError("must be larger than zero")
    return n


def path(value: Any, base: Path) -> Path:
    text = string(value)
    if not text.strip():
        raise ValueError("is empty")
    if "\n" in text or "\0" in text:
        raise ValueError("a path cannot hold a newline or NUL")
    return expand(text, base)


def one_of(value: Any, allowed: tuple[str, ...], what: str) -> str:
    text = string(value)
    if text not in allowed:
        raise ValueError(f"{text!r} is not a valid {what}: use {' or '.join(map(repr, allowed))}")
    return text


def matches(value: Any, pattern: re.Pattern[str], what: str) -> str:
    text = string(value)
    if not pattern.fullmatch(text):
        raise ValueError(f"{text!r} is not a valid {what}")
    return text


def command(value: Any, queue: bool) -> Command:
    """An argv list (no shell) or a string for ``bash -c``; never empty."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("is empty")
        if "\0" in value:
            raise ValueError("cannot hold a NUL byte")
        found = _PLACEHOLDER.search(value)
        if found:
            var = "SCHEDGEN_" + found.group(1).upper()
            raise ValueError(
                f"placeholders like {found.group(0)} are for argv lists; in a bash -c string "
                f"use \"${var}\" (it is exported)"
            )
        return value
    if not isinstance(value, list):
        raise ValueError(f"expected a list of arguments or a string, got {type_name(value)}")
    if not value:
        raise ValueError("is empty: give at least the program to run")
    args = []
    for i, arg in enumerate(value):
        if not isinstance(arg, str):
            raise ValueError(f"argument {i} must be a string, got {type_name(arg)}")
        if "\0" in arg:
            raise ValueError(f"argument {i} holds a NUL byte")
        args.append(arg)
    if not args[0].strip():
        raise ValueError("the program (first argument) is empty")
    if args[0].startswith("-"):
        # `command -v` and `exec` in the wrapper would read it as an option.
        raise ValueError(f"the program {args[0]!r} starts with '-': give its full path")
    if not queue and any("{item}" in a for a in args):
        raise ValueError("uses {item} but the job has no [queue]")
    return tuple(_expand_home(a) if a[:1] == "~" else a for a in args)


def _expand_home(arg: str) -> str:
    return expand_home(arg)


def env(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of NAME = \"value\", got {type_name(value)}")
    out, bad = [], []
    for k, v in value.items():
        if not ENV_NAME.fullmatch(k):
            bad.append(f"{k!r} is not a valid environment variable name")
        elif k == "PATH" or k.startswith("SCHEDGEN_"):
            bad.append(f"{k} is set by schedgen (use `path` for PATH)")
        elif k.startswith("sg_") or k in RUNTIME_NAMES:
            bad.append(f"{k} is a name the wrapper's runtime uses itself (sg_*, "
                       f"{', '.join(RUNTIME_NAMES)}); choose another")
        elif k in BASH_NAMES:
            bad.append(f"{k} is a variable bash sets or acts on itself: the wrapper is bash, "
                       "so it would not reach the command as given; set it inside the command")
        elif isinstance(v, bool) or not isinstance(v, str | int | float):
            bad.append(f"{k}: expected a string, got {type_name(v)}")
        elif "\0" in str(v):
            bad.append(f"{k}: value holds a NUL byte")
        else:
            out.append((k, str(v)))
    if bad:
        raise ValueError("; ".join(bad))
    return tuple(out)


def adopts(value: Any) -> tuple[str, str]:
    """`"<target>: <what>"`: a target that can take over its own kind of job, and the
    job as it knows it (a crontab line byte for byte after the one space)."""
    text = string(value)
    target, sep, what = text.partition(": ")
    if not sep or not what or "\n" in text or "\r" in text:
        raise ValueError("expected \"<target>: <its line or name there>\" on one line, e.g. "
                         "\"cron: */5 * * * * ~/bin/backup.sh\"")
    if target not in registry.names() or not registry.get(target).adopts:
        able = [n for n in registry.names() if registry.get(n).adopts]
        raise ValueError(f"{target!r} cannot hand a job over; targets that can: "
                         f"{', '.join(able)}")
    return target, what


# One host pattern: the short host name's characters, `*`, `?` and `[...]` classes
# (fnmatch), after an optional `!` that makes it an exclusion.
HOST_PATTERN = re.compile(r"!?(?:[A-Za-z0-9_*?-]|\[!?[A-Za-z0-9_-]+\])+")


def hosts(value: Any) -> tuple[str, ...]:
    """`hosts = ["mac-mini", "web-*", "!web-3"]`: each a glob on the short host name."""
    if not isinstance(value, list):
        raise ValueError(f"expected a list of host names or globs, got {type_name(value)}")
    if not value:
        raise ValueError("an empty list selects no host: list the hosts (\"web-*\"), or "
                         "leave `hosts` out for every host, or set enabled = false")
    bad = []
    for p in value:
        text = string(p)
        if "." in text:
            bad.append(f"{text!r}: hosts match the short host name, up to the first dot "
                       f"(write {text.split('.')[0]!r})")
        elif not HOST_PATTERN.fullmatch(text):
            bad.append(f"{text!r} is no host name or glob (letters, digits, '-', '_', "
                       "'*', '?', [...] classes; '!' first excludes)")
    if bad:
        raise ValueError("; ".join(bad))
    return tuple(dict.fromkeys(value))


def targets(value: Any) -> tuple[str, ...]:
    known = registry.names()
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a non-empty list from {list(known)}")
    for t in value:
        if t not in known:
            raise ValueError(f"unknown target {t!r}; known: {', '.join(known)}")
    return tuple(dict.fromkeys(value))


def path_list(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError("expected a non-empty list of directories")
    out, bad = [], []
    for p in value:
        text = string(p)
        if ":" in text or not text:
            bad.append(f"{text!r} cannot be a PATH entry")
        out.append(expand_home(text) if text.startswith("~/") or text == "~"
                   else str(expand(text, Path("/"))) if text.startswith("~") else text)
    if bad:
        raise ValueError("; ".join(bad))   # every one, not just the first
    return tuple(out)
