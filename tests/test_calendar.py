"""StartCalendarInterval must fire on exactly the minutes Debian cron fires on.

cronsim follows Debian cron (including the day-of-month/day-of-week OR rule and
the '*'-prefix exception) and is the oracle. The launchd side is evaluated here
independently of schedgen: a dict fires when every key it has matches.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from schedgen.schedule.expressions import parse_cron
from schedgen.schedule.to_calendar import NotExpressible, calendar_dicts
from tests.budget import examples
from tests.oracles import END, START, cronsim_minutes, launchd_minutes


def cron_minutes(expr: str) -> set[datetime]:
    return cronsim_minutes([expr], START, END)


# (expression, minimal number of dicts)
CASES = [
    ("40 10,16 * * *", 2),            # the seed's note funnel
    ("15 6 * * *", 1),
    ("* * * * *", 1),                 # one empty dict: every minute
    ("*/15 * * * *", 4),
    ("0 * * * *", 1),
    ("0 0 * * 0", 1),
    ("0 0 * * 7", 1),                 # 7 is Sunday too
    ("0 0 * * 0,7", 1),
    ("0 9 * * 1-5", 5),
    ("0 9 * * mon-fri", 5),
    ("30 8 1 * *", 1),
    ("0 0 1 1 *", 1),
    ("0 0 29 2 *", 1),                # leap day only
    ("0 0 1,15 * 1", 3),              # OR: 1st, 15th, and Mondays
    ("0 0 31 * *", 1),
    ("0 0 30 * *", 1),
    ("0 0 31 1,3,5,7,8,10,12 *", 1),  # every month with a 31st: Month is implied
    ("0 0 31 1,3 *", 2),
    ("0 0 30,31 2,4 *", 1),           # only April 30 exists
    ("0 0 1-29 2 1", 1),              # every day of February anyway
    ("0 0 */2 * *", 16),              # AND with a full weekday field: odd days
    ("0 0 * * */2", 4),               # Sun, Tue, Thu, Sat
    ("0 0 */1 * 1", 1),               # AND, day field full: Mondays
    ("0 0 1 * */1", 1),               # AND, weekday field full: the 1st
    ("0 12 * jan-mar *", 3),
    ("5 4 * * sun", 1),
    ("0 22 * * 1-5", 5),
    ("23 0-20/2 * * *", 11),
    ("0 0 1-31 * 3", 1),              # OR with a full day field: every day
    ("0 0 15 * 0-6", 1),              # OR with every weekday: every day
    ("0 */6 1-29 * *", 116),          # 29 Day dicts cover February too: no Month dict
    ("0 0 1-29 1,2 *", 30),           # all of February, and Jan 1-29
]


MODELS = ("documented", "code")


@pytest.mark.parametrize(("expr", "count"), CASES)
def test_calendar_fires_exactly_like_debian_cron(expr: str, count: int) -> None:
    dicts = calendar_dicts(parse_cron(expr))
    # The readings differ only on a dict with a Weekday; without one, one check is both.
    for model in MODELS if any("Weekday" in d for d in dicts) else MODELS[:1]:
        if expr == "* * * * *":
            # Every minute: a year is half a million of them (4 s); January and the leap
            # February show the same.
            end = START + timedelta(days=60)
            assert launchd_minutes(dicts, START, end, model) == cronsim_minutes([expr], START, end)
        else:
            assert launchd_minutes(dicts, model=model) == cron_minutes(expr), model
    assert len(dicts) == count


# Weekdays in some months only: {Month, Weekday} fires those weekdays of that month by
# launchd's documentation and every such weekday of the year by its code. No exact dicts
# (refused unwidened); a launchd job gets a superset and the gate (test_launchd_gate.py).
WEEKDAY_IN_SOME_MONTHS = ["30 8 * 7 0", "0 12 * 2 1", "0 0 1 6 3", "0 0 1-28 2 1",
                          "0 0 31 2 1", "0 0 30 2 mon", "0 0 30,31 2 1", "0 9 * 1-11 1-5"]


@pytest.mark.parametrize("expr", WEEKDAY_IN_SOME_MONTHS)
def test_a_weekday_in_some_months_only_is_refused(expr: str) -> None:
    with pytest.raises(NotExpressible, match="some months only"):
        calendar_dicts(parse_cron(expr))


def test_the_two_launchd_readings_differ_on_the_dicts_refused() -> None:
    """What schedgen used to write for "Sundays in July" fires in July by the
    documentation and every Sunday by launchd's code: the models are not the same."""
    old = [{"Month": 7, "Weekday": 0, "Hour": 8, "Minute": 30}]
    doc = launchd_minutes(old, model="documented")
    code = launchd_minutes(old, model="code")
    assert doc == cron_minutes("30 8 * 7 0")
    assert code == cron_minutes("30 8 * * 0") and len(code) == 53
    both = [{"Month": 2, "Day": 1, "Weekday": 1, "Hour": 0, "Minute": 0}]
    assert launchd_minutes(both, model="code") == cron_minutes("0 0 1 2 1") | cron_minutes("0 0 * * 1")


