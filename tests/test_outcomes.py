"""history, logs, status's missed firings and check [--notify], on records of real runs.

The jobs are installed with `schedgen apply` (fake crontab and launchctl), then their
real wrappers run at chosen days under faketime: a job failing, recovering, timing out,
finding its lock busy, and then nothing while "the machine was off"; a launchd twin
whose firings were coalesced into one run on wake; a queue job with a failed item and a
stale inbox; a run that holds its lock past its timeout. Every `schedgen` call runs under
faketime too, at the chosen "now".
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from schedgen.machine import ownership as state
from tests import faked_clock
from tests.fakes import FakeCrontab, FakeLaunchctl
from tests.helpers import write_config, write_executable
from tests.plugin import isolated
from tests.wrapper_kit import BASH, kill_group, wait_for

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None,
                                reason="faketime is not installed (.ci/run installs it)")

INSTALLED = "2026-01-05T10:00:00Z"
NOW = "2026-01-09 12:00:00"

JOBS = """
[defaults]
targets = ["cron"]
log_root = "{root}/logs"
lock_dir = "{root}/locks"
wrapper_dir = "{root}/wrappers"
[defaults.notify]
command = ["{root}/alert.sh"]
on = ["failure", "recovery", "missed"]

[jobs.pub]
description = "Publish the daily notes"
command = 'case "${{MODE:-ok}}" in fail) echo broke >&2; exit 3;; slow) sleep 30;; *) echo fine;; esac'
schedule = "40 10,16 * * *"
timeout = "1s"

[jobs.agent]
command = "echo awake"
schedule = "40 10,16 * * *"
targets = ["launchd"]

[jobs.funnel]
command = ["bash", "-c", 'case "$1" in *bad*) exit 1;; esac', "funnel", "{{item}}"]
schedule = "@reboot"
[jobs.funnel.queue]
inbox = "{root}/q/inbox"
batch = 0
max_attempts = 1
stale_after = "1h"
stop_on_failure = true

[jobs.slow]
command = "sleep 120"
schedule = "@reboot"
timeout = "1h"
"""


@dataclass
class Scene:
    root: Path
    config: Path
    calls: Path
    slow: subprocess.Popen[str]
    env: dict[str, str]   # the environment it was made in (its HOME, fakes and PATH)

    def at(self, when: str, *args: str) -> subprocess.CompletedProcess[str]:
        """`schedgen ARGS` with the clock stopped at ``when`` (UTC), so ages come out exact."""
        return faked_clock.run(when, [sys.executable, "-m", "schedgen",
                                      *args, "-c", str(self.config)], capture_output=True,
                               text=True, env={**self.env, "TZ": "UTC"}, timeout=120, frozen=True)

    def alerts(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []


class Exit(int):
    """An exit status that shows the run's stderr when an assertion on it fails."""

    stderr = ""

    def __repr__(self) -> str:
        return f"{int(self)} (stderr: {self.stderr[-500:]!r})"


def run_at(root: Path, job: str, when: str, **env: str) -> int:
    """One real run of the installed wrapper with the clock at ``when`` (UTC)."""
    wrapper = root / "wrappers" / f"{job}.sh"
    # The programs it starts read the same clock; a timeout or the watchdog killing one as
    # it starts stops no later one (tests/faked_clock.py).
    p = faked_clock.run(when, [BASH, str(wrapper)], capture_output=True,
                        text=True, env={**os.environ, "TZ": "UTC", **env}, timeout=60)
    code = Exit(p.returncode)
    code.stderr = p.stderr
    return code


