"""OnCalendar lines must fire on exactly the minutes Debian cron fires on.

cronsim (Debian's rules, the OR of the day fields and the '*'-prefix exception) is the
oracle for cron; the real `systemd-analyze calendar` is the oracle for systemd. Both
are asked for the first firings of a leap year (2028), up to a cap for dense
expressions, plus one beyond, so an extra or a missing firing shows either way.
"""

from __future__ import annotations

import heapq
import itertools
import shutil
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedgen.schedule.expressions import Cron, parse_entry
from schedgen.targets.systemd.oncalendar import on_calendar, specs
from tests.budget import examples
from tests.oracles import END, START, systemd_instants, systemd_normalized
from tests.test_calendar import CASES, DAYS, MONTHS, _field

pytestmark = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                reason="systemd-analyze not installed (.ci/run installs it)")


def cron_first(exprs: list[str], limit: int, start: datetime = START) -> list[datetime]:
    """The union's firings from ``start`` on: all those before END (at most ``limit``),
    and one more."""
    streams = [CronSim(e, start - timedelta(minutes=1)) for e in exprs]
    out: list[datetime] = []
    for dt, _ in itertools.groupby(heapq.merge(*streams)):
        out.append(dt)
        if dt >= END or len(out) > limit:
            break
    return out


def assert_fires_like_cron(exprs: list[str], limit: int = 3000) -> list[str]:
    crons = [parse_entry(e) for e in exprs]
    assert all(isinstance(c, Cron) for c in crons)
    lines = on_calendar(crons)  # type: ignore[arg-type]
    want = cron_first([c.text if not c.text.startswith("@") else _macro(c.text) for c in crons],
                      limit)
    got = systemd_instants(lines, START - timedelta(seconds=1), len(want))
    assert got == want, (exprs, lines)
    return lines


def _macro(text: str) -> str:
    from schedgen.schedule.expressions import MACROS
    return MACROS[text]


EXTRA = [
    "@weekly", "@monthly", "@yearly", "@daily", "@hourly",
    "0 0 * * 5-7,1",          # Fri..Sun and Mon: the week wraps around in systemd's order
    "0 0 * * sat,sun",
    "*/7 * * * *",            # 0..56, then the next hour starts at 0 again
    "*/5 */3 * * *",
    "0 12 */10 * *",          # 1, 11, 21, 31
    "0 0 2-30/7 * *",
    "0 0 * */3 *",            # Jan, Apr, Jul, Oct
    "0 0 */2 * 1",            # '*' prefix: odd days AND Mondays
    "0 0 1-7 * */2",          # '*' prefix: first week AND Sun/Tue/Thu/Sat
    "0 0 13 * 5",             # OR: the 13th, and Fridays
    "15,45 9-17 * * mon-fri",
    "0 0 29 2 *",
    "1-5,10,20-25/2 * * * *",
]


@pytest.mark.parametrize("expr", [c for c, _ in CASES] + EXTRA)
def test_oncalendar_fires_exactly_like_debian_cron(expr: str) -> None:
    assert_fires_like_cron([expr], limit=6000)


@pytest.mark.parametrize("expr", [c for c, _ in CASES] + EXTRA)
def test_oncalendar_lines_are_systemds_normalized_form(expr: str) -> None:
    lines = on_calendar([parse_entry(expr)])  # type: ignore[list-item]
    assert systemd_normalized(lines) == lines


@pytest.mark.parametrize(("expr", "lines"), [
    ("40 10,16 * * *", ["*-*-* 10,16:40:00"]),
    ("*/15 * * * *", ["*-*-* *:00/15:00"]),
    ("0 */2 * * *", ["*-*-* 00/2:00:00"]),
    ("0 0 */2 * *", ["*-*-01..31/2 00:00:00"]),  # not "01/2": see oncalendar._terms
    ("0 0 * * */2", ["Tue,Thu,Sat,Sun *-*-* 00:00:00"]),
    ("@weekly", ["Sun *-*-* 00:00:00"]),  # systemd's own "weekly" is Monday
    ("0 9 * * 1-5", ["Mon..Fri *-*-* 09:00:00"]),
    ("0 0 1,15 * 1", ["*-*-01,15 00:00:00", "Mon *-*-* 00:00:00"]),
    ("0 0 */2 * 1", ["Mon *-*-01..31/2 00:00:00"]),
    ("*/7 * * * *", ["*-*-* *:00..56/7:00"]),  # "00/7" would miss 00:00 after midnight
    ("0 */5 * * *", ["*-*-* 00..20/5:00:00"]),
    ("0 0 1-31 * 3", ["*-*-* 00:00:00"]),
    ("0 0 * * 5-7,1", ["Mon,Fri..Sun *-*-* 00:00:00"]),
])
def test_oncalendar_lines(expr: str, lines: list[str]) -> None:
    assert on_calendar([parse_entry(expr)]) == lines  # type: ignore[list-item]


