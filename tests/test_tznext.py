"""`next` for a job with `timezone`: times in the job's zone, the host's beside, and the
firings a DST change moved or merged marked as such; jobs without a zone as before."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from cronsim import CronSim

from schedgen.commands.next import next_times
from schedgen.config.load import loads
from schedgen.output.next import as_text
from tests.helpers import schedgen, write_config

BERLIN = ZoneInfo("Europe/Berlin")


def job(tmp_path: Path, schedule: str, zone: str | None = "America/New_York"):
    tz = f'timezone = "{zone}"\n' if zone else ""
    text = f'[jobs.j]\ncommand = "true"\nschedule = {schedule}\n{tz}'
    return loads(text, tmp_path / "jobs.toml").jobs[0]


def test_times_are_cronsims_in_the_jobs_zone(tmp_path: Path) -> None:
    start = datetime(2027, 3, 12, 12, 0, tzinfo=UTC).astimezone(BERLIN)
    r = next_times(job(tmp_path, '"30 2 * * *"'), 4, start)
    ny = ZoneInfo("America/New_York")
    oracle = CronSim("30 2 * * *", start.astimezone(ny))
    assert list(r.times) == [next(oracle) for _ in range(4)]
    assert all(t.tzinfo == ny for t in r.times)


def test_gap_firing_is_marked_moved_and_host_time_shown(tmp_path: Path) -> None:
    start = datetime(2027, 3, 12, 12, 0, tzinfo=UTC).astimezone(BERLIN)
    r = next_times(job(tmp_path, '"30 2 * * *"'), 3, start)
    assert [bool(m) for m in r.marks] == [False, True, False]
    assert r.marks[1].startswith("moved by DST: 02:30 does not exist")
    lines = as_text([r]).splitlines()
    assert lines[1] == "  30 2 * * *  (At 02:30 every day, America/New_York time)"
    assert lines[3].startswith("  2027-03-14 03:00 EDT  (host 08:00 CET; moved by DST")


def test_two_gap_firings_merge_and_a_repeated_hour_runs_once(tmp_path: Path) -> None:
    start = datetime(2027, 3, 13, 12, 0, tzinfo=UTC)
    r = next_times(job(tmp_path, '"0,30 2 * * *"'), 1, start)
    assert r.marks[0].startswith("merged by DST: 02:00, 02:30 do not exist")
    fall = datetime(2027, 11, 6, 12, 0, tzinfo=UTC)
    r = next_times(job(tmp_path, '"30 1 * * *"'), 2, fall)
    assert r.marks[0].startswith("merged by DST: 01:30 happens twice") and r.marks[1] == ""
    # A wildcard-hour job runs in both readings of the hour: nothing merged.
    r = next_times(job(tmp_path, '"30 * * * *"'), 8, datetime(2027, 11, 7, 4, 0, tzinfo=UTC))
    assert [t.strftime("%H:%M %Z") for t in r.times[:3]] == ["00:30 EDT", "01:30 EDT", "01:30 EST"]
    assert not any(r.marks)


def test_host_time_left_out_when_it_reads_the_same(tmp_path: Path) -> None:
    start = datetime(2027, 6, 1, tzinfo=UTC)
    r = next_times(job(tmp_path, '"0 9 * * *"', zone="UTC"), 1, start)
    assert as_text([r]).splitlines()[2] == "  2027-06-01 09:00 UTC"


def test_jobs_without_a_zone_print_as_before(tmp_path: Path) -> None:
    r = next_times(job(tmp_path, '"30 2 * * *"', zone=None), 2, datetime(2027, 3, 13, 12, 0))
    assert r.zone is None and r.marks == ()
    assert as_text([r]).splitlines()[1:] == ["  30 2 * * *  (At 02:30 every day)",
                                             "  2027-03-14 02:30 UTC", "  2027-03-15 02:30 UTC"]


def test_cli_next_prints_the_zone(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml",
                       '[jobs.j]\ncommand = "true"\nschedule = "0 9 * * *"\n'
                       'timezone = "Asia/Kathmandu"\n')
    r = schedgen("next", "-c", str(cfg), "-n", "1", env={"TZ": "Europe/Berlin"})
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[2]
    assert re.search(r"09:00 \+05:45  \(host 0[45]:15 CES?T\)$", line), line
