"""Two namespaces on one machine: a file both would install is a conflict naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import FakeCrontab, FakeLaunchctl
from tests.helpers import schedgen, write_config


def config(tmp_path: Path, ns: str, command: str, targets: str = '["cron"]') -> Path:
    return write_config(tmp_path / ns / "jobs.toml", f"""
[defaults]
namespace = "{ns}"
targets = {targets}

[jobs.backup]
command = ["{command}"]
schedule = "@daily"
""")


def wrapper(home: Path) -> Path:
    return home / ".local/share/schedgen/wrappers/backup.sh"


def test_same_job_name_in_two_namespaces_is_a_conflict_naming_both(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    a, b = config(tmp_path, "alpha", "/bin/a-cmd"), config(tmp_path, "beta", "/bin/b-cmd")
    assert schedgen("apply", "-c", str(a)).returncode == 0
    before = wrapper(home).read_text()
    table = fake_crontab.read()
    r = schedgen("apply", "-c", str(b))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "namespace alpha installed this file; namespaces beta and alpha would share it" in r.stderr
    assert wrapper(home).read_text() == before and fake_crontab.read() == table
    r = schedgen("diff", "-c", str(b))
    assert r.returncode == 1 and "! conflict wrapper" in r.stdout and "namespace alpha" in r.stdout


def test_force_takes_it_over_and_the_other_uninstall_leaves_it(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    a, b = config(tmp_path, "alpha", "/bin/a-cmd"), config(tmp_path, "beta", "/bin/b-cmd")
    assert schedgen("apply", "-c", str(a)).returncode == 0
    r = schedgen("apply", "--force", "-c", str(b))
    assert r.returncode == 0, r.stderr
    assert "taken over from namespace alpha" in r.stdout
    assert "/bin/b-cmd" in wrapper(home).read_text()
    # alpha's next apply does not take it back silently: it is a conflict for alpha now
    r = schedgen("apply", "-c", str(a))
    assert r.returncode == 2 and "namespace beta installed this file" in r.stderr
    # uninstalling alpha removes alpha's block only and leaves beta's wrapper alone
    r = schedgen("uninstall", "-c", str(a))
    assert r.returncode == 0, r.stderr
    assert "namespace beta installed it since; left in place" in r.stdout
    assert wrapper(home).exists() and "/bin/b-cmd" in wrapper(home).read_text()
    table = (fake_crontab.read() or b"").decode()
    assert "namespace=alpha" not in table and "# BEGIN schedgen namespace=beta" in table
    assert schedgen("diff", "-c", str(b)).returncode == 0


def test_same_label_in_two_namespaces_is_a_conflict(
        fake_launchctl: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    a = config(tmp_path, "alpha", "/bin/a-cmd", '["launchd"]')
    b = config(tmp_path, "beta", "/bin/b-cmd", '["launchd"]')
    b.write_text(b.read_text().replace("[jobs.backup]", 'wrapper_dir = "~/beta-wrappers"\n\n'
                                                          "[jobs.backup]"))
    assert schedgen("apply", "-c", str(a)).returncode == 0
    r = schedgen("apply", "-c", str(b))
    assert r.returncode == 2
    assert "local.schedgen.backup.plist (namespace alpha installed this file" in r.stderr
    assert list(fake_launchctl.loaded()) == ["local.schedgen.backup"]
    assert not (home / "beta-wrappers").exists()


@pytest.mark.parametrize("ns", ["x--y", "a---b-"])
def test_owner_is_read_back_from_an_escaped_plist_comment(ns: str) -> None:
    from schedgen.machine.neighbours import header_namespace
    from schedgen.targets.launchd.render import xml_comment

    assert header_namespace(f"<!-- from /c (namespace {xml_comment(ns)}). schedgen-managed") == ns
    assert header_namespace("# from /tmp/(namespace evil)/jobs.toml (namespace good).") == "good"


def test_a_file_without_a_namespace_header_is_known_by_the_other_record(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    from schedgen.commands import apply as ap
    from schedgen.machine import ownership as state
    from schedgen.plan import changes as p

    a, b = config(tmp_path, "alpha", "/bin/a-cmd"), config(tmp_path, "beta", "/bin/b-cmd")
    ap.apply(a, say=lambda _: None)
    # as an older or hand-trimmed file might be: the marker, but no "(namespace ...)"
    wrapper(home).write_text("#!/bin/bash\n# schedgen-managed\n")
    plan = ap.diff(b)
    c = next(c for c in plan.changes if c.kind == "wrapper")
    assert c.action == p.CONFLICT and "namespace alpha installed this file" in c.note
    assert "backup" in {e.job for e in state.load("alpha").entries.values()}


def test_a_job_of_another_namespaces_log_folder_is_a_conflict_or_said_once_shared(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    # Job files apart (beta's wrapper_dir), logs not: one events.jsonl would hold both.
    a = config(tmp_path, "alpha", "/bin/true")
    b = config(tmp_path, "beta", "/bin/false")
    b.write_text(b.read_text().replace('targets = ["cron"]',
                                       f'targets = ["cron"]\nwrapper_dir = "{tmp_path}/bw"'))
    assert schedgen("apply", "-c", str(a)).returncode == 0
    table = fake_crontab.read()
    r = schedgen("apply", "-c", str(b))
    assert r.returncode == 2, r.stdout + r.stderr
    logs = home / ".local/state/schedgen/logs/backup"
    assert (f"job backup's log folder {logs} is also job backup's of namespace alpha" in r.stderr
            and "give one namespace its own log_root" in r.stderr), r.stderr
    assert fake_crontab.read() == table and not (tmp_path / "bw").exists()
    # its own log_root: nothing shared, each history its own
    own = b.read_text().replace('targets = ["cron"]',
                                f'targets = ["cron"]\nlog_root = "{tmp_path}/blogs"')
    b.write_text(own)
    r = schedgen("apply", "-c", str(b))
    assert r.returncode == 0 and "warning" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert schedgen("run", "backup", "-c", str(b)).returncode == 1
    assert "no runs recorded" in schedgen("history", "-c", str(a)).stdout
    # --force shares it; then each namespace's plans warn, and apply goes on
    b.write_text(own.replace(f'log_root = "{tmp_path}/blogs"\n', ""))
    r = schedgen("apply", "--force", "-c", str(b))
    assert r.returncode == 0 and "also job backup's of namespace alpha" in r.stdout + r.stderr
    for cfg, other in ((a, "beta"), (b, "alpha")):
        r = schedgen("apply", "-c", str(cfg))
        assert r.returncode == 0, r.stderr
        assert f"also job backup's of namespace {other}" in r.stdout + r.stderr
        assert f"also job backup's of namespace {other}" in schedgen("status", "-c", str(cfg)).stdout
