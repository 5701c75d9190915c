"""schedgen pause / resume: the job stays installed with its state; a paused firing is
recorded as skipped (never missed), a CronJob is suspended; status, check, report and
next say so. Firings run by the real bash under a faked clock (libfaketime)."""

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
from schedgen.machine import pause
from tests import faked_clock
from tests.fake_kubectl import FakeKubectl
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config
from tests.wrapper_kit import BASH, make_job

HOST_TZ = "Europe/Berlin"
FIRING = datetime(2027, 1, 12, 5, 0, tzinfo=UTC)  # 06:00 in Berlin
DAY = timedelta(days=1)
needs_faketime = pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime not installed")


def _at(t: datetime, *argv: str) -> subprocess.CompletedProcess[str]:
    return faked_clock.run(t, argv, capture_output=True,
                           text=True, env={**os.environ, "TZ": HOST_TZ}, timeout=60)


@needs_faketime
def test_a_paused_firing_is_skipped_not_missed_and_the_pause_ends_on_time(
        tmp_path: Path, fake_crontab: FakeCrontab, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", HOST_TZ)
    out = tmp_path / "ran"
    config = write_config(tmp_path / "jobs.toml", f"""
[jobs.daily]
command = 'echo "$SCHEDGEN_RUN_ID" >>{out}'
schedule = "0 6 * * *"
targets = ["cron"]
log_root = "{tmp_path}/logs"
wrapper_dir = "{tmp_path}/wrappers"
""")
    assert schedgen("apply", "-c", str(config), cwd=tmp_path).returncode == 0
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at="2027-01-11T12:00:00Z")
    state.save(record)
    # Paused until day 2 at 12:00 (host time): day 1 and day 2's firings are skipped.
    r = schedgen("pause", "daily", "--until", "2027-01-13T12:00", "-c", str(config), cwd=tmp_path)
    assert r.returncode == 0 and "daily: paused until 2027-01-13 12:00" in r.stdout, r.stderr
    wrapper = str(tmp_path / "wrappers" / "daily.sh")
    for t in (FIRING, FIRING + DAY, FIRING + 2 * DAY):
        assert _at(t, BASH, wrapper, "--cron").returncode == 0
    # The job kept its crontab line; only the day-3 firing ran.
    assert b"daily.sh --cron" in (fake_crontab.read() or b"")
    assert [x[:13] for x in out.read_text().split()] == ["20270114T0500"]
    events = [json.loads(x) for x in (tmp_path / "logs" / "daily" / "events.jsonl").read_text().splitlines()]
    skipped = [e for e in events if e["event"] == "skipped"]
    assert [(e["reason"], e["outcome"]) for e in skipped] == [("paused", "skipped")] * 2

    def at_noon(*args: str) -> subprocess.CompletedProcess[str]:
        return _at(datetime(2027, 1, 14, 12, tzinfo=UTC), sys.executable, "-m", "schedgen", *args,
                   "-c", str(config))

    r = at_noon("check", "--json")
    assert json.loads(r.stdout)["problems"] == [], r.stdout   # skipped: not missed
    hist = at_noon("history", "daily", "--json")
    outcomes = [x["outcome"] for x in json.loads(hist.stdout)["jobs"][0]["runs"]]
    assert sorted(outcomes) == ["ok", "skipped", "skipped"]


