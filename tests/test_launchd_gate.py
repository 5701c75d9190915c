"""A job without a zone whose days launchd cannot say exactly: a superset of dicts that
means the same under both readings of a dict (tests/oracles.py), and the gate in the
host's zone (templates/runtime/81-tzgate.sh) on launchd's fires only (`--gate`).

Held against cronsim: the fires of the widened dicts under either launchd model, put
through the gate's decision (tzgate.Gate, which tests/test_tzgate.py holds the bash gate
to), are cronsim's firings; and the rendered job file under faketime drops a fire that
is no firing and runs one that is.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from schedgen.render.artifacts import wrapper
from schedgen.render.tzgate import GATE_ARG, HOST, Gate, host_zone
from schedgen.schedule.expressions import MACROS, parse_cron
from schedgen.schedule.to_calendar import calendar_dicts, needs_gate, union_dicts
from schedgen.schedule.tzwiden import Window
from schedgen.targets.launchd.render import gated, plist
from tests import faked_clock
from tests.oracles import cronsim_minutes, launchd_minutes
from tests.test_calendar import KNOWN_END, KNOWN_START, MODELS, _known_expressions
from tests.wrapper_kit import Wrapped, make_job

WINDOW = Window.years(2027, 2)


def _gated_run(exprs: list[str], dicts: list[dict[str, int]], model: str, start: datetime,
               end: datetime, zone: str = "UTC") -> set[datetime]:
    """The host wall times the job runs at: launchd's fires (wall clock in ``zone``) by
    ``model``, each put through the gate as the host's clock reads it."""
    gate = Gate.of(HOST, [parse_cron(e) for e in exprs], WINDOW)
    tz = ZoneInfo(zone)
    state: list[int | None] = [None, None]
    return {t for t in sorted(launchd_minutes(dicts, start, end, model))
            if gate.decide(t.replace(tzinfo=tz), state)}


@pytest.fixture(autouse=True)
def _utc_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def _no_split_dict(dicts: list[dict[str, int]]) -> bool:
    return not any("Weekday" in d and ("Month" in d or "Day" in d) for d in dicts)


@pytest.mark.parametrize(("expr", "dicts"), [
    # Sundays in July: every day of July (31 fires) beats every Sunday (52)
    ("30 8 * 7 0", [{"Month": 7, "Hour": 8, "Minute": 30}]),
    # cron's OR in February only: every day of February
    ("0 0 31 2 1", [{"Month": 2, "Hour": 0, "Minute": 0}]),
    ("0 0 1,15 7 1", [{"Month": 7, "Hour": 0, "Minute": 0}]),
    # odd days AND Mondays: every Monday (1 dict) beats sixteen odd days
    ("0 0 */2 * 1", [{"Weekday": 1, "Hour": 0, "Minute": 0}]),
    # weekdays of eleven months: five Weekday dicts beat eleven Month dicts
    ("0 9 * 1-11 1-5", [{"Weekday": w, "Hour": 9, "Minute": 0} for w in range(1, 6)]),
])
def test_the_smaller_superset_is_written(expr: str, dicts: list[dict[str, int]]) -> None:
    cron = parse_cron(expr)
    assert needs_gate([cron])
    assert calendar_dicts(cron, widen=True) == dicts


def test_an_exact_schedule_needs_no_gate() -> None:
    assert not needs_gate([parse_cron(e) for e in ("0 9 * * 1-5", "0 0 1,15 * 1", "30 8 1 7 *")])


def test_every_known_expression_runs_at_cronsims_firings_under_both_readings() -> None:
    """Every expression the tests know: exact dicts as they are (test_calendar.py), the
    others widened and gated; no dict pairs Weekday with Month or Day."""
    gated_n = 0
    for expr in _known_expressions():
        try:
            cron = parse_cron(MACROS.get(expr.lower(), expr))
        except ValueError:
            continue
        if not needs_gate([cron]):
            continue
        dicts = union_dicts([cron], widen=True)
        assert _no_split_dict(dicts), expr
        want = cronsim_minutes([cron.text], KNOWN_START, KNOWN_END)
        for model in MODELS:
            ran = _gated_run([cron.text], dicts, model, KNOWN_START, KNOWN_END)
            assert ran == want, (expr, model, sorted(ran ^ want)[:4])
        gated_n += 1
    assert gated_n >= 8


