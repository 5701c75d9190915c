"""Firing times of cron expressions as Unix seconds, fast enough for a week of minutes.

cronsim is the oracle (Debian semantics, DST included) but costs some 30 us a firing;
`check` on an every-minute job judges 10,000 of them. A day whose UTC offset does not
change is computed here from the expression's value sets; a day with a DST change is
left to cronsim, so the result is cronsim's on every day.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, tzinfo

from schedgen.schedule.expressions import Cron
from schedgen.schedule.upcoming import cron_times


def _day_matches(c: Cron, d: date) -> bool:
    if d.month not in c.months:
        return False
    dom = d.day in c.days
    dow = (d.weekday() + 1) % 7 in c.weekdays  # cron: 0 is Sunday
    return (dom and dow) if c.day_and else (dom or dow)


def epochs(crons: list[Cron], zone: tzinfo, start: int, end: int) -> list[int]:
    """Sorted distinct firing times t with start < t <= end."""
    if not crons:
        return []
    out: set[int] = set()
    day = datetime.fromtimestamp(start, zone).date()
    last = datetime.fromtimestamp(end, zone).date()
    offsets = [(sorted(c.hours), sorted(c.minutes)) for c in crons]
    while day <= last:
        midnight = datetime(day.year, day.month, day.day, tzinfo=zone)
        nxt = day + timedelta(days=1)
        off0 = midnight.utcoffset()
        off1 = (datetime(nxt.year, nxt.month, nxt.day, tzinfo=zone) - timedelta(seconds=1)
                ).utcoffset()
        if off0 == off1:
            base = int(midnight.timestamp())
            for c, (hours, minutes) in zip(crons, offsets, strict=True):
                if _day_matches(c, day):
                    out.update(base + h * 3600 + m * 60 for h in hours for m in minutes)
        else:
            # A DST change today: cronsim knows what Debian cron does with the gap/overlap.
            before = midnight - timedelta(seconds=1)
            stop = int(datetime(nxt.year, nxt.month, nxt.day, tzinfo=zone).timestamp())
            for c in crons:
                for t in cron_times(c.text, before):
                    e = int(t.timestamp())
                    if e >= stop:
                        break
                    out.add(e)
        day = nxt
    return sorted(e for e in out if start < e <= end)
