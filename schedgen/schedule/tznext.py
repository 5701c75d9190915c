"""What a DST change did to one firing of a zoned job, in words (for `schedgen next`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schedgen.schedule.expressions import Cron
from schedgen.schedule.tzwiden import is_fixed, matches


def _ambiguous(t: datetime) -> bool:
    return t.replace(fold=0).utcoffset() != t.replace(fold=1).utcoffset()


def dst_mark(t: datetime, crons: list[Cron]) -> str:
    """'' for an ordinary firing; else how a spring-forward gap or a repeated hour moved
    or merged it. ``t`` is aware, in the job's zone."""
    wall = t.replace(tzinfo=None)
    if not any(matches(c, wall) for c in crons):
        # Right after a gap: the wall times the clock skipped that the schedule names.
        before = (t.astimezone(UTC) - timedelta(minutes=1)).astimezone(t.tzinfo)
        skipped, m = [], before.replace(tzinfo=None) + timedelta(minutes=1)
        while m < wall:
            if any(is_fixed(c) and matches(c, m) for c in crons):
                skipped.append(m.strftime("%H:%M"))
            m += timedelta(minutes=1)
        if skipped:
            verb = "moved" if len(skipped) == 1 else "merged"
            exist = "does not exist" if len(skipped) == 1 else "do not exist"
            return (f"{verb} by DST: {', '.join(skipped)} {exist} that day "
                    "(clocks go forward); runs right after the gap")
        return ""
    if _ambiguous(t) and not any(not is_fixed(c) and matches(c, wall) for c in crons):
        return (f"merged by DST: {wall:%H:%M} happens twice that night (clocks go back); "
                "runs once, the first time")
    return ""


def host_beside(t: datetime, host: datetime) -> str:
    """The host's reading of the same instant, when it reads differently."""
    if host.strftime("%Y%m%d%H%M%Z") == t.strftime("%Y%m%d%H%M%Z"):
        return ""
    same_day = host.date() == t.date()
    return f"host {host.strftime('%H:%M %Z' if same_day else '%a %H:%M %Z').strip()}"
