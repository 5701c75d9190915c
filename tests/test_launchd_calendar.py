"""What launchd gets for schedules its two readings of a dict would split, for cron's OR
of the day fields, for large schedules and for a short @every."""

from __future__ import annotations

import plistlib
from datetime import datetime
from pathlib import Path

import pytest
from cronsim import CronSim

from schedgen.config.load import loads
from schedgen.render.fit import why_not
from schedgen.schedule.expressions import parse_cron
from schedgen.schedule.to_calendar import MAX_DICTS, NotExpressible, calendar_dicts, union_dicts
from schedgen.schedule.upcoming import firings
from schedgen.targets.launchd.render import plist
from tests.helpers import schedgen, write_config


def _loads(text: str):
    return loads(text, Path("/cfg/jobs.toml"))

OR_RULE = ["0 0 31 2 1", "0 0 30 2 mon", "0 0 30,31 2 1"]


def _config(schedule: str, targets: str = '["cron", "systemd", "kubernetes"]',
            extra: str = "") -> str:
    return (f'[jobs.a]\ncommand = ["/bin/true"]\nschedule = "{schedule}"\ntargets = {targets}\n'
            f'{extra}[jobs.a.kubernetes]\nimage = "busybox:1"\n')


@pytest.mark.parametrize("expr", OR_RULE)
def test_both_day_fields_restricted_fire_on_the_weekdays_as_cron_does(expr: str) -> None:
    """Debian cron ORs the two day fields: the 30th/31st never come, every Monday in
    February does. Accepted, and `next` lists what cronsim lists."""
    config = _loads(_config(expr))
    job = config.jobs[0]
    start = datetime(2026, 12, 4, 13, 0)
    times = firings(job.schedule, 5, start, launchd=False).times
    assert times[0] == datetime(2027, 2, 1, 0, 0)
    expected = CronSim(expr, start)
    assert list(times) == [next(expected) for _ in range(5)]
    for target in ("cron", "systemd", "kubernetes"):
        assert why_not(job, target) is None


@pytest.mark.parametrize("expr", OR_RULE)
def test_on_launchd_they_fire_through_the_gate(expr: str, tmp_path) -> None:
    """launchd gets every day of February (no dict says "Mondays in February" on every
    launchd) and the plist passes --gate: the job file runs the Mondays only
    (tests/test_launchd_gate.py holds the gated fires to cronsim)."""
    path = write_config(tmp_path / "jobs.toml", _config(expr, '["launchd"]'))
    r = schedgen("validate", "--config", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    cfg = _loads(_config(expr, '["launchd"]'))
    p = plistlib.loads(plist(cfg.jobs[0], cfg).encode())
    assert p["StartCalendarInterval"] == [{"Month": 2, "Hour": 0, "Minute": 0}]
    assert p["ProgramArguments"][1:] == ["--gate"]


def test_still_never_fires_when_cron_ands_the_fields() -> None:
    with pytest.raises(ValueError, match="can never fire"):
        parse_cron("0 0 31 2 *")
    with pytest.raises(ValueError, match="can never fire"):
        parse_cron("0 0 30 2 */2")   # '*' starts a field: AND


def test_no_rendered_plist_has_weekday_with_month_or_day(tmp_path) -> None:
    zoned = _loads(_config("30 8 * 7 0", '["launchd"]', 'timezone = "Asia/Tokyo"\n'))
    for cfg in (_loads(_config("0 9 * * 1-5", '["launchd"]')), zoned,
                _loads(_config("30 8 * 7 0", '["launchd"]')),
                _loads(_config("0 0 */2 * 1", '["launchd"]'))):
        dicts = plistlib.loads(plist(cfg.jobs[0], cfg).encode())["StartCalendarInterval"]
        assert dicts and not any("Weekday" in d and ("Month" in d or "Day" in d) for d in dicts)


def test_a_schedule_past_the_cap_is_refused_before_it_is_built() -> None:
    big = parse_cron("0-58 0-22 1-30 1-11 *")
    with pytest.raises(NotExpressible, match=f"at most {MAX_DICTS}"):
        calendar_dicts(big)
    assert len(union_dicts([parse_cron("*/2 */2 1-15 * *")])) == 30 * 12 * 15 < MAX_DICTS


def test_the_union_of_many_expressions_is_capped_too() -> None:
    crons = [parse_cron(f"{m} 0-22 1-20 * *") for m in range(0, 60, 2)]   # 460 dicts each
    with pytest.raises(NotExpressible, match="more than"):
        union_dicts(crons)


def test_an_every_below_launchds_throttle_sets_throttle_interval() -> None:
    cfg = _loads(_config("@every 2s", '["launchd"]'))
    p = plistlib.loads(plist(cfg.jobs[0], cfg).encode())
    assert p["StartInterval"] == 2 and p["ThrottleInterval"] == 2
    cfg = _loads(_config("@every 1m", '["launchd"]'))
    assert "ThrottleInterval" not in plistlib.loads(plist(cfg.jobs[0], cfg).encode())


def test_a_throttle_longer_than_the_every_is_refused(tmp_path) -> None:
    path = write_config(tmp_path / "jobs.toml",
                        _config("@every 5s", '["launchd"]', "throttle_interval = 10\n"))
    r = schedgen("validate", "--config", str(path))
    assert r.returncode != 0 and "jobs.a.throttle_interval" in r.stdout + r.stderr


@pytest.mark.parametrize(("every", "says"), [
    ("30s", "not a whole number of minutes"),
    ("45m", "*/45 would fire at :00 and then 15 minutes later"),
    ("90m", "not a whole number of hours"),
    ("5h", "*/5 would fire at 00:00 and then 4 hours later"),
    ("2d", "longer than a day"),
])
def test_every_refusal_on_cron_says_what_is_wrong(every: str, says: str, tmp_path) -> None:
    path = write_config(tmp_path / "jobs.toml", _config(f"@every {every}", '["cron"]'))
    r = schedgen("validate", "--config", str(path))
    assert r.returncode != 0 and says in r.stdout + r.stderr, r.stdout + r.stderr
    assert "divide an hour or a day" not in r.stdout + r.stderr