def test_a_date_line_that_can_never_fire_is_left_out() -> None:
    # Debian cron takes "0 0 30 2 1" (Mondays in February: the 30th never comes);
    # schedgen's parser refuses it, so build it by hand.
    cron = parse_entry("0 0 30 * 1")
    assert isinstance(cron, Cron)
    feb = cron._replace(months=frozenset({2}))
    assert on_calendar([feb]) == ["Mon *-02-* 00:00:00"]
    assert on_calendar([cron]) == ["*-*-30 00:00:00", "Mon *-*-* 00:00:00"]


def test_union_of_expressions_is_merged_where_one_field_differs() -> None:
    lines = assert_fires_like_cron(["0 10 * * *", "0 16 * * *", "30 16 * * *"])
    assert lines == ["*-*-* 10,16:00:00", "*-*-* 16:30:00"]
    assert assert_fires_like_cron(["0 0 * * 1", "0 0 * * 1-5"]) == ["Mon..Fri *-*-* 00:00:00"]


def test_zone_is_the_last_word_and_systemd_reads_the_time_there() -> None:
    kyiv = ZoneInfo("Europe/Kyiv")
    lines = on_calendar([parse_entry("30 2 * * *")], zone="Europe/Kyiv")  # type: ignore[list-item]
    assert lines == ["*-*-* 02:30:00 Europe/Kyiv"]
    assert systemd_normalized(lines) == lines
    # Over the spring-forward night (2028-03-26) and a week around it, in UTC.
    start = datetime(2028, 3, 22)
    got = systemd_instants(lines, start, 8)
    local = [t.replace(tzinfo=UTC).astimezone(kyiv) for t in got]
    assert [(t.hour, t.minute) for t in local if t.day != 26] == [(2, 30)] * 7
    assert all(t.utcoffset() == timedelta(hours=2 if t.day < 26 else 3) for t in local
               if t.day != 26)


# --- generated expressions --------------------------------------------------------

@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(minute=_field(0, 59), hour=_field(0, 23), dom=_field(1, 31),
       month=_field(1, 12, MONTHS), dow=_field(0, 7, DAYS))
def test_generated_expressions_fire_like_cronsim(minute, hour, dom, month, dow) -> None:
    expr = f"{minute} {hour} {dom} {month} {dow}"
    try:
        cron = parse_entry(expr)
    except ValueError:
        assume(False)
        return
    assert isinstance(cron, Cron)
    lines = assert_fires_like_cron([expr], limit=1500)
    both = not cron.day_and and not cron.days_full and not cron.weekdays_full
    assert len(lines) == (len(specs(cron)) if both else 1) <= 2


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_field(0, 59, max_items=2), _field(0, 23, max_items=2),
                          _field(1, 31, max_items=2), _field(0, 7, DAYS, max_items=2)),
                min_size=2, max_size=3))
def test_generated_unions_fire_like_cronsim(parts) -> None:
    exprs = [f"{m} {h} {d} * {w}" for m, h, d, w in parts]
    try:
        for e in exprs:
            parse_entry(e)
    except ValueError:
        assume(False)
        return
    lines = assert_fires_like_cron(exprs, limit=1500)
    assert len(lines) <= sum(len(specs(parse_entry(e))) for e in exprs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("expr", "start", "cron_extra"), [
    # 03:30 on the spring-forward night (03:00 -> 04:00) does not exist: cron runs it at 04:00.
    ("30 3 * * *", datetime(2028, 3, 25, 12), [datetime(2028, 3, 26, 1, 0)]),
    # The repeated 03:30 at fall-back: a fixed-time job runs once on both.
    ("30 3 * * *", datetime(2028, 10, 28, 12), []),
    # A wildcard-hour job follows real time in cron: the repeated 03:30 runs again.
    ("30 * * * *", datetime(2028, 10, 28, 23), [datetime(2028, 10, 29, 1, 30)]),
])
def test_dst_differences_from_debian_cron(expr: str, start: datetime,
                                          cron_extra: list[datetime]) -> None:
    """The known differences, in a zone with DST: systemd has no run for a local time that
    does not exist, and one run for a local time that occurs twice; Debian cron (cronsim)
    moves the first after the gap and, for wildcard hours, runs the second in real time.
    docs/systemd.md says so; this test notices if either side changes."""
    kyiv, utc = ZoneInfo("Europe/Kyiv"), ZoneInfo("UTC")
    lines = on_calendar([parse_entry(expr)], zone="Europe/Kyiv")  # type: ignore[list-item]
    got = systemd_instants(lines, start, 3)
    it = CronSim(expr, start.replace(tzinfo=utc).astimezone(kyiv))
    want = [next(it).astimezone(utc).replace(tzinfo=None) for _ in range(3)]
    assert [t for t in want if t not in got] == cron_extra  # the rest agree