def _make_scene(root: Path) -> Iterator[Scene]:
    """The scene, made in ``root`` with the environment as the caller set it up."""
    calls = root / "alerts.txt"
    # check --notify sets SCHEDGEN_PROBLEM; a run's own notifications (the wrapper's) do not
    # and go to a file of their own: job|event|exit code|outcome.
    write_executable(root / "alert.sh", "#!/bin/sh\nif [ -z \"${SCHEDGEN_PROBLEM-}\" ]; then "
                     "printf '%s|%s|%s|%s\\n' \"$SCHEDGEN_JOB\" \"$SCHEDGEN_EVENT\" "
                     f"\"$SCHEDGEN_EXIT_CODE\" \"$SCHEDGEN_OUTCOME\" >>{root / 'run-alerts.txt'}; "
                     "exit 0; fi\n{ printf '%s|%s|%s|' \"$SCHEDGEN_JOB\" "
                     f"\"$SCHEDGEN_EVENT\" \"$SCHEDGEN_PROBLEM\"; cat; }} >>{calls}\n")
    config = write_config(root / "jobs.toml", JOBS.format(root=root))
    r = subprocess.run([sys.executable, "-m", "schedgen", "apply", "-c", str(config)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at=INSTALLED)
    state.save(record)

    # pub: ok, failed, recovered, timed out, busy; then off for three firings; ok again.
    assert run_at(root, "pub", "2026-01-05 10:40:02") == 0
    assert run_at(root, "pub", "2026-01-05 16:40:01", MODE="fail") == 3
    assert run_at(root, "pub", "2026-01-06 10:40:02") == 0
    assert run_at(root, "pub", "2026-01-06 16:40:01", MODE="slow") == 124
    (root / "locks").mkdir(exist_ok=True)
    fd = os.open(root / "locks" / "pub.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    assert run_at(root, "pub", "2026-01-07 10:40:01") == 75
    os.close(fd)
    assert run_at(root, "pub", "2026-01-09 10:40:02") == 0

    # agent (launchd): the same gap, but launchd ran one coalesced run on wake.
    assert run_at(root, "agent", "2026-01-05 10:40:01") == 0
    for day in ("05", "06"):
        for hm in ("10:40", "16:40"):
            if (day, hm) != ("05", "10:40"):
                assert run_at(root, "agent", f"2026-01-{day} {hm}:01") == 0
    assert run_at(root, "agent", "2026-01-07 10:40:01") == 0
    assert run_at(root, "agent", "2026-01-09 08:55:13") == 0  # the wake
    assert run_at(root, "agent", "2026-01-09 10:40:01") == 0

    # funnel: a bad item goes to failed/; the good one behind it waits, stale (the run
    # stops at the first failing item).
    inbox = root / "q" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "a-bad.json").write_text("{}")
    (inbox / "b-good.json").write_text("{}")
    assert run_at(root, "funnel", "2026-01-09 10:30:00") == 1
    stamp = datetime(2026, 1, 9, 10, 0, tzinfo=UTC).timestamp()
    os.utime(inbox / "b-good.json", (stamp, stamp))

    # slow: started "three hours ago" and still holding its lock (timeout 1h).
    slow = faked_clock.popen("2026-01-09 09:00:00", [BASH,
                             str(root / "wrappers" / "slow.sh")], env={**os.environ, "TZ": "UTC"},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    wait_for(lambda: (root / "logs" / "slow" / "events.jsonl").exists(), what="slow to start")
    # The runs' own notifications (the wrapper's notify part, in the background).
    runs = root / "run-alerts.txt"
    want = ["pub|failure|3|failed", "pub|recovery|0|ok", "pub|failure|124|timeout",
            "pub|recovery|0|ok", "funnel|failure|1|failed"]
    wait_for(lambda: runs.exists() and len(runs.read_text().splitlines()) >= len(want),
             what="the runs' notifications")
    assert sorted(runs.read_text().splitlines()) == sorted(want)
    yield Scene(root, config, calls, slow, dict(os.environ))
    kill_group(slow.pid)
    slow.wait()


@pytest.fixture
def scene(tmp_path: Path, fake_crontab: FakeCrontab,
          fake_launchctl: FakeLaunchctl, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scene]:
    """A scene of its own, for a test that changes it."""
    monkeypatch.setenv("TZ", "UTC")
    yield from _make_scene(tmp_path)


@pytest.fixture(scope="module")
def shared_scene(tmp_path_factory: pytest.TempPathFactory, _guard_bin: Path) -> Iterator[Scene]:
    """One scene for the tests that only read it: made once per worker that runs them (it
    takes some 20 real runs under faketime), in a home and with fakes of its own."""
    root = tmp_path_factory.mktemp("scene")
    with isolated(root, _guard_bin, FakeCrontab, FakeLaunchctl) as mp:
        mp.setenv("TZ", "UTC")
        yield from _make_scene(root)


def test_history_shows_every_outcome_and_the_missed_firings_as_rows(shared_scene: Scene) -> None:
    scene = shared_scene
    r = scene.at(NOW, "history", "pub")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:] if line.startswith("  ")]
    got = [(row[1] + " " + row[2][:5], row[5]) for row in rows if row[0] != "missed"]
    assert got == [
        ("2026-01-09 10:40", "ok"),
        ("2026-01-08 16:40", "missed"), ("2026-01-08 10:40", "missed"),
        ("2026-01-07 16:40", "missed"),
        ("2026-01-07 10:40", "busy"), ("2026-01-06 16:40", "timeout"),
        ("2026-01-06 10:40", "ok"), ("2026-01-05 16:40", "failed"), ("2026-01-05 10:40", "ok"),
    ]
    assert "missed 3 firings since 2026-01-05 10:00 UTC; first 2026-01-07 16:40 UTC, last 2026-01-08 16:40 UTC" \
        in r.stdout
    data = json.loads(scene.at(NOW, "history", "pub", "--json").stdout)["jobs"][0]
    assert [(x["outcome"], x["exit_code"]) for x in data["runs"]] == [
        ("ok", 0), ("busy", 75), ("timeout", 124), ("ok", 0), ("failed", 3), ("ok", 0)]
    assert data["missed"]["count"] == 3 and data["missed"]["late"] == 0
    assert [f["at"] for f in data["missed"]["firings"]] == [
        "2026-01-07T16:40:00Z", "2026-01-08T10:40:00Z", "2026-01-08T16:40:00Z"]
    # -n counts runs; --since bounds them by time.
    two = json.loads(scene.at(NOW, "history", "pub", "-n", "2", "--json").stdout)["jobs"][0]
    assert [x["outcome"] for x in two["runs"]] == ["ok", "busy"]
    day = json.loads(scene.at(NOW, "history", "pub", "--since", "2d2h", "--json").stdout)["jobs"][0]
    assert [x["outcome"] for x in day["runs"]] == ["ok", "busy"]


