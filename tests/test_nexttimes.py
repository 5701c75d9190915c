"""`next` agrees with cronsim (and with a plain reading of Debian's rules) around month ends,
leap day and DST, merges lists, and says what @every and @reboot mean."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from itertools import islice
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim

from schedgen.commands.next import next_times, upcoming
from schedgen.config.load import loads
from schedgen.config.model import Config
from schedgen.output.next import as_json, as_text
from schedgen.schedule.expressions import MACROS, Cron, parse_cron
from tests.helpers import schedgen, write_config

START = datetime(2028, 1, 30, 23, 59)  # just before a month end; 2028 is a leap year


def config(tmp_path: Path, jobs: dict[str, str]) -> Config:
    text = "\n".join(f"[jobs.{name}]\ncommand = \"true\"\n{body}\n" for name, body in jobs.items())
    return loads(text, tmp_path / "jobs.toml")


def one(tmp_path: Path, body: str):
    return config(tmp_path, {"j": body}).jobs[0]


def debian_times(cron: Cron, start: datetime):
    """Independent of cronsim: walk the days, apply Debian's OR/AND day rule."""
    day = start.date()
    while True:
        weekday = (day.weekday() + 1) % 7
        dom, dow = day.day in cron.days, weekday in cron.weekdays
        ok = (dom and dow) if cron.day_and else (dom or dow)
        if day.month in cron.months and ok:
            for h in sorted(cron.hours):
                for m in sorted(cron.minutes):
                    t = datetime(day.year, day.month, day.day, h, m)
                    if t > start:
                        yield t
        day += timedelta(days=1)


EXPRESSIONS = [
    "0 0 29 2 *",          # leap day only: 2028, then 2032
    "0 0 31 * *",          # month ends with a 31st
    "59 23 28-31 * *",     # the last days, whatever their number
    "0 12 30 1,2,3 *",     # no Feb 30: Jan 30, Mar 30
    "0 0 1 * *",
    "@monthly",
    "30 6 * 2 *",          # every February day, including the 29th
    "0 0 1,15 * 1",        # OR: the 1st, the 15th and Mondays
    "0 0 */2 * 1",         # AND (Debian '*' rule): odd days that are Mondays
    "0 9 * * 1-5",
    "0 0 * * 7",
    "*/20 23 31 1 *",
    "0 0 29 2 1",          # Feb 29 or any Monday
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_next_agrees_with_cronsim(tmp_path: Path, expr: str) -> None:
    job = one(tmp_path, f'schedule = "{expr}"')
    got = next_times(job, 12, START).times
    oracle = list(islice(CronSim(MACROS.get(expr, expr), START), 12))
    assert list(got) == oracle
    cron = job.schedule[0]
    assert isinstance(cron, Cron)
    assert list(got) == list(islice(debian_times(cron, START), 12))


def test_next_over_leap_day_and_month_ends(tmp_path: Path) -> None:
    job = one(tmp_path, 'schedule = ["0 0 29 2 *", "0 0 28-31 * *"]')
    got = next_times(job, 6, datetime(2028, 2, 1)).times
    assert [t.date() for t in got] == [date(2028, 2, 28), date(2028, 2, 29), date(2028, 3, 28),
                                       date(2028, 3, 29), date(2028, 3, 30), date(2028, 3, 31)]


def test_a_list_is_merged_in_order_without_duplicates(tmp_path: Path) -> None:
    job = one(tmp_path, 'schedule = ["0 0 * * *", "0 0 1 * *", "30 12 * * 0", "@midnight"]')
    got = next_times(job, 40, START).times
    assert list(got) == sorted(set(got))
    merged = sorted({t for e in ("0 0 * * *", "0 0 1 * *", "30 12 * * 0")
                     for t in islice(CronSim(e, START), 40)})[:40]
    assert list(got) == merged


def test_next_in_a_zone_with_dst(tmp_path: Path) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    start = datetime(2028, 3, 24, 12, 0, tzinfo=berlin)  # DST starts 2028-03-26 02:00
    job = one(tmp_path, 'schedule = "30 2 * * *"')
    got = next_times(job, 4, start).times
    assert list(got) == list(islice(CronSim("30 2 * * *", start), 4))
    assert all(t.tzinfo is not None for t in got)
    assert [t.day for t in got] == [25, 26, 27, 28]  # Debian still runs on the 26th


def test_every_counts_elapsed_time_across_dst(tmp_path: Path) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    start = datetime(2028, 3, 26, 1, 0, tzinfo=berlin)
    job = one(tmp_path, 'schedule = "@every 30m"\ntargets = ["launchd"]')
    result = next_times(job, 4, start)
    utc = [t.astimezone(UTC) for t in result.times]
    assert [b - a for a, b in zip(utc, utc[1:], strict=False)] == [timedelta(minutes=30)] * 3
    assert result.times[2].hour == 3  # 02:30 does not exist that night
    assert any("launchd counts from when the job is loaded" in n for n in result.notes)


def test_every_on_cron_only_uses_the_step_expression(tmp_path: Path) -> None:
    job = one(tmp_path, 'schedule = "@every 15m"\ntargets = ["cron"]')
    result = next_times(job, 3, datetime(2028, 2, 29, 10, 7))
    assert [t.minute for t in result.times] == [15, 30, 45]
    assert any("*/15 * * * *" in n for n in result.notes)


def test_reboot_has_no_times_and_says_at_boot(tmp_path: Path) -> None:
    result = next_times(one(tmp_path, 'schedule = "@reboot"'), 5, START)
    assert result.times == ()
    assert result.readable == "At boot"
    assert "at boot (@reboot)" in result.notes


def test_disabled_job_has_no_times(tmp_path: Path) -> None:
    result = next_times(one(tmp_path, 'schedule = "@daily"\nenabled = false'), 5, START)
    assert result.times == () and result.notes[0].startswith("disabled")


def test_upcoming_selects_jobs_and_rejects_unknown_ones(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"a": 'schedule = "@daily"', "b": 'schedule = "@hourly"'})
    assert [u.job for u in upcoming(cfg, ["b"], 2, START)] == ["b"]
    assert [u.job for u in upcoming(cfg, None, 2, START)] == ["a", "b"]
    with pytest.raises(Exception, match="no job named 'c'.*jobs: a, b"):
        upcoming(cfg, ["c"], 2, START)


