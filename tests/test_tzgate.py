"""The bash gate (templates/runtime/81-tzgate.sh), sourced directly and run under a faked clock.

libfaketime (Debian's `faketime`) fakes the clock of every `date` the gate starts; one
bash per scenario walks through the instants the rendered cron lines or plists fire at,
and its answers must be those of tzgate.Gate.decide, which tests/test_tzwiden.py holds
against cronsim over 2027-2028. The rendered job file is run the same way at the end.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from schedgen.render.tzgate import Gate, settings
from schedgen.render.tzrender import host_cron_lines
from schedgen.schedule.expressions import parse_cron
from schedgen.schedule.tzwiden import transitions
from tests import faked_clock, wrapper_kit
from tests.tzkit import PAIRS, WINDOW, host_fires, rendered, times
from tests.wrapper_kit import Wrapped, make_job

RUNTIME = resources.files("schedgen.templates").joinpath("runtime")
GATE = Path(str(RUNTIME.joinpath("81-tzgate.sh")))
LOCK = Path(str(RUNTIME.joinpath("20-lock.bash")))   # sg_lock, for the state's lock

if shutil.which("faketime") is None:
    if os.environ.get("CI"):
        pytest.fail("faketime is required in CI (apt-get install faketime)", pytrace=False)
    pytest.skip("faketime not installed", allow_module_level=True)

_LOOP = """
source "$2"
source "$1"
while read -r e; do
  export FAKETIME_FMT=%s FAKETIME="@$e"
  sg_tz_gate
  echo "$?"