@pytest.mark.parametrize("expr", WEEKDAY_IN_SOME_MONTHS)
def test_widened_dicts_are_a_superset_under_both_readings(expr: str) -> None:
    """A zoned job's dicts are widened (its gate drops the extra fires): the weekday in
    every month, so both readings agree and cover every cron firing."""
    dicts = calendar_dicts(parse_cron(expr), widen=True)
    assert not any("Weekday" in d and ("Month" in d or "Day" in d) for d in dicts)
    doc = launchd_minutes(dicts, model="documented")
    assert doc == launchd_minutes(dicts, model="code")
    assert cron_minutes(expr) <= doc


@pytest.mark.parametrize("expr", [c for c, _ in CASES])
def test_calendar_never_puts_weekday_with_day_or_month_in_one_dict(expr: str) -> None:
    for d in calendar_dicts(parse_cron(expr)):
        assert not ("Weekday" in d and ("Day" in d or "Month" in d))


@pytest.mark.parametrize("expr", ["0 0 */2 * 1", "0 0 1-15 * */2", "0 0 */3 * mon"])
def test_calendar_refuses_day_and_weekday_anded(expr: str) -> None:
    cron = parse_cron(expr)
    assert cron.day_and and not (cron.days_full or cron.weekdays_full)
    with pytest.raises(NotExpressible, match="launchd cannot require"):
        calendar_dicts(cron)


def test_an_and_with_one_day_field_unrestricted_is_expressible() -> None:
    # cron ANDs here too ('*' starts the day field), but '*' matches every day: no AND left.
    cron = parse_cron("0 0 * * 1 ")
    assert cron.day_and and cron.days_full
    dicts = calendar_dicts(cron)
    assert dicts == [{"Weekday": 1, "Hour": 0, "Minute": 0}]
    assert launchd_minutes(dicts) == cron_minutes("0 0 * * 1")


# --- generated expressions --------------------------------------------------------

def _field(lo: int, hi: int, names: list[str] | None = None, max_items: int = 3):
    num = st.integers(lo, hi)

    @st.composite
    def atom(draw):
        kind = draw(st.sampled_from(["n", "range", "range_step", "star", "star_step", "name"]))
        if kind == "n" or (kind == "name" and not names):
            return str(draw(num))
        if kind == "name":
            return draw(st.sampled_from(names))
        if kind == "star":
            return "*"
        if kind == "star_step":
            return f"*/{draw(st.integers(1, hi - lo + 1))}"
        a, b = sorted((draw(num), draw(num)))
        if kind == "range":
            return f"{a}-{b}"
        # cronsim reads "a-a/n" as "a/n" (a to the field's end); Debian reads {a}.
        assume(a < b)
        return f"{a}-{b}/{draw(st.integers(1, hi - lo + 1))}"

    return st.lists(atom(), min_size=1, max_size=max_items).map(",".join)


# Minutes and hours stay small so that a year of firings stays cheap to enumerate.
small_minutes = st.lists(st.integers(0, 59), min_size=1, max_size=2, unique=True).map(
    lambda xs: ",".join(map(str, xs)))
small_hours = st.one_of(
    st.lists(st.integers(0, 23), min_size=1, max_size=3, unique=True).map(
        lambda xs: ",".join(map(str, xs))),
    st.sampled_from(["*/6", "8-18/5"]))
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(minute=small_minutes, hour=small_hours, dom=_field(1, 31), month=_field(1, 12, MONTHS),
       dow=_field(0, 7, DAYS))
