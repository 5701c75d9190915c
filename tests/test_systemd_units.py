"""Rendered systemd units: layout, content, and the real `systemd-analyze verify`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.render.desired import desired
from schedgen.targets.systemd.render import exec_word, timer_settings, timespan
from tests.helpers import schedgen, write_config

CONFIG = """
[defaults]
namespace = "units"
targets = ["systemd"]
wrapper_dir = "__WRAPPERS__"

[jobs.funnel]
description = "Notes & drafts -- 100% done, $HOME stays literal"
command = ["/bin/echo", "{item}"]
schedule = "40 10,16 * * *"
[jobs.funnel.queue]
inbox = "/srv/notes/done"

[jobs.either]
command = "echo either"
schedule = "0 0 1,15 * mon"

[jobs.every]
command = "echo tick"
schedule = "@every 1h30m"

[jobs.boot]
command = ["/bin/true"]
schedule = ["@reboot", "0 9 * * 1-5", "0 9 * * 6"]

[jobs.weekly]
command = ["/bin/true"]
schedule = "@weekly"
"""

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd-analyze not installed (.ci/run installs it)")


def render(tmp_path: Path, out: Path) -> list[Path]:
    """Render into ``out``, with ExecStart pointing at the wrappers rendered there."""
    cfg = write_config(tmp_path / "jobs.toml", CONFIG.replace("__WRAPPERS__", str(out / "wrappers")))
    r = schedgen("render", "--out", str(out), "-c", str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return sorted((out / "systemd").iterdir())


def test_layout_is_one_service_and_one_timer_per_job(tmp_path: Path) -> None:
    files = render(tmp_path, tmp_path / "out")
    jobs = ("boot", "either", "every", "funnel", "weekly")
    assert [f.name for f in files] == [f"local.schedgen.{j}.{k}" for j in jobs
                                       for k in ("service", "timer")]
    for f in files:
        assert "schedgen-managed" in f.read_text()
        assert "0.1.0" not in f.read_text()  # no version: an upgrade is not drift


@needs_analyze
def test_every_rendered_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    # A folder name that needs quoting in ExecStart: verify fails if the path comes out
    # wrong ("is not executable").
    out = tmp_path / "out dir $x 100%"
    files = render(tmp_path, out)
    proc = verify(tmp_path, files)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    # And a unit that verify must reject, so the check above can fail at all.
    bad = files[0].with_name("local.schedgen.bad.service")
    bad.write_text(files[0].read_text().replace("/wrappers/", "/nowhere/"))
    proc = verify(tmp_path, [bad])
    assert proc.returncode != 0 and "is not executable" in proc.stderr


def verify(tmp_path: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    """The real `systemd-analyze --user verify` (no running systemd needed)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return subprocess.run(["systemd-analyze", "--user", "verify", *map(str, files)],
                          capture_output=True, text=True,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})