@pytest.mark.parametrize("exprs", [["30 8 * 7 0", "0 12 * * 3"], ["0 0 */2 * 1", "15 6 1 * *"],
                                   ["*/20 9 * 2 1", "0 0 31 2 1"]])
def test_a_list_of_expressions_over_a_year(exprs: list[str]) -> None:
    crons = [parse_cron(e) for e in exprs]
    dicts = union_dicts(crons, widen=True)
    assert _no_split_dict(dicts)
    start, end = datetime(2028, 1, 1), datetime(2029, 1, 1)
    want = cronsim_minutes(exprs, start, end)
    for model in MODELS:
        assert _gated_run(exprs, dicts, model, start, end) == want, model


def test_a_host_with_dst_runs_the_wall_clock_firings(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Berlin host, the gate reads the host's wall clock as launchd does: a
    fixed-time firing is a firing by its wall time, whatever the offset that day."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    assert host_zone().utcoffset(datetime(2028, 7, 1)) == timedelta(hours=2)
    # the Sundays of the two clock-change months; 02:30 is skipped on one, twice on the other
    exprs = ["30 8 * 3,10 0", "30 2 * 3,10 0"]
    dicts = union_dicts([parse_cron(e) for e in exprs], widen=True)
    start, end = datetime(2028, 3, 1), datetime(2028, 11, 1)
    want = cronsim_minutes(exprs, start, end)
    for model in MODELS:
        assert _gated_run(exprs, dicts, model, start, end, "Europe/Berlin") == want


# -- rendered ------------------------------------------------------------------------

def _job(tmp_path: Path, schedule: str, targets: list[str], out: Path) -> Wrapped:
    tmp_path.mkdir(exist_ok=True)
    return make_job(tmp_path, "july", schedule=schedule, targets=targets,
                    command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')


def test_the_plist_passes_the_gate_argument_only_when_gated(tmp_path: Path) -> None:
    w = _job(tmp_path, "30 8 * 7 0", ["launchd", "cron"], tmp_path / "ran")
    p = plistlib.loads(plist(w.job, w.config).encode())
    assert p["ProgramArguments"] == [str(w.job.wrapper_path), GATE_ARG]
    assert p["StartCalendarInterval"] == [{"Month": 7, "Hour": 8, "Minute": 30}]
    assert gated(w.job) and f'!= {GATE_ARG} ] || sg_tz_zone={HOST}' in wrapper(w.job, w.config)
    plain = _job(tmp_path / "p", "0 9 * * 1-5", ["launchd"], tmp_path / "ran")
    assert plistlib.loads(plist(plain.job, plain.config).encode())["ProgramArguments"] == [
        str(plain.job.wrapper_path)]
    assert not gated(plain.job) and "sg_tz_" not in wrapper(plain.job, plain.config)
    # cron fires it at its firings only: the same job without launchd has no gate
    cron_only = _job(tmp_path / "c", "30 8 * 7 0", ["cron"], tmp_path / "ran")
    assert "sg_tz_" not in wrapper(cron_only.job, cron_only.config)


def test_validate_accepts_what_it_refused(tmp_path: Path) -> None:
    from tests.helpers import schedgen, write_config

    path = write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = ["/bin/true"]\n'
                        'schedule = ["0 0 31 2 1", "0 0 */2 * 1"]\ntargets = ["launchd"]\n')
    r = schedgen("validate", "--config", str(path))
    assert r.returncode == 0, r.stdout + r.stderr


needs_faketime = pytest.mark.skipif(shutil.which("faketime") is None and not os.environ.get("CI"),
                                    reason="faketime not installed")


def _at(w: Wrapped, t: datetime, *args: str) -> subprocess.CompletedProcess[str]:
    return faked_clock.run(t, w.argv(*args),
                           env=w.env({"TZ": "Europe/Berlin"}), capture_output=True, text=True,
                           timeout=60)


@needs_faketime
@pytest.mark.macos
def test_the_job_file_drops_a_fire_that_is_not_a_firing(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Sundays in July at 08:30 on a Berlin host: launchd fires every day of July (and,
    under either reading, never in August); the gate runs the Sunday only."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    out = tmp_path / "ran"
    w = _job(tmp_path, "30 8 * 7 0", ["launchd"], out)
    berlin = ZoneInfo("Europe/Berlin")
    saturday = datetime(2027, 7, 3, 8, 30, tzinfo=berlin)
    sunday = datetime(2027, 7, 4, 8, 30, tzinfo=berlin)
    before = sorted(tmp_path.rglob("*"))
    r = _at(w, saturday, GATE_ARG)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert sorted(tmp_path.rglob("*")) == before  # not a firing: nothing written
    r = _at(w, sunday, GATE_ARG)
    assert r.returncode == 0, r.stderr
    assert out.read_text().split() and out.read_text().startswith("20270704T0630")  # UTC id
    # the next day's fire is no firing again; and a run not from launchd is not gated
    r = _at(w, sunday + timedelta(days=1), GATE_ARG)
    assert r.returncode == 0 and len(out.read_text().split()) == 1
    r = _at(w, saturday + timedelta(days=7), "--cron")
    assert r.returncode == 0 and len(out.read_text().split()) == 2
    assert len([e for e in w.events() if e["event"] == "start"]) == 2


def test_next_shows_the_firings_not_the_superset() -> None:
    from schedgen.commands.next import next_times
    from schedgen.config.load import loads

    job = loads('[jobs.j]\ncommand = ["/bin/true"]\nschedule = "30 8 * 7 0"\n'
                'targets = ["launchd"]\n', Path("/cfg/jobs.toml")).jobs[0]
    assert gated(job)
    up = next_times(job, 5, datetime(2027, 6, 1, tzinfo=UTC))
    # the Sundays of July (the plist fires every day of July; the gate runs these)
    assert [t.strftime("%Y-%m-%d %H:%M %a") for t in up.times] == [
        "2027-07-04 08:30 Sun", "2027-07-11 08:30 Sun", "2027-07-18 08:30 Sun",
        "2027-07-25 08:30 Sun", "2028-07-02 08:30 Sun"]


@pytest.mark.parametrize(("schedule", "extra", "says"), [
    ('["30 8 * 7 0", "@reboot"]', "", "@reboot"),
    ('"30 8 * 7 0"', "run_at_load = true\n", "run_at_load"),
])
def test_a_gated_plist_refuses_starts_the_gate_would_drop(schedule: str, extra: str, says: str,
                                                           tmp_path: Path) -> None:
    from tests.helpers import schedgen, write_config

    path = write_config(tmp_path / "jobs.toml", f'[jobs.a]\ncommand = ["/bin/true"]\n'
                        f'schedule = {schedule}\ntargets = ["launchd"]\n{extra}')
    r = schedgen("validate", "--config", str(path))
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "jobs.a.schedule" in out and f"starts of {says}" in out, out
    # exact dicts: no gate, nothing to refuse
    path.write_text(path.read_text().replace("30 8 * 7 0", "30 8 * * 0"))
    assert schedgen("validate", "--config", str(path)).returncode == 0


@needs_faketime
def test_applied_plist_started_as_launchd_starts_it(fake_launchctl, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """apply (through the fake launchctl), then the installed plist's ProgramArguments at
    one of its fires that is no firing (a Thursday of February) and at one that is (a
    Monday): `0 0 31 2 1` is cron's OR, every Monday in February."""
    from tests.helpers import schedgen, write_config

    monkeypatch.setenv("TZ", "America/New_York")
    out = tmp_path / "ran"
    cfg = write_config(tmp_path / "jobs.toml", f'[jobs.feb]\ncommand = "echo x >>{out}"\n'
                       'schedule = "0 0 31 2 1"\ntargets = ["launchd"]\n'
                       'label_prefix = "local.gate"\n')
    r = schedgen("apply", "--config", str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = plistlib.loads((Path(os.environ["HOME"]) / "Library" / "LaunchAgents" /
                          "local.gate.feb.plist").read_bytes())
    assert doc["StartCalendarInterval"] == [{"Month": 2, "Hour": 0, "Minute": 0}]
    assert doc["ProgramArguments"][1:] == [GATE_ARG]
    ny = ZoneInfo("America/New_York")
    env = {**os.environ, **doc["EnvironmentVariables"]}
    for day, runs in ((4, 0), (8, 1), (9, 1), (15, 2)):   # Thu, Mon, Tue, Mon
        t = int(datetime(2027, 2, day, tzinfo=ny).timestamp())
        p = faked_clock.run(t, doc["ProgramArguments"], env=env,
                            capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert (out.read_text().count("x") if out.exists() else 0) == runs, day


# -- with catch_up = "once" ------------------------------------------------------------

def test_validate_accepts_a_gated_plist_that_catches_up(tmp_path: Path) -> None:
    """catch_up = "once" adds RunAtLoad, whose start the gate decides by the catch-up rule
    (run the latest firing before it once, if less than max_lateness late), so it is not
    refused beside a gated schedule as an explicit run_at_load is."""
    from tests.helpers import schedgen, write_config

    path = write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = ["/bin/true"]\n'
                        'schedule = "30 8 * 7 0"\ntargets = ["launchd"]\ncatch_up = "once"\n')
    r = schedgen("validate", "--config", str(path))
    assert r.returncode == 0, r.stdout + r.stderr


@needs_faketime
@pytest.mark.macos
def test_a_gated_plist_that_catches_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sundays in July at 08:30, catch_up = "once", max_lateness 1h, on a Berlin host: the
    plist fires every day of July and at load, all with --gate; the job file's gate is on at
    every start (not only --gate's), drops the weekdays, runs the Sundays, and a load after
    a missed Sunday runs it once, marked as a catch-up; a load at install runs nothing."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    out = tmp_path / "ran"
    w = make_job(tmp_path, "july", schedule="30 8 * 7 0", targets=["launchd"],
                 catch_up="once", max_lateness="1h", command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')
    p = plistlib.loads(plist(w.job, w.config).encode())
    assert p["RunAtLoad"] is True and p["ProgramArguments"] == [str(w.job.wrapper_path), GATE_ARG]
    text = wrapper(w.job, w.config)
    assert f"sg_tz_zone={HOST} " in text and "sg_tz_catch=300" in text and "sg_tz_late=3600" in text
    assert f"!= {GATE_ARG} ]" not in text   # gated at every start: the catch-up needs it
    berlin = ZoneInfo("Europe/Berlin")

    def runs() -> int:
        return len(out.read_text().split()) if out.exists() else 0

    steps = [
        (datetime(2027, 7, 2, 10, 0), 0),    # load at install: nothing to catch up
        (datetime(2027, 7, 3, 8, 30), 0),    # Saturday: launchd's superset fire, dropped
        (datetime(2027, 7, 4, 8, 30), 1),    # Sunday: a firing
        (datetime(2027, 7, 5, 8, 30), 1),    # Monday: dropped, and no second run of Sunday
        (datetime(2027, 7, 11, 9, 10), 2),   # load 40 min after a missed Sunday: caught up
        (datetime(2027, 7, 11, 9, 20), 2),   # another load: once only
        (datetime(2027, 7, 18, 9, 40), 2),   # load 70 min after: too late (max_lateness)
    ]
    for when, want in steps:
        r = _at(w, when.replace(tzinfo=berlin), GATE_ARG)
        assert r.returncode == 0, r.stderr
        assert runs() == want, when
    starts = [e for e in w.events() if e["event"] == "start"]
    assert [bool(e.get("catch_up")) for e in starts] == [False, True]
    late = [e for e in w.events() if e["event"] == "late"]
    assert [e["outcome"] for e in late] == ["dropped"] and late[0]["max_lateness"] == 3600
