"""Shared by the time-zone tests: run a widened schedule plus the gate, against cronsim."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim

from schedgen.render.tzgate import Gate
from schedgen.schedule.expressions import Cron, parse_cron
from schedgen.schedule.tzwiden import Window, calendar, cron_lines, matches, transitions

# Each job zone with a host zone of its own (several with DST at other dates).
PAIRS = {
    "Europe/Kyiv": "America/Los_Angeles",
    "America/New_York": "Europe/Berlin",
    "America/Sao_Paulo": "Asia/Tokyo",
    "Australia/Lord_Howe": "America/New_York",
    "Asia/Kathmandu": "Europe/London",
    "Pacific/Chatham": "America/Los_Angeles",
    "Africa/Casablanca": "Europe/Kyiv",
    "UTC": "Australia/Lord_Howe",
}
EXPRESSIONS = ["30 2 * * *", "30 1 * * *", "*/15 * * * *", "30 2 1,15 * 5"]
WINDOW = Window.years(2027, 2)


def times(expr: str, zone: ZoneInfo, start: datetime, end: datetime) -> Iterator[datetime]:
    """cronsim's firings in ``zone`` from ``start`` to ``end`` (UTC)."""
    for t in CronSim(expr, start.astimezone(zone)):
        u = t.astimezone(UTC)
        if u >= end:
            return
        yield u


def host_fires(exprs: list[str], host: ZoneInfo, start: datetime,
               end: datetime) -> Iterator[datetime]:
    """When Debian cron on a host in ``host`` runs the lines ``exprs`` (once per line).

    A fixed-time line (minute and hour fields not starting with '*') by cronsim, which
    models Debian's DST rules for those; a wildcard line follows real time, which is
    checked minute by minute (cronsim 2.8 loses a firing of `*/30 13 * * *` on the day
    after Lord Howe's 30-minute fall-back).
    """
    wild = []
    for expr in exprs:
        fields = expr.split()
        if len(fields) == 5 and not fields[0].startswith("*") and not fields[1].startswith("*"):
            yield from times(expr, host, start, end)
        else:
            wild.append(parse_cron(" ".join(fields[-5:])))
    if not wild:
        return
    t = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    step = timedelta(minutes=1)
    while t < end:
        local = t.astimezone(host)
        for cron in wild:
            if local.minute in cron.minutes and matches(cron, local):
                yield t
        t += step


def spans(zone: ZoneInfo, host: ZoneInfo, full: bool) -> list[tuple[datetime, datetime]]:
    """The whole window, or (small) two days around every change of either zone's offset."""
    if full:
        return [(WINDOW.start, WINDOW.end)]
    at = sorted({t.at for z in (zone, host) for t in transitions(z, WINDOW)})
    out: list[tuple[datetime, datetime]] = []
    for t in at or [datetime(2027, 6, 1, tzinfo=UTC)]:
        a, b = max(t - timedelta(days=1), WINDOW.start), min(t + timedelta(days=1), WINDOW.end)
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def rendered(crons: list[Cron], zone: ZoneInfo, host: ZoneInfo, target: str) -> list[str]:
    """The host schedule: cron lines, or launchd dicts as 6-field real-time expressions
    (a dict is a set of exact host wall times; launchd is taken to follow the wall clock)."""
    if target == "cron":
        return cron_lines(crons, zone, host, WINDOW)
    return ["* " + " ".join(str(d.get(k, "*")) for k in ("Minute", "Hour", "Day", "Month", "Weekday"))
            for d in calendar(crons, zone, host, WINDOW)]


def check(zone_name: str, host_name: str, exprs: list[str], full: bool,
          target: str = "cron") -> tuple[int, int]:
    """Assert the command runs exactly at cronsim's instants. Returns (firings, host fires)."""
    zone, host = ZoneInfo(zone_name), ZoneInfo(host_name)
    crons = [parse_cron(e) for e in exprs]
    gate = Gate.of(zone_name, crons, WINDOW)
    host_exprs = rendered(crons, zone, host, target)
    n_expected = n_fires = 0
    for a, b in spans(zone, host, full):
        # Start an hour early so the gate's state is what it would be by then.
        warm = a - timedelta(hours=6)
        expected = {t for e in exprs for t in times(e, zone, warm, b) if t >= a}
        fired = Counter(host_fires(host_exprs, host, warm, b))
        if target == "launchd":  # several dicts matching one minute start the job once
            fired = Counter(set(fired))
        doubled = [t for t, n in fired.items() if n > 1]
        assert not doubled, f"{host_exprs}: two fires at {doubled[:3]}"
        state: list[int | None] = [None, None]
        ran = {t for t in sorted(fired) if gate.decide(t, state) and t >= a}
        missing, extra = sorted(expected - ran), sorted(ran - expected)
        assert not missing and not extra, (
            f"{zone_name} on a {host_name} host, {exprs} -> {host_exprs}:\n"
            f"  missing {[str(t) for t in missing[:4]]}\n  extra {[str(t) for t in extra[:4]]}")
        n_expected += len(expected)
        n_fires += sum(1 for t in fired if t >= a)
    return n_expected, n_fires
