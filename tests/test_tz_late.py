"""Late starts of a zoned job, under a faked clock (libfaketime) with the real bash and
bash 3.2: a start delayed past its firing's minute runs that firing, once; one later than
the bound is dropped, said in the events and by `schedgen check`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schedgen.machine import ownership as state
from schedgen.render.tzgate import DROPPED, MAX_LATENESS, NOT_NOW, RUN, Gate
from schedgen.schedule.expressions import parse_cron
from tests import faked_clock
from tests.fakes import FakeCrontab
from tests.helpers import write_config
from tests.tzkit import WINDOW
from tests.wrapper_kit import BASH, Wrapped, make_job

if shutil.which("faketime") is None:
    pytest.skip("faketime not installed", allow_module_level=True)

# 02:30 in New York (EST) is 07:30 UTC, 08:30 in Berlin, in January.
FIRING = datetime(2027, 1, 12, 7, 30, tzinfo=UTC)
DAY = timedelta(days=1)


def _run_at(w: Wrapped, t: datetime) -> subprocess.CompletedProcess[str]:
    return faked_clock.run(t, w.argv("--cron"),
                           env=w.env({"TZ": "Europe/Berlin"}), capture_output=True, text=True,
                           timeout=60)


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Wrapped, Path]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    out = tmp_path / "ran"
    w = make_job(tmp_path, "nightly", schedule="30 2 * * *", timezone="America/New_York",
                 command=f'echo "$SCHEDGEN_RUN_ID" >>{out}')
    return w, out


def _ran(out: Path) -> list[str]:
    return [r[:15] for r in out.read_text().split()] if out.exists() else []


@pytest.mark.macos
def test_a_start_delayed_past_the_minute_runs_its_firing_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w, out = _job(tmp_path, monkeypatch)
    # The last second of the firing's minute, then (next day) the first second after it.
    assert _run_at(w, FIRING + timedelta(seconds=59)).returncode == 0
    assert _run_at(w, FIRING + DAY + timedelta(seconds=60)).returncode == 0
    # (The faked clock runs on from the instant it is set to: a second may pass under load.)
    assert [r[:13] for r in _ran(out)] in (["20270112T0730", "20270113T0731"],
                                          ["20270112T0731", "20270113T0731"])
    # A second start for the same firing (a duplicate, or a wake after a late run): no run.
    r = _run_at(w, FIRING + DAY + timedelta(minutes=20))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert len(_ran(out)) == 2
    # Each run says which firing it was for, and how late it started.
    starts = [(e["firing"], e["late"]) for e in w.events() if e["event"] == "start"]
    assert [f for f, _ in starts] == ["2027-01-12T02:30", "2027-01-13T02:30"]
    assert 59 <= starts[0][1] <= 62 and 60 <= starts[1][1] <= 63
    assert [(m["firing"], m["late"]) for m in w.manifests()] == starts
    assert not [e for e in w.events() if e["event"] == "late"]


@pytest.mark.macos
def test_a_start_past_the_bound_is_dropped_once_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w, out = _job(tmp_path, monkeypatch)
    assert _run_at(w, FIRING).returncode == 0
    late = FIRING + DAY + timedelta(minutes=MAX_LATENESS, seconds=5)
    r = _run_at(w, late)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert _run_at(w, late + timedelta(minutes=10)).returncode == 0  # said once
    assert [r[:13] for r in _ran(out)] == ["20270112T0730"]
    [ev] = [e for e in w.events() if e["event"] == "late"]
    assert (ev["firing"], ev["outcome"], ev["zone"], ev["max_lateness"]) == \
        ("2027-01-13T02:30", "dropped", "America/New_York", MAX_LATENESS * 60)
    assert MAX_LATENESS * 60 + 5 <= ev["late"] <= MAX_LATENESS * 60 + 8
    # The next day's firing runs as usual.
    assert _run_at(w, FIRING + 2 * DAY).returncode == 0
    assert len(_ran(out)) == 2


def test_the_python_gate_gives_the_same_verdicts() -> None:
    gate = Gate.of("America/New_York", [parse_cron("30 2 * * *")], WINDOW)
    state: list[int | None] = [None, None]
    at = [FIRING + timedelta(seconds=59), FIRING + DAY + timedelta(seconds=60),
          FIRING + DAY + timedelta(minutes=20),
          FIRING + 2 * DAY + timedelta(minutes=MAX_LATENESS, seconds=5),
          FIRING + 2 * DAY + timedelta(minutes=MAX_LATENESS + 10), FIRING + 3 * DAY]
    assert [gate.verdict(t, state) for t in at] == [RUN, RUN, NOT_NOW, DROPPED, NOT_NOW, RUN]


def test_check_reports_a_dropped_start(tmp_path: Path, fake_crontab: FakeCrontab,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    config = write_config(tmp_path / "jobs.toml", f"""
[jobs.nightly]
command = "true"
schedule = "30 2 * * *"
timezone = "America/New_York"
targets = ["cron"]
log_root = "{tmp_path}/logs"
wrapper_dir = "{tmp_path}/wrappers"
""")
    # Applied in the same year as checked (a zoned job's lines follow the years ahead).
    faked_clock.run("2027-01-11 00:00:00", [sys.executable, "-m", "schedgen",
                    "apply", "-c", str(config)], check=True, capture_output=True, frozen=True)
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at="2027-01-12T00:00:00Z")
    state.save(record)
    wrapper = tmp_path / "wrappers" / "nightly.sh"
    # On time; 90 minutes late (dropped); 30 minutes late (run, not missed).
    for t in (FIRING, FIRING + DAY + timedelta(minutes=90),
              FIRING + 2 * DAY + timedelta(minutes=30)):
        faked_clock.run(t, [BASH, str(wrapper), "--cron"],
                        check=True, env={**os.environ, "TZ": "Europe/Berlin"}, timeout=60)

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        return faked_clock.run("2027-01-14 13:00:00", [sys.executable, "-m",
                               "schedgen", "check", "-c", str(config), *args], frozen=True,
                               capture_output=True, text=True, env={**os.environ, "TZ": "Europe/Berlin"})

    r = check()
    assert r.returncode == 1
    [line] = [x for x in r.stdout.splitlines() if "not run" in x]
    assert line.startswith("nightly: firing 2027-01-13 02:30 America/New_York not run: "
                           "started 1h30m") and line.endswith(" late (max lateness 1h)")
    problems = {p["kind"]: p["text"] for p in json.loads(check("--json").stdout)["problems"]}
    assert set(problems) == {"dropped", "missed"}
    assert "missed 1 firing" in problems["missed"] and "2027-01-13 02:30" in problems["missed"]
