"""Independent oracles for firing times: cronsim for cron, launchd's rules for plists.

launchd.plist(5): a missing key is a wildcard, Weekday 0 and 7 are Sunday, and a dict
with both Day and Weekday fires when either matches (schedgen never writes one).
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
                    end: datetime = END) -> set[datetime]:
    out: set[datetime] = set()
    day = start.date()
    while day < end.date():
        weekday = (day.weekday() + 1) % 7
        for d in dicts:
            if d.get("Month", day.month) != day.month:
                continue
            day_ok = d.get("Day", day.day) == day.day
            weekday_ok = d.get("Weekday", weekday) % 7 == weekday
            if "Day" in d and "Weekday" in d:
                if not (day_ok or weekday_ok):
                    continue
            elif not (day_ok and weekday_ok):
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