def test_launchd_firings_coalesced_on_wake_are_late_not_missed(shared_scene: Scene) -> None:
    scene = shared_scene
    data = json.loads(scene.at(NOW, "status", "--json").stdout)
    agent = next(j for j in data["jobs"] if j["job"] == "agent")
    assert agent["missed"]["count"] == 0 and agent["missed"]["late"] == 3
    assert {f["ran_at"] for f in agent["missed"]["firings"]} == {"2026-01-09T08:55:13Z"}
    text = scene.at(NOW, "status").stdout
    assert "  firings    3 firings ran late (coalesced on wake, ran 2026-01-09 08:55 UTC)" in text
    assert ("  firings    missed 3 firings since 2026-01-05 10:00 UTC; first 2026-01-07 16:40 UTC, "
            "last 2026-01-08 16:40 UTC") in text


def test_logs_prints_a_runs_output(shared_scene: Scene) -> None:
    scene = shared_scene
    r = scene.at(NOW, "logs", "pub")
    assert (r.returncode, r.stdout) == (0, "fine\n")
    failed = json.loads(scene.at(NOW, "history", "pub", "--json").stdout)["jobs"][0]["runs"][4]
    r = scene.at(NOW, "logs", "pub", failed["run_id"][:18], "--stderr")
    assert (r.returncode, r.stdout) == (0, "broke\n")
    r = scene.at(NOW, "logs", "pub", failed["run_id"])  # it wrote nothing to stdout: said so
    assert (r.returncode, r.stdout) == (0, "")
    assert r.stderr.startswith(f"run {failed['run_id']} of pub wrote nothing to stdout (")
    assert r.stderr.endswith("stdout.log); its stderr: --stderr\n")
    r = scene.at(NOW, "logs", "pub", "19990101T")
    assert r.returncode == 2 and "has no run '19990101T'" in r.stderr and "Traceback" not in r.stderr
    assert scene.at(NOW, "logs", "nosuch").returncode == 2


