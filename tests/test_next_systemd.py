"""`next` for a systemd job shows systemd's own firings: around a DST change they are
not Debian cron's (a skipped time does not run that day; a repeated one runs once). The
oracle is the real `systemd-analyze calendar` on the OnCalendar lines schedgen renders."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from schedgen.commands.next import next_times
from schedgen.config.load import loads
from schedgen.output.next import as_text
from schedgen.schedule.expressions import Cron, parse_cron
from schedgen.targets.systemd.oncalendar import on_calendar
from tests.oracles import systemd_instants

needs_systemd = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="needs systemd-analyze")


def _job(schedule: str, zone: str, targets: str = '["systemd"]'):
    text = (f'[jobs.j]\ncommand = ["/bin/true"]\nschedule = "{schedule}"\n'
            f'timezone = "{zone}"\ntargets = {targets}\n')
    return loads(text, Path("/cfg/jobs.toml")).jobs[0]


CASES = [
    ("30 2 * * *", "America/New_York", datetime(2027, 3, 12, 12, tzinfo=UTC)),   # gap
    ("30 1 * * *", "America/New_York", datetime(2027, 11, 5, 12, tzinfo=UTC)),   # repeat
    ("*/20 1 * * *", "America/New_York", datetime(2027, 11, 6, 12, tzinfo=UTC)),
    ("0,30 2 * * *", "Europe/Berlin", datetime(2027, 3, 27, 12, tzinfo=UTC)),
    ("45 2 * * 0", "Europe/Berlin", datetime(2027, 10, 20, tzinfo=UTC)),
    ("15 2 * * *", "Australia/Lord_Howe", datetime(2027, 10, 1, tzinfo=UTC)),   # 30-min gap
    ("0 1 * * *", "Australia/Lord_Howe", datetime(2027, 4, 2, tzinfo=UTC)),     # 30-min repeat
    ("30 12 * * *", "Asia/Kathmandu", datetime(2027, 3, 12, tzinfo=UTC)),       # no DST
]


@needs_systemd
@pytest.mark.parametrize(("expr", "zone", "start"), CASES,
                         ids=[f"{z}-{e}" for e, z, _ in CASES])
def test_next_for_a_systemd_job_is_what_systemd_analyze_says(expr: str, zone: str,
                                                             start: datetime) -> None:
    job = _job(expr, zone)
    got = next_times(job, 8, start).times
    cron = parse_cron(expr)
    assert isinstance(cron, Cron)
    want = systemd_instants(on_calendar([cron], zone=zone), start.replace(tzinfo=None), 8)
    assert [t.astimezone(UTC).replace(tzinfo=None) for t in got] == want


@needs_systemd
def test_beside_cron_the_systemd_firings_are_shown_where_they_differ() -> None:
    start = datetime(2027, 3, 12, 12, tzinfo=UTC)
    job = _job("30 2 * * *", "America/New_York", '["cron", "systemd"]')
    up = next_times(job, 3, start)
    ny = ZoneInfo("America/New_York")
    # cron: right after the gap on the 14th; systemd: not on the 14th at all
    assert [t.astimezone(ny).strftime("%d %H:%M") for t in up.times] == \
        ["13 02:30", "14 03:00", "15 02:30"]
    [(target, own)] = up.by_target
    assert target == "systemd"
    assert [t.astimezone(ny).strftime("%d %H:%M") for t in own] == ["13 02:30", "15 02:30", "16 02:30"]
    text = as_text([up])
    assert "on systemd instead:" in text and "runs right after the gap" in text
    # Away from a change they agree: nothing extra.
    calm = next_times(job, 3, datetime(2027, 6, 1, tzinfo=UTC))
    assert calm.by_target == () and "on systemd" not in as_text([calm])