done
"""


def epoch(t: datetime) -> int:
    return int(t.timestamp())


def bash_gate(gate: Gate, state: Path, instants: list[datetime], host: str = "UTC",
              env: dict[str, str] | None = None) -> list[int]:
    """sg_tz_gate's status at each instant, in order, in one bash under faketime."""
    script = settings(gate, str(state)) + _LOOP
    full_env = {"PATH": wrapper_kit.shell_path(), "TZ": host, **(env or {})}
    first = instants[0] if instants else datetime(2027, 1, 1, tzinfo=UTC)
    p = faked_clock.run(first, [wrapper_kit.BASH, "-c", script, "gate",
                        str(GATE), str(LOCK)], input="".join(f"{epoch(t)}\n" for t in instants),
                        env=full_env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return [int(x) for x in p.stdout.split()]


def fires_near_changes(zone: str, host: str, exprs: list[str], hours: int, target: str = "cron",
                       ) -> tuple[list[datetime], list[tuple[datetime, datetime]]]:
    """Host fires of the rendered cron lines (or plist dicts) near the zone's first changes."""
    crons = [parse_cron(e) for e in exprs]
    lines = rendered(crons, ZoneInfo(zone), ZoneInfo(host), target)
    spans = [(tr.at - timedelta(hours=hours), tr.at + timedelta(hours=hours))
             for tr in transitions(ZoneInfo(zone), WINDOW)[:4]]
    if not spans:  # a zone without changes: one ordinary day
        a = datetime(2027, 6, 1, tzinfo=UTC)
        spans = [(a, a + timedelta(days=1))]
    out: set[datetime] = set()
    for a, b in spans:
        out |= set(host_fires(lines, ZoneInfo(host), a, b))  # a set: launchd starts once
    return sorted(out), spans


DAILY = ["30 2 * * *", "30 1 * * *", "30 2 1,15 * 5"]
SAMPLE = [(z, h, DAILY, 30, "cron") for z, h in PAIRS.items()]
SAMPLE += [("Australia/Lord_Howe", "America/New_York", ["*/15 * * * *"], 2, "cron"),
           ("America/New_York", "Europe/Berlin", ["*/15 * * * *", "30 1 * * *"], 2, "cron"),
           ("America/New_York", "Europe/Berlin", DAILY, 30, "launchd"),
           ("Pacific/Chatham", "America/Los_Angeles", DAILY, 30, "launchd")]


@pytest.mark.parametrize(("zone", "host", "exprs", "hours", "target"), SAMPLE,
                         ids=[f"{t}-{z}-{'|'.join(e)}" for z, _, e, _, t in SAMPLE])
def test_bash_gate_decides_as_cronsim_at_the_rendered_fires(tmp_path: Path, zone: str,
                                                            host: str, exprs: list[str],
                                                            hours: int, target: str) -> None:
    crons = [parse_cron(e) for e in exprs]
    gate = Gate.of(zone, crons, WINDOW)
    instants, spans = fires_near_changes(zone, host, exprs, hours, target)
    got = bash_gate(gate, tmp_path / "state", instants, host=host)
    state: list[int | None] = [None, None]
    want = [gate.verdict(t, state) for t in instants]
    assert got == want
    # And what ran is what cronsim runs, in the same stretches.
    ran = {t for t, s in zip(instants, got, strict=True) if s == 0}
    expected = {t for e in exprs for a, b in spans for t in times(e, ZoneInfo(zone), a, b)
                if t > a}
    ran_in = {t for t in ran if any(a < t < b for a, b in spans)}
    assert ran_in == expected and expected


@pytest.mark.macos
def test_repeated_hour_runs_a_fixed_firing_once_and_wildcards_twice(tmp_path: Path) -> None:
    gate = Gate.of("America/New_York", [parse_cron("30 1 * * *"), parse_cron("0 * * * *")],
                   WINDOW)
    # 2027-11-07: 01:30 EDT, 01:30 EST (fixed: once); 01:00 EDT/EST (wildcard: twice).
    at = [datetime(2027, 11, 7, h, m, tzinfo=UTC) for h, m in ((5, 0), (5, 30), (6, 0), (6, 30))]
    assert bash_gate(gate, tmp_path / "s", at) == [0, 0, 0, 1]


def test_repeated_hour_second_reading_runs_when_the_first_was_missed(tmp_path: Path) -> None:
    gate = Gate.of("America/New_York", [parse_cron("30 1 * * *")], WINDOW)
    at = [datetime(2027, 11, 6, 5, 30, tzinfo=UTC), datetime(2027, 11, 7, 6, 30, tzinfo=UTC)]
    assert bash_gate(gate, tmp_path / "s", at) == [0, 0]


def test_clock_set_back_more_than_three_hours_runs_again(tmp_path: Path) -> None:
    gate = Gate.of("UTC", [parse_cron("30 5 * * *")], WINDOW)
    t = datetime(2027, 6, 1, 5, 30, tzinfo=UTC)
    # The same minute twice (one fire each for two lines would be a bug): once.
    assert bash_gate(gate, tmp_path / "s", [t, t]) == [0, 1]
    state = tmp_path / "s"
    state.write_text(str(int((datetime(2027, 6, 1, 9, 0) - datetime(1970, 1, 1)).total_seconds()
                             // 60)) + "\n")
    assert bash_gate(gate, state, [t]) == [0]


@pytest.mark.parametrize("what", ["zero", "symlink"])
def test_a_state_that_is_no_state_is_neither_fatal_nor_written_through(
        tmp_path: Path, what: str) -> None:
    # "0..." would be an octal number (08: an error); a symlink would be written through.
    gate = Gate.of("UTC", [parse_cron("30 5 * * *")], WINDOW)
    t = datetime(2027, 6, 1, 5, 30, tzinfo=UTC)
    state, target = tmp_path / "s", tmp_path / "elsewhere"
    target.write_text("keep\n")
    if what == "zero":
        state.write_text("08\n")
    else:
        state.symlink_to(target)
    assert bash_gate(gate, state, [t]) == [0]
    assert target.read_text() == "keep\n"


@pytest.mark.macos
def test_spring_forward_gap_runs_once_right_after(tmp_path: Path) -> None:
    gate = Gate.of("America/New_York", [parse_cron("0,30 2 * * *")], WINDOW)
    after_gap = datetime(2027, 3, 14, 7, 0, tzinfo=UTC)  # 03:00 EDT
    at = [after_gap - timedelta(hours=1), after_gap, after_gap + timedelta(minutes=30),
          after_gap + timedelta(days=1) - timedelta(hours=1)]  # 01:00 EST; 03:00; 03:30; next 02:00
    assert bash_gate(gate, tmp_path / "s", at) == [1, 0, 1, 0]


def test_host_zone_does_not_change_the_answers(tmp_path: Path) -> None:
    gate = Gate.of("Asia/Kathmandu", [parse_cron("30 2 * * *")], WINDOW)
    base = datetime(2027, 1, 10, 20, 45, tzinfo=UTC)  # 02:30 in Kathmandu
    at = [base + timedelta(minutes=k * 15) for k in range(-2, 3)]
    answers = {host: bash_gate(gate, tmp_path / host.replace("/", "_"), at, host=host)
               for host in ("UTC", "America/Los_Angeles", "Asia/Tokyo", "Pacific/Chatham")}
    assert set(map(tuple, answers.values())) == {(1, 1, 0, 1, 1)}


def test_zone_missing_on_host_is_a_precondition_failure(tmp_path: Path) -> None:
    gate = Gate.of("Europe/Kyiv", [parse_cron("30 2 * * *")], WINDOW)
    empty = tmp_path / "zoneinfo"
    empty.mkdir()
    at = [datetime(2027, 1, 10, 0, 30, tzinfo=UTC)]  # 02:30 in Kyiv
    assert bash_gate(gate, tmp_path / "s", at, env={"TZDIR": str(empty)}) == [2]


def test_foreground_run_is_not_gated(tmp_path: Path) -> None:
    gate = Gate.of("Europe/Kyiv", [parse_cron("30 2 * * *")], WINDOW)
    at = [datetime(2027, 1, 10, 12, 0, tzinfo=UTC)]
    assert bash_gate(gate, tmp_path / "s", at) == [1]
    assert bash_gate(gate, tmp_path / "s", at, env={"SCHEDGEN_FOREGROUND": "1"}) == [0]
    assert not (tmp_path / "s").exists()  # a non-matching fire wrote nothing


# -- the rendered job file ------------------------------------------------------------

def _run_at(w: Wrapped, t: datetime, *args: str) -> subprocess.CompletedProcess[str]:
    return faked_clock.run(t, w.argv(*args),
                           env=w.env({"TZ": "Europe/Berlin"}), capture_output=True, text=True,
                           timeout=60)


@pytest.mark.macos
def test_job_file_runs_only_at_the_zones_firings(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    out = tmp_path / "ran"
    w = make_job(tmp_path, "nightly", schedule="30 2 * * *", timezone="America/New_York",
                 command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')
    lines = host_cron_lines(w.job)
    assert lines[0] == "30 7,8 * * *"
    berlin = ZoneInfo("Europe/Berlin")
    a = datetime(2027, 3, 13, 0, 0, tzinfo=UTC)
    fires = sorted(host_fires(lines, berlin, a, a + timedelta(days=2)))
    # 2027-03-13 07:30 (02:30 EST), 08:30 (03:30 EST); 2027-03-14 07:00 (03:00 EDT, after
    # the gap), 07:30 (03:30 EDT), 08:30 (04:30 EDT); in UTC.
    results = [_run_at(w, t, "--cron").returncode for t in fires]
    assert results == [0] * len(fires)
    runs = out.read_text().split()
    assert [r[:13] for r in runs] == ["20270313T0730", "20270314T0700"]
    assert len(w.manifests()) == 2
    starts = [e for e in w.events() if e["event"] == "start"]
    assert len(starts) == 2  # the three other fires wrote no record at all


@pytest.mark.macos
def test_non_matching_fire_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    w = make_job(tmp_path, "nightly", schedule="30 2 * * *", timezone="America/New_York",
                 command="true")
    before = sorted(tmp_path.rglob("*"))
    r = _run_at(w, datetime(2027, 3, 13, 8, 30, tzinfo=UTC), "--cron")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.macos
def test_job_file_at_the_plists_fires(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.targets.launchd.render import plist

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    out = tmp_path / "ran"
    w = make_job(tmp_path, "kath", schedule="30 2 * * *", timezone="Asia/Kathmandu",
                 targets=["launchd"], command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')
    dicts = plistlib.loads(plist(w.job, w.config).encode())["StartCalendarInterval"]
    assert dicts == [{"Hour": 5, "Minute": 45}]
    t = datetime(2027, 5, 1, 20, 45, tzinfo=UTC)  # 05:45 in Tokyo, 02:30 in Kathmandu
    env = w.env({"TZ": "Asia/Tokyo"})
    r = faked_clock.run(t, w.argv(), env=env, capture_output=True,
                        text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("20270501T2045")


@pytest.mark.macos
def test_day_fields_follow_debians_or_and_and(tmp_path: Path) -> None:
    ny = ZoneInfo("America/New_York")

    def at(day: int) -> datetime:  # 02:30 in New York, July 2027
        return datetime(2027, 7, day, 2, 30, tzinfo=ny).astimezone(UTC)

    either = Gate.of("America/New_York", [parse_cron("30 2 1,15 * 5")], WINDOW)
    # Thu 15th (day), Fri 9th (weekday), Wed 14th (neither), Thu 1st (day)
    assert bash_gate(either, tmp_path / "a", [at(15), at(9), at(14), at(1)]) == [0, 0, 1, 0]
    both = Gate.of("America/New_York", [parse_cron("30 2 */2 * 5")], WINDOW)
    # '*/2' makes it AND: Fri 9th (odd day, Friday), Fri 16th (even), Thu 15th (not Friday)
    assert bash_gate(both, tmp_path / "b", [at(9), at(16), at(15)]) == [0, 1, 1]
