"""The conformance suite's fixtures: one driver per registered target, per test."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance import drivers as d
from tests.fake_kubectl import FakeKubectl
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeSystemctl
from tests.sdmanager import Unavailable, UserManager


def _unavailable(why: str) -> None:
    """Skip where the real thing cannot run here; in CI it must (.ci/run installs it)."""
    if os.environ.get("CI"):
        pytest.fail(f"{why}: CI must run the conformance suite against it (.ci/run)")
    pytest.skip(why)


def _worker(config: pytest.Config) -> str:
    return getattr(config, "workerinput", {}).get("workerid", "gw")


@pytest.fixture(scope="session")
def cron_user(request: pytest.FixtureRequest) -> Iterator[str]:
    """A throwaway user whose crontab the real `crontab -u` edits (one per test worker)."""
    if not os.path.exists("/usr/bin/crontab"):
        _unavailable("no /usr/bin/crontab (Debian package cron)")
    if os.geteuid() != 0:
        _unavailable("crontab -u (another user's table) needs root")
    name = f"sgconform{_worker(request.config).removeprefix('gw')}"
    made = False
    try:
        pwd.getpwnam(name)
    except KeyError:
        if shutil.which("useradd") is None:
            _unavailable("useradd is not installed")
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", name],
                       check=True, capture_output=True)
        made = True
    yield name
    subprocess.run(["/usr/bin/crontab", "-u", name, "-r"], capture_output=True)
    if made:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(scope="session")
def user_manager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserManager]:
    """One real systemd user manager per test worker, for every systemd case."""
    m = UserManager(tmp_path_factory.mktemp("systemd-user"))
    try:
        m.start()
    except Unavailable as exc:
        _unavailable(f"no systemd user manager here: {exc}")
    yield m
    m.stop()


# Cases that fail today, each named for what is wrong; strict: a fixed one must leave.
KNOWN_BROKEN: dict[tuple[str, str], str] = {
}


@pytest.fixture(params=d.targets())
def driver(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           home: Path) -> Iterator[d.Driver]:
    name = request.param
    why = KNOWN_BROKEN.get((request.function.__name__, name))
    if why:
        request.applymarker(pytest.mark.xfail(strict=True, reason=why))
    # The other targets' programs, faked, behind the driver's: a job moved to another
    # target, and uninstall (which looks everywhere), find them as on a real machine.
    others = tmp_path / "others"
    (others / "bin").mkdir(parents=True)
    for fake in (FakeCrontab, FakeLaunchctl, FakeSystemctl, FakeKubectl):
        for k, v in fake(others / "bin", others).env.items():
            monkeypatch.setenv(k, v)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{others / 'bin'}{os.pathsep}"
                               f"{os.environ['PATH']}")
    drv: d.Driver
    if name == "launchd":
        drv = d.LaunchdDriver(tmp_path, bin_dir, monkeypatch)
    elif name == "cron":
        drv = d.CronDriver(tmp_path, bin_dir, monkeypatch, request.getfixturevalue("cron_user"))
    elif name == "systemd":
        drv = d.SystemdDriver(tmp_path, bin_dir, monkeypatch,
                              request.getfixturevalue("user_manager"))
    elif name == "kubernetes":
        drv = d.KubernetesDriver(tmp_path, bin_dir, monkeypatch)
    else:
        raise AssertionError(f"target {name!r} is registered but has no conformance driver "
                             "(tests/conformance/drivers.py)")
    try:
        yield drv
    finally:
        drv.close()
