"""`diff`: unified diffs, the summary line, exit codes, --json, colour rules, --target."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from schedgen.commands import apply as ap
from schedgen.output import plan as report
from tests.fakes import (
    FakeCrontab,
    FakeLaunchctl,
)
from tests.helpers import schedgen, schedgen_process, write_config

JOBS = """
[defaults]
targets = ["cron", "launchd"]

[jobs.one]
command = ["echo", "one"]
schedule = "0 * * * *"

[jobs.two]
command = ["echo", "two"]
schedule = "0 5 * * *"
targets = ["cron"]
"""


@pytest.fixture
def fakes(fake_crontab: FakeCrontab, fake_launchctl: FakeLaunchctl,
          tmp_path: Path) -> tuple[FakeCrontab, FakeLaunchctl]:
    write_config(tmp_path / "jobs.toml", JOBS)
    return fake_crontab


def test_summary_counts_adds_changes_removals_and_unchanged(fakes: tuple, tmp_path: Path,
                                                            home: Path) -> None:
    r = schedgen("diff", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout.endswith("changes pending: 5 to add, 0 to change, 0 to remove, 0 unchanged\n")
    assert "+++ desired: crontab block" in r.stdout and "--- /dev/null" in r.stdout
    schedgen("apply", cwd=tmp_path)
    (home / ".local/share/schedgen/wrappers/one.sh").write_text("#!/bin/bash\n# schedgen-managed\n")
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.two]")[0]
                 + '[jobs.three]\ncommand = "true"\nschedule = "@daily"\ntargets = ["cron"]\n')
    r = schedgen("diff", cwd=tmp_path)
    assert r.returncode == 1
    assert ("1 to add, 2 to change, 0 to remove, 2 unchanged; 1 orphaned (owned but no longer "
            "in the config; apply --prune removes)") in r.stdout
    r = schedgen("diff", "--prune", cwd=tmp_path)
    assert "1 to add, 2 to change, 1 to remove, 2 unchanged\n" in r.stdout
    assert "~ update wrapper" in r.stdout and "hand-edited" in r.stdout


def test_in_sync_exits_0(fakes: tuple, tmp_path: Path) -> None:
    schedgen("apply", cwd=tmp_path)
    r = schedgen("diff", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout == "namespace default: in sync: 0 to add, 0 to change, 0 to remove, 5 unchanged\n"


def test_exit_codes_of_a_real_process(fakes: tuple, tmp_path: Path) -> None:
    """Most tests call the CLI in-process; these go through a fresh interpreter."""
    assert schedgen_process("diff", cwd=tmp_path).returncode == 1
    assert schedgen_process("apply", cwd=tmp_path).returncode == 0
    assert schedgen_process("diff", cwd=tmp_path).returncode == 0
    # diff reviews on any host; apply needs the programs and changes nothing without them
    r = schedgen_process("apply", cwd=tmp_path, env={"PATH": str(tmp_path / "empty")})
    assert r.returncode == 3 and "not found on PATH" in r.stderr


def test_bad_config_exits_2_without_traceback(fakes: tuple, tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", "[jobs.x]\ncommand = 1\n")
    r = schedgen_process("diff", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "jobs.x" in r.stderr
    r = schedgen("diff", "-c", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert r.returncode == 2 and "no such config file" in r.stderr


def test_diff_without_launchctl_shows_files_and_unknown_state(fake_crontab: FakeCrontab,
                                                               tmp_path: Path) -> None:
    """A Mac's config reviewed on Linux: files are diffed, loaded/running is unknown."""
    write_config(tmp_path / "jobs.toml", JOBS)
    path = f"{tmp_path / 'bin'}:/usr/bin:/bin"
    r = schedgen("diff", cwd=tmp_path, env={"PATH": path})
    assert r.returncode == 1, r.stderr
    assert "+ new launchd plist ~/Library/LaunchAgents/" in r.stdout
    assert "launchctl not found on PATH" in r.stdout
    assert "loaded or running is unknown" in r.stdout
    data = json.loads(schedgen("diff", "--json", cwd=tmp_path, env={"PATH": path}).stdout)
    plist = next(c for c in data["changes"] if c["kind"] == "plist")
    assert plist["loaded"] is None and plist["pid"] is None
    # apply still needs launchctl: it fails before touching anything.
    r = schedgen("apply", cwd=tmp_path, env={"PATH": path})
    assert r.returncode == 3 and "launchctl not found on PATH" in r.stderr
    assert fake_crontab.writes() == []


def test_json_for_ci(fakes: tuple, tmp_path: Path) -> None:
    r = schedgen("diff", "--json", cwd=tmp_path)
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["in_sync"] is False and data["summary"]["create"] == 5
    plist = next(c for c in data["changes"] if c["kind"] == "plist")
    assert plist["label"] == "local.schedgen.one" and plist["loaded"] is False
    assert plist["diff"].startswith("--- /dev/null\n+++ desired: ")
    schedgen("apply", cwd=tmp_path)
    data = json.loads(schedgen("diff", "--json", cwd=tmp_path).stdout)
    assert data["in_sync"] is True and all(c["diff"] == "" for c in data["changes"])


def test_no_colour_when_not_a_terminal(fakes: tuple, tmp_path: Path) -> None:
    assert "\x1b[" not in schedgen("diff", cwd=tmp_path).stdout


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(fakes: tuple, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert report.use_color(_Tty()) is True
    assert report.use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert report.use_color(_Tty()) is False
    plan = ap.diff(tmp_path / "jobs.toml")
    assert "\x1b[32m+" in report.diff_text(plan, color=True)
    assert "\x1b[" not in report.diff_text(plan, color=False)


def test_target_option_limits_the_plan(fake_crontab: FakeCrontab, tmp_path: Path,
                                       home: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS)
    # No launchctl on PATH at all: --target cron must not need it.
    r = schedgen("apply", "--target", "cron", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "4 added" in r.stdout and not (home / "Library").exists()
    assert schedgen("diff", "-t", "cron", cwd=tmp_path).returncode == 0
    r = schedgen("diff", "-t", "nope", cwd=tmp_path)
    assert r.returncode == 2 and "expected one of launchd, cron, systemd, kubernetes" in r.stderr


def test_diff_and_dry_run_agree(fakes: tuple, tmp_path: Path) -> None:
    plan = ap.diff(tmp_path / "jobs.toml")
    said: list[str] = []
    out = ap.apply(tmp_path / "jobs.toml", dry_run=True, say=said.append)
    assert [(c.key, c.action) for c in out.plan.changes] == [(c.key, c.action) for c in plan.changes]
    assert all(line.startswith("would ") for line in said)
    assert ap.diff(tmp_path / "jobs.toml").changes == plan.changes  # nothing was written
