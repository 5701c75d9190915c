"""`import --from systemd`: hand-written user timers back to jobs.toml."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from schedgen.config.load import loads
from schedgen.schedule.expressions import MACROS, Cron, parse_entry
from schedgen.targets.systemd.from_oncalendar import NotExpressible, to_cron
from schedgen.targets.systemd.oncalendar import on_calendar
from tests.helpers import build_file_tree, schedgen
from tests.test_calendar import CASES, DAYS, MONTHS, _field
from tests.test_oncalendar import EXTRA, cron_first


@pytest.mark.parametrize(("value", "cron"), [
    ("daily", "0 0 * * *"),
    ("weekly", "0 0 * * 1"),  # systemd's week starts on Monday
    ("hourly", "0 * * * *"),
    ("Mon..Fri 09:00", "0 9 * * 1-5"),
    ("Sat,Sun *-*-* 10:30:00", "30 10 * * 0,6"),
    ("*-*-01,15 06:15:00", "15 6 1,15 * *"),
    ("*:0/15", "*/15 * * * *"),
    ("*-*-* 00..20/5:00:00", "0 */5 * * *"),
    ("Mon *-*-01/2 00:00", "0 0 */2 * 1"),           # AND, kept by the '*' prefix
    ("Tue,Thu,Sat,Sun *-*-01..07 00:00", "0 0 1-7 * */2"),
    ("*-02-29 12:00", "0 12 29 2 *"),
    ("quarterly", "0 0 1 */3 *"),
])
def test_oncalendar_to_cron(value: str, cron: str) -> None:
    assert to_cron(value) == cron


@pytest.mark.parametrize(("value", "why"), [
    ("Mon *-*-01..07 00:00", "weekday AND the date"),  # the first Monday of the month
    ("*-*~01 00:00", "month's end"),
    ("2028-*-* 00:00", "a year"),
    ("*-*-* 00:00:30", "seconds"),
    ("*-*-* 10:00 Europe/Kyiv", "time zone"),
])
def test_oncalendar_cron_cannot_say(value: str, why: str) -> None:
    with pytest.raises(NotExpressible, match=why):
        to_cron(value)


def _round_trip(expr: str) -> None:
    """cron → OnCalendar lines → cron: the same minutes, or refused as an AND cron lost."""
    cron = parse_entry(expr)
    assert isinstance(cron, Cron)
    lines = on_calendar([cron])
    try:
        back = [to_cron(line) for line in lines]
    except NotExpressible:
        # Only an AND whose day sets are not '*/n' steps any more ("*/40" is just "1").
        assert cron.day_and and not cron.days_full and not cron.weekdays_full
        return
    text = MACROS.get(expr, expr)
    assert cron_first(back, 1500) == cron_first([text], 1500), (expr, lines, back)


@pytest.mark.parametrize("expr", [c for c, _ in CASES] + EXTRA)
def test_round_trip_fires_the_same_minutes(expr: str) -> None:
    _round_trip(expr)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(minute=_field(0, 59), hour=_field(0, 23), dom=_field(1, 31),
       month=_field(1, 12, MONTHS), dow=_field(0, 7, DAYS))
def test_generated_round_trips(minute, hour, dom, month, dow) -> None:
    expr = f"{minute} {hour} {dom} {month} {dow}"
    try:
        parse_entry(expr)
    except ValueError:
        assume(False)
        return
    _round_trip(expr)


SERVICE = "[Unit]\nDescription={d}\n\n[Service]\nType=oneshot\nExecStart={x}\n{extra}"


def _tree(home: Path) -> Path:
    d = home / ".config/systemd/user"
    build_file_tree(d, {
        "backup.timer": "[Timer]\nOnCalendar=Mon..Fri 02:30\nOnCalendar=Sat 04:00\n"
                        "Persistent=true\n\n[Install]\nWantedBy=timers.target\n",
        "backup.service": SERVICE.format(
            d="Nightly backup, 100%% sure", x="/usr/bin/restic backup %h/docs",
            extra="WorkingDirectory=%h\nEnvironment=\"RESTIC_REPO=/srv/r\" MODE=fast\n"
                  "EnvironmentFile=-%h/.restic.env\nNice=10\n"),
        "poll.timer": "[Timer]\nOnBootSec=2min\nOnUnitActiveSec=15min\nRandomizedDelaySec=90\n",
        "poll.service": SERVICE.format(d="Poll", x="/usr/local/bin/poll --quiet", extra=""),
        "first-monday.timer": "[Timer]\nOnCalendar=Mon *-*-01..07 09:00\n",
        "first-monday.service": SERVICE.format(d="Report", x="/bin/true", extra=""),
        "orphan.timer": "[Timer]\nOnCalendar=daily\n",
        "greet.timer": "[Timer]\nOnStartupSec=0\n",
        "greet.service": SERVICE.format(d="Hello", x="/bin/echo hi $USER", extra=""),
        "local.schedgen.mine.timer": "# schedgen-managed\n[Timer]\nOnCalendar=daily\n",
        "timers.target.wants": {},
    })
    for name in ("backup.timer", "poll.timer", "greet.timer"):
        os.symlink(d / name, d / "timers.target.wants" / name)
    return d


def test_import_from_systemd_user_folder(home: Path, tmp_path: Path) -> None:
    _tree(home)
    r = schedgen("import", "--from", "systemd", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = tomllib.loads(r.stdout)
    loads(r.stdout, tmp_path / "jobs.toml")  # validates
    jobs = doc["jobs"]
    assert set(jobs) == {"backup", "poll", "greet"}
    assert doc["defaults"]["targets"] == ["systemd"]
    b = jobs["backup"]
    assert b["schedule"] == ["30 2 * * 1-5", "0 4 * * 6"]
    assert b["command"] == ["/usr/bin/restic", "backup", f"{home}/docs"]
    assert b["description"] == "Nightly backup, 100% sure"
    assert b["env"] == {"RESTIC_REPO": "/srv/r", "MODE": "fast"}
    assert b["env_file"] == f"{home}/.restic.env"
    assert b["working_dir"] == str(home)
    assert b["catch_up"] == "once" and "random_delay" not in b   # Persistent=true
    assert jobs["poll"]["schedule"] == "@every 15m"  # OnBootSec only placed the first run
    # RandomizedDelaySec, fresh each time as systemd draws it without FixedRandomDelay.
    assert (jobs["poll"]["random_delay"], jobs["poll"]["random_delay_stable"]) == ("1m30s", False)
    assert "catch_up" not in jobs["poll"]
    assert jobs["greet"]["schedule"] == "@reboot"
    assert jobs["greet"]["command"] == '/bin/echo hi "$USER"'
    assert "first-monday.timer: skipped" in r.stderr and "weekday AND the date" in r.stderr
    assert "orphan.timer: skipped: its service orphan.service is not in" in r.stderr
    assert "left out 1 timer schedgen manages itself" in r.stderr
    assert "backup.service: Nice ignored" in r.stderr
