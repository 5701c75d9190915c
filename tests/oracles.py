"""Independent oracles for firing times: cronsim for cron, launchd's rules for plists.

launchd.plist(5): a missing key is a wildcard, Weekday 0 and 7 are Sunday, and a dict
with both Day and Weekday fires when either matches (schedgen never writes one).
launchd's code reads a dict with a Weekday otherwise (launchd_minutes, model="code").
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta

from cronsim import CronSim

# 2028 is a leap year: the window holds Feb 29 and every month end.
START = datetime(2028, 1, 1)
END = datetime(2029, 1, 1)


def cronsim_minutes(exprs: list[str], start: datetime, end: datetime) -> set[datetime]:
    out: set[datetime] = set()
    for expr in exprs:
        for dt in CronSim(expr, start - timedelta(minutes=1)):
            if dt >= end:
                break
            out.add(dt)
    return out


def launchd_minutes(dicts: list[dict[str, int]], start: datetime = START,
                    end: datetime = END, model: str = "documented") -> set[datetime]:
    """The minutes a StartCalendarInterval fires on, under one of two readings of a dict.

    "documented" (launchd.plist(5)): a missing key is a wildcard, every key present must
    match, and Day with Weekday fire when either matches (as crontab(5)).
    "code" (Apple's launchd, core.c calendarinterval_setalarm): the next firing is
    cronemu(month, day, hour, minute) and, when the dict has a Weekday,
    cronemu_wday(weekday, hour, minute), which takes no month: with no Day the Month is
    ignored, and with a Day the earlier of the two is taken (Month+Day OR Weekday)."""
    assert model in ("documented", "code")
    out: set[datetime] = set()
    day = start.date()
    while day < end.date():
        weekday = (day.weekday() + 1) % 7
        for d in dicts:
            month_ok = d.get("Month", day.month) == day.month
            day_ok = d.get("Day", day.day) == day.day
            weekday_ok = d.get("Weekday", weekday) % 7 == weekday
            if model == "code" and "Weekday" in d:
                fires = weekday_ok if "Day" not in d else (month_ok and day_ok) or weekday_ok
            elif "Day" in d and "Weekday" in d:
                fires = month_ok and (day_ok or weekday_ok)
            else:
                fires = month_ok and day_ok and weekday_ok
            if not fires:
                continue
            hours = [d["Hour"]] if "Hour" in d else range(24)
            minutes = [d["Minute"]] if "Minute" in d else range(60)
            out.update(datetime(day.year, day.month, day.day, h, m) for h in hours for m in minutes)
        day += timedelta(days=1)
    return out


def systemd_instants(lines: list[str], after: datetime, count: int) -> list[datetime]:
    """The first ``count`` instants after ``after`` (UTC) at which the union of OnCalendar
    ``lines`` elapses, as the real `systemd-analyze calendar` computes them (naive UTC)."""
    base = int(after.replace(tzinfo=UTC).timestamp())
    proc = subprocess.run(
        ["systemd-analyze", "calendar", f"--iterations={count}", f"--base-time=@{base}", *lines],
        capture_output=True, text=True, env={**os.environ, "TZ": "UTC"}, check=False)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    found: set[datetime] = set()
    for text in proc.stdout.splitlines():
        label, _, value = text.strip().partition(": ")
        if label == "Next elapse" or label.startswith("Iter. #"):
            if value != "never":
                # "Sat 2028-01-01 00:23:00 UTC"
                found.add(datetime.strptime(value.split(" ", 1)[1], "%Y-%m-%d %H:%M:%S UTC"))
    return sorted(found)[:count]


def systemd_normalized(lines: list[str]) -> list[str]:
    """systemd's normalized form of each OnCalendar value."""
    proc = subprocess.run(["systemd-analyze", "calendar", *lines], capture_output=True,
                          text=True, env={**os.environ, "TZ": "UTC"}, check=False)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return [t.split(": ", 1)[1] for t in proc.stdout.splitlines()
            if t.strip().startswith("Normalized form:")]
# robfig/cron (what Kubernetes' CronJob controller uses), from its parser.go and spec.go:
# a field is a set of bits plus a "star" bit, set when a term is `*` or `?` with no step
# above 1; day of week is 0-6 (7 is rejected); the day fields AND when either has the
# star bit, else they OR. Written from robfig's rules, not from schedgen's code.
_ROBFIG_BOUNDS = {
    0: (0, 59, {}), 1: (0, 23, {}), 2: (1, 31, {}),
    3: (1, 12, {m: i + 1 for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}),
    4: (0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}),
}


def _robfig_value(text: str, names: dict[str, int]) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise ValueError(f"failed to parse int from {text}")
    return int(text)


def robfig_field(text: str, index: int) -> tuple[set[int], bool]:
    lo, hi, names = _ROBFIG_BOUNDS[index]
    values: set[int] = set()
    star = False
    for term in text.split(","):
        range_part, _, step_text = term.partition("/")
        low_high = range_part.split("-")
        extra = False
        if low_high[0] in ("*", "?"):
            start, end, extra = lo, hi, True
        else:
            start = _robfig_value(low_high[0], names)
            end = _robfig_value(low_high[1], names) if len(low_high) == 2 else start
        step = 1
        if step_text:
            step = int(step_text)
            if len(low_high) == 1 and low_high[0] not in ("*", "?"):
                end = hi  # "N/step" means N-max/step
            if step > 1:
                extra = False
        if start < lo or end > hi or start > end:
            raise ValueError(f"{term}: out of range {lo}-{hi}")
        values.update(range(start, end + 1, step))
        star = star or extra
    return values, star


def robfig_minutes(expr: str, start: datetime = START, end: datetime = END) -> set[datetime]:
    fields = expr.split()
    assert len(fields) == 5, expr
    (minutes, _), (hours, _), (days, dom_star), (months, _), (weekdays, dow_star) = (
        robfig_field(f, i) for i, f in enumerate(fields))
    out: set[datetime] = set()
    day = start.date()
    while day < end.date():
        dom, dow = day.day in days, (day.weekday() + 1) % 7 in weekdays
        hit = (dom and dow) if dom_star or dow_star else (dom or dow)
        if day.month in months and hit:
            out.update(datetime(day.year, day.month, day.day, h, m) for h in hours for m in minutes)
        day += timedelta(days=1)
    return out
