"""`[jobs.x.notify]`: who hears about a job's runs, checked like every other table.

on       failure (non-zero exit, timeout, precondition), recovery (first ok after a
         failure), missed (firings that never ran: sent by `schedgen check --notify`)
command  run by the wrapper on those events, and by `check --notify`
mail     addresses mailed on those events through the local sendmail (`sendmail -t -i`)
webhook  a URL the event's JSON payload is POSTed to (webhook_format: json, slack,
         discord, teams)
after    failure alerts only from the Nth failed run in a row on
sendmail the sendmail program (default: `sendmail` on the job's PATH, then
         /usr/sbin/sendmail, /usr/lib/sendmail)
ping_url a heartbeat on every run (healthchecks.io protocol), whatever `on` says
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schedgen.config import values as f
from schedgen.config.model import PLACEHOLDERS, Command, Notify

NOTIFY_KEYS = ("on", "command", "mail", "webhook", "webhook_format", "after", "sendmail",
               "ping_url")
CHANNEL_KEYS = ("command", "mail", "webhook")  # what an event goes out through
WEBHOOK_FORMATS = ("json", "slack", "discord", "teams")
MAX_AFTER = 1000
EVENTS = ("failure", "recovery", "missed")
DEFAULT_ON = ("failure", "recovery")
# curl reads the URL from a config line on stdin (so it never shows in `ps`): no quotes,
# backslashes, spaces or control characters, which also keeps it one plain URL.
_URL = re.compile(r"https?://[^\s\"'\\<>`]+", re.IGNORECASE)
# One mailbox: no spaces, quotes, commas or newlines (it goes into a To: header and is
# never parsed by a shell); a bare local user ("root", as cron's MAILTO often is) too.
ADDRESS = r"[A-Za-z0-9.!#$%&*+/=?^_{|}~-]+(?:@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)?"
_ADDRESS = re.compile(ADDRESS)
SENDMAIL = r"[A-Za-z0-9_./+-]+"
_SENDMAIL = re.compile(SENDMAIL)
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


def mail(value: Any) -> tuple[str, ...]:
    """One address, or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ValueError("expected an address or a list of addresses, got an empty list")
    out = []
    for v in items:
        text = f.string(v)
        if not _ADDRESS.fullmatch(text):
            raise ValueError(f"{text[:60]!r} is not one mail address (user@host, no spaces, "
                             "quotes or commas: give several as a list)")
        out.append(text)
    return tuple(dict.fromkeys(out))


def webhook_format(value: Any) -> str:
    text = f.string(value)
    if text not in WEBHOOK_FORMATS:
        raise ValueError(f"unknown format {text!r}; known: {', '.join(WEBHOOK_FORMATS)}")
    return text


def after(value: Any) -> int:
    return f.integer(value, 1, MAX_AFTER)


def sendmail(value: Any) -> str:
    text = f.string(value)
    if not _SENDMAIL.fullmatch(text):
        raise ValueError(f"{text[:60]!r} is not a program name or path (letters, digits, "
                         "_ . / + - only)")
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
    to = get(f"{where}.mail", raw["mail"], mail) if "mail" in raw else ()
    hook = get(f"{where}.webhook", raw["webhook"], ping_url) if "webhook" in raw else None
    shape = get(f"{where}.webhook_format", raw["webhook_format"], webhook_format) \
        if "webhook_format" in raw else "json"
    n = get(f"{where}.after", raw["after"], after) if "after" in raw else 1
    prog = get(f"{where}.sendmail", raw["sendmail"], sendmail) if "sendmail" in raw else None
    channels = [k for k in CHANNEL_KEYS if k in raw]
    if not channels and "ping_url" not in raw:
        problem(where, "gives none of command, mail, webhook or ping_url, so it would tell "
                       "no one")
    elif "on" in raw and not channels and on:
        problem(f"{where}.on", "has no effect without a command, mail or webhook (ping_url "
                               "pings on every run)")
    if "webhook_format" in raw and "webhook" not in raw:
        problem(f"{where}.webhook_format", "has no effect without a webhook")
    if "sendmail" in raw and "mail" not in raw:
        problem(f"{where}.sendmail", "has no effect without mail")
    if "after" in raw and not channels:
        problem(f"{where}.after", "has no effect without a command, mail or webhook")
    return Notify(on=on or (), command=cmd, ping_url=url, mail=to or (), webhook=hook,
                  webhook_format=shape or "json", after=n or 1, sendmail=prog)
