"""Zoned schedules widened to host time: the command runs exactly at cronsim's instants.

The bulk of the differential test: every host fire of the rendered cron lines (Debian
cron's own DST rules for fixed-time lines) and launchd dicts goes through the gate's
logic (tzgate.Gate.decide, which tests/test_tzgate.py holds against the bash gate), and
the instants it lets through must be cronsim's in the job's zone, with the host in
another zone. By default two days around every offset change of 2027-2028; the whole
two years with `-m slow`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from schedgen.schedule.expressions import parse_cron
from schedgen.schedule.tzwiden import (
    Window,
    calendar,
    cron_lines,
    gap_firings,
    host_dst_hours,
    shifts,
    transitions,
)
from tests.tzkit import EXPRESSIONS, PAIRS, WINDOW, check

CASES = [(z, h, e) for z, h in PAIRS.items() for e in EXPRESSIONS]


@pytest.mark.parametrize("target", ["cron", "launchd"])
@pytest.mark.parametrize(("zone", "host", "expr"), CASES)
def test_command_runs_at_cronsims_instants_around_every_change(zone: str, host: str, expr: str,
                                                               target: str) -> None:
    expected, fires = check(zone, host, [expr], full=False, target=target)
    assert expected > 0 and fires >= expected


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cron", "launchd"])
@pytest.mark.parametrize(("zone", "host", "expr"), CASES)
def test_command_runs_at_cronsims_instants_all_of_2027_2028(zone: str, host: str, expr: str,
                                                             target: str) -> None:
    expected, _ = check(zone, host, [expr], full=True, target=target)
    assert expected > 0


@pytest.mark.parametrize(("zone", "host", "exprs"), [
    # The job's times fall in the host's own repeated or skipped hour.
    ("UTC", "Europe/Berlin", ["30 1 * * *"]),
    ("Asia/Tokyo", "Europe/Berlin", ["30 10 * * *", "*/20 1 * * *"]),
    ("Europe/Kyiv", "America/New_York", ["0 8,9 * * *"]),
    # A list: fixed and wildcard entries together, the OR rule among them.
    ("America/New_York", "Asia/Kolkata", ["30 2 1,15 * 0", "*/20 1-3 * * *", "0 2,3 * * *"]),
    ("Australia/Lord_Howe", "Europe/London", ["15,45 1,2 * * *", "0 0 * * 6"]),
    ("Pacific/Chatham", "Europe/Kyiv", ["45 2 * 4,9 0", "@daily"]),
])
def test_host_dst_hours_and_lists(zone: str, host: str, exprs: list[str]) -> None:
    crons = [parse_cron(e) if not e.startswith("@") else parse_cron("0 0 * * *") for e in exprs]
    texts = [c.text for c in crons]
    for target in ("cron", "launchd"):
        expected, _ = check(zone, host, texts, full=False, target=target)
        assert expected > 0


def test_transitions_are_found_to_the_minute() -> None:
    ny = transitions(ZoneInfo("America/New_York"), WINDOW)
    assert [(t.at.isoformat(), t.before, t.after) for t in ny[:2]] == [
        ("2027-03-14T07:00:00+00:00", -300, -240), ("2027-11-07T06:00:00+00:00", -240, -300)]
    lord_howe = transitions(ZoneInfo("Australia/Lord_Howe"), WINDOW)
    assert {t.after - t.before for t in lord_howe} == {30, -30}
    assert transitions(ZoneInfo("UTC"), WINDOW) == ()


def test_shifts_come_from_the_offsets_both_zones_hold_at_once() -> None:
    ny, berlin = ZoneInfo("America/New_York"), ZoneInfo("Europe/Berlin")
    # Berlin - New York is 6 h, 5 h in the weeks the two DST calendars differ.
    assert shifts(ny, berlin, WINDOW) == {300, 360}
    assert shifts(ZoneInfo("Asia/Kathmandu"), ZoneInfo("UTC"), WINDOW) == {-345}
    assert host_dst_hours(berlin, WINDOW) == {2}


def test_daily_job_needs_few_lines_and_dicts() -> None:
    ny, berlin = ZoneInfo("America/New_York"), ZoneInfo("Europe/Berlin")
    crons = [parse_cron("30 2 * * *")]
    assert cron_lines(crons, ny, berlin, WINDOW) == ["30 7,8 * * *", "0 8 12,14 3 *"]
    assert len(calendar(crons, ny, berlin, WINDOW)) == 4
    quarter = [parse_cron("*/15 * * * *")]
    assert cron_lines(quarter, ny, berlin, WINDOW) == ["*/15 * * * *"]


def test_gap_firing_only_for_fixed_times_inside_the_gap() -> None:
    ny = ZoneInfo("America/New_York")
    window = Window.years(2027, 1)
    assert gap_firings([parse_cron("30 2 * * *")], ny, window) == (
        datetime(2027, 3, 14, 7, 0, tzinfo=UTC),)
    assert gap_firings([parse_cron("30 1 * * *")], ny, window) == ()
    assert gap_firings([parse_cron("*/15 * * * *")], ny, window) == ()  # real time
    # 03:00 fires anyway, so no extra firing is listed for it.
    assert gap_firings([parse_cron("0 2,3 * * *")], ny, window) == ()


def test_fixed_lines_stay_out_of_the_hosts_dst_hours() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    for zone in PAIRS:
        for expr in [*EXPRESSIONS, "0 1-4 * * *", "5,50 * * * *"]:
            for line in cron_lines([parse_cron(expr)], ZoneInfo(zone), berlin, WINDOW):
                minute, hour = line.split()[:2]
                if not minute.startswith("*") and hour != "*":
                    hours = {int(h) for part in hour.split(",") for h in _range(part)}
                    assert not hours & host_dst_hours(berlin, WINDOW), (zone, expr, line)


def _range(part: str) -> range:
    a, _, b = part.partition("-")
    return range(int(a), int(b or a) + 1)
