"""systemd OnCalendar values back to 5-field cron expressions, where one exists.

The value is first normalized by the real `systemd-analyze calendar` when it is on
PATH (it knows every shorthand and spelling); otherwise the common shorthands and the
normalized syntax are read here. An OnCalendar line fires where the weekday AND the
date match; Debian cron ANDs the day fields only when one of them starts with '*', so
a line restricting both is expressible only when one side is a '*/n' step. What cron
cannot say (seconds, years, last days '~', a time zone, that AND) raises
NotExpressible with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from schedgen.schedule import expressions
from schedgen.targets.systemd.oncalendar import _DAY_NAMES

SHORTHANDS = {
    "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
    "weekly": "Mon *-*-* 00:00:00", "monthly": "*-*-01 00:00:00",
    "yearly": "*-01-01 00:00:00", "annually": "*-01-01 00:00:00",
    "quarterly": "*-01,04,07,10-01 00:00:00", "semiannually": "*-01,07-01 00:00:00",
}
_DOW = {n.lower(): i for i, n in enumerate(_DAY_NAMES)}
_DOW.update({"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5,
             "saturday": 6, "sunday": 0})


class NotExpressible(ValueError):
    pass


def normalize(value: str) -> str:
    """systemd's normalized form of an OnCalendar value (ValueError if systemd rejects it)."""
    text = value.strip()
    if text.lower() in SHORTHANDS:
        return SHORTHANDS[text.lower()]
    if shutil.which("systemd-analyze") is None:
        return text
    r = subprocess.run(["systemd-analyze", "calendar", "--iterations=1", text],
                       capture_output=True, text=True, env={**os.environ, "TZ": "UTC"},
                       timeout=30, check=False)
    for line in r.stdout.splitlines():
        if line.strip().startswith("Normalized form:"):
            return line.split(":", 1)[1].strip()
    raise ValueError(f"systemd does not accept OnCalendar={text!r}: "
                     f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")


def _values(text: str, lo: int, hi: int, what: str) -> set[int]:
    if text == "*":
        return set(range(lo, hi + 1))
    out: set[int] = set()
    for item in text.split(","):
        m = re.fullmatch(r"(\*|\d+)(?:\.\.(\d+))?(?:/(\d+))?", item)
        if not m:
            raise NotExpressible(f"{what} {item!r} has no cron equivalent")
        start = lo if m.group(1) == "*" else int(m.group(1))
        end = int(m.group(2)) if m.group(2) else (hi if m.group(3) or m.group(1) == "*"
                                                  else start)
        step = int(m.group(3) or 1)
        if not (lo <= start <= hi and lo <= end <= hi) or step < 1:
            raise NotExpressible(f"{what} {item!r} is out of range {lo}-{hi}")
        out.update(range(start, end + 1, step))
    return out


def _weekdays(text: str) -> set[int]:
    out: set[int] = set()
    for item in text.split(","):
        a, _, b = item.lower().partition("..")
        if a not in _DOW or (b and b not in _DOW):
            raise NotExpressible(f"weekday {item!r} is not a day name")
        first, last = (_DOW[a] + 6) % 7, (_DOW[b or a] + 6) % 7  # Monday first
        out.update((d + 1) % 7 for d in range(first, last + 1))
    return out


def cron_field(values: set[int], lo: int, hi: int) -> str:
    """A value set as a cron field: '*', '*/n', 'a-b/n', ranges and lists."""
    return expressions.cron_field(values, lo, hi, shortest=2)


def to_cron(value: str) -> str:
    """One OnCalendar value as a cron expression, or NotExpressible saying why not."""
    words = normalize(value).split()
    weekdays: set[int] | None = None
    if words and re.match(r"[A-Za-z]", words[0]):
        weekdays = _weekdays(words.pop(0))
    if len(words) == 1 and ":" in words[0]:
        words.insert(0, "*-*-*")
    if len(words) == 1:
        words.append("00:00:00")
    if len(words) != 2:
        raise NotExpressible(f"{value!r}: a time zone or other extra word (cron runs in local time)")
    date, time = words
    if "~" in date:
        raise NotExpressible(f"{value!r}: counting days from the month's end ('~') has no cron form")
    parts = date.split("-")
    if len(parts) == 3:
        if parts[0] != "*":
            raise NotExpressible(f"{value!r}: a year ({parts[0]}) has no cron form")
        parts = parts[1:]
    if len(parts) != 2:
        raise NotExpressible(f"{value!r}: cannot read the date {date!r}")
    t = time.split(":")
    if len(t) == 2:
        t.append("00")
    if len(t) != 3 or t[2] not in ("00", "0"):
        raise NotExpressible(f"{value!r}: fires on seconds other than :00 (cron has minutes)")
    months = _values(parts[0], 1, 12, "month")
    days = _values(parts[1], 1, 31, "day")
    hours = _values(t[0], 0, 23, "hour")
    minutes = _values(t[1], 0, 59, "minute")
    dom, dow = cron_field(days, 1, 31), "*"
    if weekdays is not None and len(weekdays) < 7:
        dow = cron_field(weekdays, 0, 6)
        if dom != "*" and not dom.startswith("*") and not dow.startswith("*"):
            raise NotExpressible(
                f"{value!r}: fires only where the weekday AND the date match; cron ORs "
                "them unless one is a '*/n' step")
    return " ".join([cron_field(minutes, 0, 59), cron_field(hours, 0, 23), dom,
                     cron_field(months, 1, 12), dow])