def test_check_lists_one_line_per_problem_and_exits_1(shared_scene: Scene) -> None:
    scene = shared_scene
    r = scene.at(NOW, "check")
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("pub: missed 3 firings since 2026-01-05 10:00 UTC; first 2026-01-07 16:40 UTC, "
                        "last 2026-01-08 16:40 UTC")
    assert lines[1].startswith("funnel: last run ") and lines[1].endswith(
        " failed (exit 1) at 2026-01-09 10:30 UTC")
    assert lines[2] == f"funnel: 1 item in {scene.root}/q/failed (newest a-bad.json)"
    assert lines[3] == ("funnel: oldest inbox item b-good.json has waited 2h "
                        "(stale_after 1h; 1 waiting)")
    assert lines[4].startswith("slow: lock slow held by run 20260109T090000Z-")
    assert lines[4].endswith(" for 3h (timeout 1h)")
    assert len(lines) == 5
    kinds = [(p["job"], p["kind"]) for p in json.loads(scene.at(NOW, "check", "--json").stdout)
             ["problems"]]
    assert kinds == [("pub", "missed"), ("funnel", "failed"), ("funnel", "failed-items"),
                     ("funnel", "stale-inbox"), ("slow", "lock-held")]


def test_check_notify_sends_each_new_problem_once_and_then_the_recovery(scene: Scene) -> None:
    r = scene.at(NOW, "check", "--notify")
    assert r.returncode == 1
    sent = scene.alerts()
    assert sent == [
        "pub|missed|missed|pub: missed 3 firings since 2026-01-05 10:00 UTC; first 2026-01-07 16:40 UTC, "
        "last 2026-01-08 16:40 UTC",
        f"funnel|failure|failed-items|funnel: 1 item in {scene.root}/q/failed (newest a-bad.json)",
        "funnel|failure|stale-inbox|funnel: oldest inbox item b-good.json has waited 2h "
        "(stale_after 1h; 1 waiting)",
        sent[3],
    ]
    assert sent[3].startswith("slow|failure|lock-held|slow: lock slow held by run ")
    assert "notify pub (missed): sent" in r.stderr
    # The same problems again: nothing new is sent.
    assert scene.at("2026-01-09 12:05:00", "check", "--notify").returncode == 1
    assert len(scene.alerts()) == 4
    # The stale item is taken care of: its recovery goes out, once.
    (scene.root / "q" / "inbox" / "b-good.json").unlink()
    scene.at("2026-01-09 12:10:00", "check", "--notify")
    scene.at("2026-01-09 12:15:00", "check", "--notify")
    assert scene.alerts()[4:] == [
        "funnel|recovery|stale-inbox|resolved: funnel: oldest inbox item b-good.json has waited "
        "2h (stale_after 1h; 1 waiting)"]


def test_a_healthy_namespace_exits_0(tmp_path: Path, fake_crontab: FakeCrontab,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    config = write_config(tmp_path / "jobs.toml", f"""
[jobs.pub]
command = "true"
schedule = "40 10 * * *"
targets = ["cron"]
log_root = "{tmp_path}/logs"
wrapper_dir = "{tmp_path}/wrappers"
""")
    subprocess.run([sys.executable, "-m", "schedgen", "apply", "-c", str(config)], check=True,
                   capture_output=True)
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at=INSTALLED)
    state.save(record)
    for day in ("05", "06", "07"):
        assert run_at(tmp_path, "pub", f"2026-01-{day} 10:40:03") == 0
    r = faked_clock.run("2026-01-07 12:00:00", [sys.executable, "-m",
                        "schedgen", "check", "-c", str(config)], capture_output=True, text=True,
                        frozen=True)
    assert (r.returncode, r.stdout) == (0, "namespace default: healthy (1 job)\n")
    r = faked_clock.run("2026-01-08 12:00:00", [sys.executable, "-m",
                        "schedgen", "check", "-c", str(config)], capture_output=True, text=True,
                        frozen=True)
    assert r.returncode == 1 and r.stdout.startswith("pub: missed 1 firing since 2026-01-05 ")
