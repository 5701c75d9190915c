"""The conformance suite's fixtures: one driver per registered target, per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance import drivers as d
from tests.fake_kubectl import FakeKubectl
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeSystemctl


@pytest.fixture(params=d.targets())
def driver(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           home: Path) -> Iterator[d.Driver]:
    name = request.param
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