def test_generated_expressions_fire_like_cronsim(minute, hour, dom, month, dow) -> None:
    expr = f"{minute} {hour} {dom} {month} {dow}"
    try:
        cron = parse_cron(expr)
    except ValueError:
        assume(False)
        return
    try:
        dicts = calendar_dicts(cron)
    except NotExpressible as exc:
        # The AND of two restricted day fields, or a weekday wanted in some months only.
        if "some months only" in str(exc):
            assert not cron.weekdays_full and len(cron.months) < 12
        else:
            assert cron.day_and and not cron.days_full and not cron.weekdays_full
        return
    for model in MODELS:
        assert launchd_minutes(dicts, model=model) == cron_minutes(expr), model
    assert not any("Weekday" in d and ("Day" in d or "Month" in d) for d in dicts)
    # Minimal: no dict is redundant, and minute x hour singletons are unavoidable.
    n_min = 1 if len(cron.minutes) == 60 else len(cron.minutes)
    n_hour = 1 if len(cron.hours) == 24 else len(cron.hours)
    assert len(dicts) % (n_min * n_hour) == 0
    date_dicts = {tuple((k, v) for k, v in d.items() if k in ("Month", "Day", "Weekday"))
                  for d in dicts}
    covers = {dd: _days(dict(dd)) for dd in date_dicts}
    count = Counter(day for days in covers.values() for day in days)
    for dd, days in covers.items():
        assert any(count[day] == 1 for day in days), f"{dd} is redundant"


_CYCLE = [(d, d.month, d.day, (d.weekday() + 1) % 7)
          for d in (date(2024, 1, 1) + timedelta(days=i) for i in range(28 * 366))]


def _days(d: dict[str, int]) -> set[date]:
    """Days on which one date dict fires over a full 28-year weekday cycle."""
    return {day for day, mo, dm, wd in _CYCLE
            if d.get("Month", mo) == mo and d.get("Day", dm) == dm and d.get("Weekday", wd) == wd}


# --- every expression the tests know --------------------------------------------------

def _known_expressions() -> list[str]:
    """The expression lists of the other schedule tests, and the schedules of the
    real-world crontabs when the corpus is here (read in place)."""
    from tests import test_firings, test_kube_render, test_nexttimes, test_oncalendar
    from tests.test_import_corpus import CORPUS

    found = [c for c, _ in CASES] + WEEKDAY_IN_SOME_MONTHS + list(test_firings.EXPRESSIONS)
    found += test_kube_render.EXPRESSIONS + test_nexttimes.EXPRESSIONS + test_oncalendar.EXTRA
    if CORPUS is not None:
        for f in sorted((CORPUS / "cron").iterdir()):
            for line in f.read_text(errors="replace").splitlines():
                words = line.split()
                if len(words) > 5 and not words[0].startswith("#") and "=" not in words[0]:
                    found.append(" ".join(words[:5]))
    return list(dict.fromkeys(found))


# Seven weeks over a leap February's ends, with both month changes around it.
KNOWN_START, KNOWN_END = datetime(2028, 1, 24), datetime(2028, 3, 13)


def test_every_known_expression_fires_like_cronsim_under_both_readings() -> None:
    from schedgen.schedule.expressions import MACROS

    checked = refused = 0
    for expr in _known_expressions():
        try:
            cron = parse_cron(MACROS.get(expr.lower(), expr))
        except ValueError:
            continue   # not an expression schedgen takes (the corpus has some)
        try:
            dicts = calendar_dicts(cron)
        except NotExpressible as exc:
            assert "some months only" in str(exc) or "cannot require" in str(exc), expr
            refused += 1
            continue
        assert not any("Weekday" in d and ("Month" in d or "Day" in d) for d in dicts), expr
        want = cronsim_minutes([cron.text], KNOWN_START, KNOWN_END)
        for model in MODELS:
            assert launchd_minutes(dicts, KNOWN_START, KNOWN_END, model) == want, (expr, model)
        checked += 1
    assert checked > 60 and refused >= len(WEEKDAY_IN_SOME_MONTHS)
