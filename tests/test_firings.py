"""The fast firing times used to judge missed firings match cronsim, DST days included."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from schedgen.outcomes.firings import epochs
from schedgen.schedule.expressions import parse_entry
from schedgen.schedule.upcoming import cron_times
from tests.budget import THOROUGH

EXPRESSIONS = ["* * * * *", "30 2 * * *", "0 1 * * 0", "15 1,2,3 * * *", "*/7 * 1-5 * mon",
               "0 0 29 2 *", "@hourly", "59 23 31 * *", "0 3 * * */2", "10 0-4/2 1,15 * fri"]
ZONES = ["UTC", "Europe/Kyiv", "America/New_York", "Australia/Lord_Howe"]
# Windows around the spring and autumn changes of both hemispheres.
WINDOWS = [("2026-03-05", 40), ("2026-10-01", 40), ("2028-02-20", 15)]


def oracle(expr: str, zone: ZoneInfo, start: int, end: int) -> list[int]:
    out = []
    for t in cron_times(expr, datetime.fromtimestamp(start, zone)):
        e = int(t.timestamp())
        if e > end:
            break
        if not out or out[-1] != e:
            out.append(e)
    return out


@pytest.mark.parametrize("zone_name", ZONES)
@pytest.mark.parametrize("window", WINDOWS)
def test_epochs_match_cronsim(zone_name: str, window: tuple[str, int]) -> None:
    zone = ZoneInfo(zone_name)
    first = datetime.fromisoformat(window[0]).replace(tzinfo=zone) + timedelta(minutes=7)
    start = int(first.timestamp())
    end = int((first + timedelta(days=window[1])).timestamp())
    for expr in EXPRESSIONS:
        cron = parse_entry(expr)
        # Every minute for 40 days was nine tenths of this test (cronsim's iteration): by
        # default it is checked around each change of offset and at both ends.
        spans = [(start, end)] if THOROUGH or expr != "* * * * *" else _around_changes(zone, start, end)
        for a, b in spans:
            assert epochs([cron], zone, a, b) == oracle(expr, zone, a, b), (expr, a, b)  # type: ignore[list-item]


def _around_changes(zone: ZoneInfo, start: int, end: int, margin: int = 6 * 3600) -> list[tuple[int, int]]:
    """(from, to) spans: the window's first and last `margin`, and the whole local day of
    every change of the zone's UTC offset within it, an hour more either side (the fast
    path hands over to cronsim for that day and back after it)."""
    spans = [(start, start + margin), (end - margin, end)]
    offset = datetime.fromtimestamp(start, zone).utcoffset()
    for t in range(start, end, 900):   # offsets change on the quarter hour
        now = datetime.fromtimestamp(t, zone).utcoffset()
        if now != offset:
            day = datetime.fromtimestamp(t, zone).replace(hour=0, minute=0, second=0)
            a = int(day.timestamp()) - 3600
            b = int((day + timedelta(days=1)).timestamp()) + 3600
            spans.append((max(start, a), min(end, b)))
            offset = now
    return spans


def test_a_list_of_expressions_fires_at_their_union_once() -> None:
    zone = ZoneInfo("UTC")
    start = int(datetime(2026, 1, 1, tzinfo=zone).timestamp())
    crons = [parse_entry("0 * * * *"), parse_entry("0 */2 * * *")]
    got = epochs(crons, zone, start - 1, start + 86400 - 1)  # type: ignore[arg-type]
    assert len(got) == 24 and got[0] == start
