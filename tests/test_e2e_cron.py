"""End to end: the real `crontab` program and a real cron daemon run a generated wrapper.

This is the one test that touches the real user's crontab. It saves the table first
and puts it back byte for byte in a `finally`, whatever happens. Everything it
installs (wrapper, logs, ownership record) lives under the temp HOME.

The cron daemon is expected to be running (.ci/run starts it). When it is not and
the tests run as root, the fixture starts `cron` itself and stops it afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import schedgen, write_config

pytestmark = pytest.mark.e2e

JOBS = """
[defaults]
namespace = "e2e-test"
targets = ["cron"]

[jobs.tick]
description = "schedgen end-to-end test; removed when the test ends"
command = ["sh", "-c", "echo tick from cron"]
schedule = "* * * * *"
"""
WAIT = 130  # seconds: cron reads a changed crontab at the next minute, then runs the job


def _cron_pids() -> list[int]:
    """Live cron daemons (a zombie left by a container's init that does not reap is not one)."""
    pids = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        name, _, rest = stat.partition(") ")
        if name.split(" (", 1)[-1] in ("cron", "crond") and not rest.startswith(("Z", "X")):
            pids.append(int(d.name))
    return pids


def _unavailable(why: str) -> None:
    """Skip on a developer's machine without cron; in CI this test must run."""
    if os.environ.get("CI"):
        pytest.fail(f"{why}: CI must run the end-to-end cron test (.ci/run installs cron)")
    pytest.skip(why)


@pytest.fixture
def cron_daemon() -> Iterator[None]:
    if shutil.which("crontab") is None:
        _unavailable("no crontab program on PATH")
    if _cron_pids():
        yield
        return
    daemon = shutil.which("cron") or shutil.which("cron", path="/usr/sbin:/sbin")
    if daemon is None or os.geteuid() != 0:
        _unavailable("no cron daemon running, and cannot start one (run .ci/run as root)")
    subprocess.run([daemon], check=True)  # Debian's cron daemonizes itself
    deadline = time.monotonic() + 10
    while not _cron_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    # Left running, as .ci/run leaves it: the daemon is the machine's, and another test
    # (another xdist worker, or another test run on the machine) may have found it running
    # since; stopping it under them made their jobs never fire.
    if not _cron_pids():
        _unavailable(f"{daemon} did not stay running")
    yield


def _read_crontab() -> tuple[int, bytes]:
    p = subprocess.run(["crontab", "-l"], capture_output=True)
    if p.returncode != 0 and b"no crontab for" in p.stderr:
        return 1, b""
    assert p.returncode == 0, p.stderr
    return 0, p.stdout


def _restore_crontab(saved: tuple[int, bytes]) -> None:
    rc, table = saved
    if rc == 0:
        subprocess.run(["crontab", "-"], input=table, check=True)
    else:
        subprocess.run(["crontab", "-r"], capture_output=True)


def test_real_cron_runs_the_wrapper_and_uninstall_restores_the_crontab(
        cron_daemon: None, tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path / "jobs.toml", JOBS)
    original = _read_crontab()
    try:
        r = schedgen("apply", "-c", str(config))
        assert r.returncode == 0, r.stderr
        rc, table = _read_crontab()
        assert rc == 0 and b"# BEGIN schedgen namespace=e2e-test" in table
        assert table.startswith(original[1])  # the user's own lines come first, unchanged

        runs = home / ".local/state/schedgen/logs/tick/runs"
        deadline = time.monotonic() + WAIT
        manifest: dict | None = None
        while time.monotonic() < deadline:
            for m in sorted(runs.glob("*/schedgen-manifest.json")):
                data = json.loads(m.read_text() or "{}")
                if data.get("finished_at"):
                    manifest = data
                    break
            if manifest:
                break
            time.sleep(0.5)
        assert manifest is not None, f"cron did not run the wrapper within {WAIT}s"
        assert manifest["job"] == "tick" and manifest["exit_code"] == 0
        out = next(runs.glob("*/stdout.log"), None)
        assert out is None or "tick from cron" in out.read_text()

        s = schedgen("status", "-c", str(config), "--check")
        assert s.returncode == 0, s.stdout + s.stderr
        assert f"last run   {manifest['run_id']}" in s.stdout

        u = schedgen("uninstall", "-c", str(config))
        assert u.returncode == 0, u.stderr
        assert _read_crontab() == original
    finally:
        if _read_crontab() != original:
            _restore_crontab(original)
        assert _read_crontab() == original
