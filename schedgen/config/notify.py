"""`[jobs.x.notify]`: who hears about a job's runs, checked like every other table.

on       failure (non-zero exit, timeout, precondition), recovery (first ok after a
         failure), missed (firings that never ran: sent by `schedgen check --notify`)
command  run by the wrapper on those events, and by `check --notify`
ping_url a heartbeat on every run (healthchecks.io protocol), whatever `on` says
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schedgen.config import values as f
from schedgen.config.model import PLACEHOLDERS, Command, Notify

NOTIFY_KEYS = ("on", "command", "ping_url")
EVENTS = ("failure", "recovery", "missed")
DEFAULT_ON = ("failure", "recovery")
# curl reads the URL from a config line on stdin (so it never shows in `ps`): no quotes,
# backslashes, spaces or control characters, which also keeps it one plain URL.
_URL = re.compile(r"https?://[^\s\"'\\<>`]+", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def on_events(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list from {list(EVENTS)}, got {f.type_name(value)}")
    for v in value:
        if v not in EVENTS:
            raise ValueError(f"unknown event {v!r}; known: {', '.join(EVENTS)}")
    return tuple(dict.fromkeys(value))


def ping_url(value: Any) -> str:
    text = f.string(value)
    if not _URL.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not an http(s) URL without spaces or quotes")
    return text


def command(value: Any) -> Command:
    cmd = f.command(value, queue=False)
    args = (cmd,) if isinstance(cmd, str) else cmd
    for a in args:
        found = _PLACEHOLDER.search(a)
        if found:
            var = "SCHEDGEN_" + found.group(1).upper()
            raise ValueError(f"placeholders like {found.group(0)} are for the job's command; "
                             f"the notify command gets ${var} in its environment")
    return cmd


def parse(raw: dict[str, Any], where: str, get: Callable[[str, Any, Callable[[Any], Any]], Any],
          problem: Callable[[str, str], None]) -> Notify | None:
    """``raw`` holds only known keys (the caller's table check reported the others)."""
    on = get(f"{where}.on", raw["on"], on_events) if "on" in raw else DEFAULT_ON
    cmd = get(f"{where}.command", raw["command"], command) if "command" in raw else None
    url = get(f"{where}.ping_url", raw["ping_url"], ping_url) if "ping_url" in raw else None
    if "command" not in raw and "ping_url" not in raw:
        problem(where, "gives neither command nor ping_url, so it would tell no one")
    elif "on" in raw and "command" not in raw and on:
        problem(f"{where}.on", "has no effect without a command (ping_url pings on every run)")
    return Notify(on=on or (), command=cmd, ping_url=url)