@needs_analyze
def test_a_wrapper_path_with_quotes_backslashes_and_a_tab_passes_verify_and_runs(
        tmp_path: Path) -> None:
    # systemd refuses ', ", \ and a tab in an executable's name (a home like
    # /home/o'brien): bash runs the job file, whose path is then an argument.
    out = tmp_path / "o'brien \"q\" back\\slash\ttab $x 100%"
    cfg = write_config(tmp_path / "jobs.toml", CONFIG.replace(
        '"__WRAPPERS__"', json.dumps(str(out / "wrappers"))))   # a TOML basic string
    r = schedgen("render", "--out", str(out), "-c", str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    files = sorted((out / "systemd").iterdir())
    services = [f for f in files if f.suffix == ".service"]
    proc = verify(tmp_path, files)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    line = next(x for x in services[0].read_text().splitlines() if x.startswith("ExecStart="))
    assert line.startswith('ExecStart=/bin/bash "')
    # The argument as systemd unquotes it (C escapes; $$ and %% for $ and %): the job file.
    quoted = line.removeprefix('ExecStart=/bin/bash "').removesuffix('"')
    arg = re.sub(r"\\(.)", lambda m: "\t" if m.group(1) == "t" else m.group(1), quoted)
    arg = arg.replace("$$", "$").replace("%%", "%")
    assert Path(arg).is_file() and Path(arg).parent.parent == out


def _timer(config, job: str) -> list[tuple[str, str]]:
    j = config.job(job)
    assert j is not None
    return timer_settings(j)


def test_timer_settings_per_schedule_kind(tmp_path: Path) -> None:
    config = loads(CONFIG.replace("__WRAPPERS__", "/opt/w"), tmp_path / "jobs.toml")
    assert _timer(config, "funnel") == [("OnCalendar", "*-*-* 10,16:40:00")]
    assert _timer(config, "either") == [("OnCalendar", "*-*-01,15 00:00:00"),
                                        ("OnCalendar", "Mon *-*-* 00:00:00")]
    assert _timer(config, "every") == [("OnActiveSec", "1h 30min"),
                                       ("OnUnitActiveSec", "1h 30min")]
    assert _timer(config, "boot") == [("OnCalendar", "Mon..Sat *-*-* 09:00:00"),
                                      ("OnStartupSec", "0")]
    assert _timer(config, "weekly") == [("OnCalendar", "Sun *-*-* 00:00:00")]


def test_catch_up_and_random_delay_are_systemds_own_keys(tmp_path: Path) -> None:
    text = CONFIG.replace("__WRAPPERS__", "/opt/w").replace(
        "[defaults]", '[defaults]\ncatch_up = "once"\nrandom_delay = "15m"', 1)
    config = loads(text, tmp_path / "jobs.toml")
    assert _timer(config, "funnel") == [("OnCalendar", "*-*-* 10,16:40:00"), ("Persistent", "true"),
                                        ("RandomizedDelaySec", "15min"),
                                        ("FixedRandomDelay", "true")]
    # Monotonic only: Persistent would mean nothing to systemd.
    assert ("Persistent", "true") not in _timer(config, "every")
    fresh = loads(text.replace('random_delay = "15m"', 'random_delay = "15m"\n'
                               "random_delay_stable = false"), tmp_path / "jobs.toml")
    assert ("FixedRandomDelay", "false") in _timer(fresh, "funnel")


def test_service_runs_the_wrapper_once_with_specifiers_escaped(tmp_path: Path) -> None:
    config = loads(CONFIG.replace("__WRAPPERS__", "/opt/my wrappers"), tmp_path / "jobs.toml")
    service = next(a for a in desired(config) if a.kind == "service" and a.job == "funnel")
    assert service.path == Path(os.environ["HOME"]) / ".config/systemd/user" / \
        "local.schedgen.funnel.service"
    assert service.rel == "systemd/local.schedgen.funnel.service"
    assert "Type=oneshot\n" in service.content
    assert 'ExecStart="/opt/my wrappers/funnel.sh"\n' in service.content
    assert "Description=schedgen job funnel: Notes & drafts -- 100%% done, $HOME stays literal" \
        in service.content


@pytest.mark.parametrize(("arg", "word"), [
    ("/opt/w/job.sh", "/opt/w/job.sh"),
    ("/opt/my w/job.sh", '"/opt/my w/job.sh"'),
    ("/opt/100%/job.sh", "/opt/100%%/job.sh"),
    ("/opt/$HOME/job.sh", "/opt/$HOME/job.sh"),
    ('/opt/a"b\\c/job.sh', '"/opt/a\\"b\\\\c/job.sh"'),
])
def test_exec_word(arg: str, word: str) -> None:
    assert exec_word(arg) == word


@pytest.mark.parametrize(("seconds", "text"), [
    (60, "1min"), (90, "1min 30s"), (5400, "1h 30min"), (86400, "1d"), (7, "7s")])
def test_timespan(seconds: int, text: str) -> None:
    assert timespan(seconds) == text


@needs_analyze
@pytest.mark.parametrize("seconds", [7, 90, 5400, 90061])
def test_timespan_reads_back_in_systemd(seconds: int) -> None:
    proc = subprocess.run(["systemd-analyze", "timespan", timespan(seconds)], capture_output=True,
                          text=True, check=True)
    assert f"μs: {seconds * 1_000_000}" in proc.stdout