def test_text_and_json_shapes(tmp_path: Path) -> None:
    cfg = config(tmp_path, {"a": 'description = "Nightly"\nschedule = "15 6 * * *"'})
    results = upcoming(cfg, None, 2, datetime(2028, 2, 28, 7, 0, tzinfo=UTC))
    assert as_json(results) == {"a": ["2028-02-29T06:15:00Z", "2028-03-01T06:15:00Z"]}
    assert as_text(results) == ("a: Nightly\n  15 6 * * *  (At 06:15 every day)\n"
                                "  2028-02-29 06:15 UTC\n  2028-03-01 06:15 UTC")


def test_cli_next_json_and_errors(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = "true"\n'
                       'schedule = ["0 0 29 2 *", "@monthly"]\n[jobs.b]\ncommand = "true"\n'
                       'schedule = "@reboot"\n')
    out = schedgen("next", "-c", str(cfg), "-n", "3", "--json", env={"TZ": "UTC"})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"a", "b"} and data["b"] == [] and len(data["a"]) == 3
    times = [datetime.fromisoformat(t) for t in data["a"]]
    expect = sorted({*islice(CronSim("0 0 29 2 *", times[0] - timedelta(minutes=1)), 3),
                     *islice(CronSim("0 0 1 * *", times[0] - timedelta(minutes=1)), 3)})[:3]
    assert times == expect
    text = schedgen("next", "b", "-c", str(cfg), env={"TZ": "UTC"})
    assert text.returncode == 0 and "At boot" in text.stdout
    bad = schedgen("next", "nope", "-c", str(cfg))
    assert bad.returncode == 2 and "no job named 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert parse_cron("0 0 29 2 *")  # the leap-day job above is valid for schedgen too