def test_status_check_next_and_report_say_paused(tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    config = write_config(tmp_path / "jobs.toml", f"""
[jobs.daily]
command = "true"
schedule = "0 6 * * *"
targets = ["cron"]
log_root = "{tmp_path}/logs"
wrapper_dir = "{tmp_path}/wrappers"
""")
    assert schedgen("apply", "-c", str(config), cwd=tmp_path).returncode == 0
    assert schedgen("pause", "daily", "-c", str(config), cwd=tmp_path).returncode == 0
    st = schedgen("status", "-c", str(config), cwd=tmp_path)
    assert "  paused     until resumed" in st.stdout
    assert json.loads(schedgen("status", "--json", "-c", str(config), cwd=tmp_path).stdout)[
        "jobs"][0]["paused"] == {"until": None}
    ck = schedgen("check", "-c", str(config), cwd=tmp_path)
    assert ck.returncode == 0 and "note: daily: paused until resumed" in ck.stdout
    assert "paused until resumed" in schedgen("next", "-c", str(config), cwd=tmp_path).stdout
    page = tmp_path / "r.html"
    assert schedgen("report", "--out", str(page), "-c", str(config), cwd=tmp_path).returncode == 0
    assert 'class="paused">paused until resumed<' in page.read_text()
    r = schedgen("resume", "daily", "-c", str(config), cwd=tmp_path)
    assert r.stdout.strip() == "daily: resumed"
    assert "paused" not in schedgen("status", "-c", str(config), cwd=tmp_path).stdout
    assert schedgen("resume", "daily", "-c", str(config), cwd=tmp_path).stdout.strip() == \
        "daily: was not paused"
    bad = schedgen("pause", "nosuch", "-c", str(config), cwd=tmp_path)
    assert bad.returncode == 2 and "no job named nosuch" in bad.stderr


def test_the_pause_file_is_written_atomically_and_read_like_the_wrapper(tmp_path: Path) -> None:
    until = datetime(2030, 1, 1, tzinfo=UTC)
    p = pause.pause("ns", "job", until)
    f = pause.pause_file("ns", "job")
    assert f.read_text() == f"{int(until.timestamp())}\n" and p.until == until
    assert [x.name for x in f.parent.iterdir()] == ["job"]  # no temp file left
    assert pause.paused("ns", "job", until - DAY) == p
    assert pause.paused("ns", "job", until + DAY) is None  # over
    f.write_text("garbage\n")
    assert pause.paused("ns", "job") == pause.Pause("job", None)  # as the wrapper: until resumed


def test_a_plain_wrapper_sees_the_pause_file_with_one_stat(tmp_path: Path) -> None:
    w = make_job(tmp_path, "plain", command="true")
    r = subprocess.run(["strace", "-f", "-e", "trace=stat,newfstatat,statx,access,faccessat2",
                        *w.argv("--cron")], env=w.env(), capture_output=True, text=True) \
        if shutil.which("strace") else None
    if r is None:
        pytest.skip("strace not installed")
    pause_path = str(pause.pause_file(w.config.namespace, "plain"))
    assert sum(pause_path in line for line in r.stderr.splitlines()) == 1


KUBE = """
[defaults]
namespace = "example"
targets = ["kubernetes"]
[defaults.kubernetes]
image = "ghcr.io/example/naly:1.4"
[jobs.publish]
command = ["node", "publish.js"]
schedule = "15 6 * * *"
"""


def test_pause_suspends_the_cronjob_and_resume_lifts_it(tmp_path: Path, fake_kubectl: FakeKubectl) -> None:
    config = write_config(tmp_path / "jobs.toml", KUBE)
    assert schedgen("apply", "-c", str(config), cwd=tmp_path).returncode == 0
    assert fake_kubectl.cronjobs("default")["publish"]["spec"]["suspend"] is False
    r = schedgen("pause", "publish", "-c", str(config), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert fake_kubectl.cronjobs("default")["publish"]["spec"]["suspend"] is True
    # In sync while paused: diff and apply leave it suspended.
    assert schedgen("diff", "-c", str(config), cwd=tmp_path).returncode == 0
    assert schedgen("resume", "publish", "-c", str(config), cwd=tmp_path).returncode == 0
    assert fake_kubectl.cronjobs("default")["publish"]["spec"]["suspend"] is False


@pytest.mark.macos
def test_the_wrapper_skips_while_paused_and_runs_once_the_pause_has_ended(tmp_path: Path) -> None:
    out = tmp_path / "ran"
    w = make_job(tmp_path, "job", command=f"echo ran >>{out}")
    ns = w.config.namespace
    pause.pause(ns, "job", None)
    r = w.run("--cron")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "") and not out.exists()
    # Its end in the past (the wrapper compares, as schedgen does): the run goes ahead.
    pause.pause_file(ns, "job").write_text("1000000000\n")
    assert w.run("--cron").returncode == 0 and out.read_text() == "ran\n"
    pause.pause(ns, "job", datetime(2030, 1, 1, tzinfo=UTC))
    fg = w.run(env={"SCHEDGEN_FOREGROUND": "1"})   # `schedgen run` says why
    assert fg.returncode == 0 and "paused; this firing is skipped" in fg.stderr
    assert [(e["until"], e["reason"]) for e in w.events("skipped")] == \
        [(0, "paused"), (1893456000, "paused")]
    assert not w.run_dirs()[1:]   # a skipped firing makes no run directory


@pytest.mark.macos
@pytest.mark.parametrize("kind", ["fifo", "symlink to a fifo", "directory", "huge", "wide digits"])
def test_a_pause_file_that_is_no_time_reads_as_paused_and_never_hangs(
        tmp_path: Path, kind: str) -> None:
    # A FIFO must not block the wrapper (every firing would hang for ever) nor schedgen;
    # a number past any date must not wrap around in bash or overflow in Python.
    out = tmp_path / "ran"
    w = make_job(tmp_path, "job", command=f"echo ran >>{out}")
    f = pause.pause_file(w.config.namespace, "job")
    f.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(f)
    elif kind == "symlink to a fifo":
        os.mkfifo(tmp_path / "fifo")
        f.symlink_to(tmp_path / "fifo")
    elif kind == "directory":
        f.mkdir()
    elif kind == "huge":
        f.write_text("9" * 40 + "\n")
    else:
        f.write_text("\u00b2\n")
    r = subprocess.run(w.argv("--cron"), env=w.env(), capture_output=True, text=True, timeout=20)
    assert r.returncode == 0 and not out.exists(), r.stderr
    assert [e["until"] for e in w.events("skipped")] == [0]
    assert pause.paused(w.config.namespace, "job") == pause.Pause("job", None)


def test_a_pause_file_reads_its_first_line_as_the_wrapper_does(tmp_path: Path) -> None:
    f = pause.pause_file("ns", "job")
    f.parent.mkdir(parents=True)
    f.write_text("1000000000\ntrailing words\n")   # the wrapper reads one line: over
    assert pause.paused("ns", "job") is None


def test_an_until_in_the_spring_forward_gap_ends_after_the_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    # 02:30 does not exist on 2027-03-28 in Berlin: the pause must not end at 01:30 CET,
    # before the wall clock ever reached the time given, but as the clock passes it.
    import time as _time

    from schedgen.commands.pause import parse_until
    monkeypatch.setenv("TZ", HOST_TZ)
    _time.tzset()
    try:
        now = datetime(2027, 1, 1, tzinfo=UTC)
        assert parse_until("2027-03-28T02:30", now) == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
        # A repeated hour: its first 02:30 (CEST).
        assert parse_until("2027-10-31T02:30", now) == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    finally:
        monkeypatch.delenv("TZ")
        _time.tzset()
