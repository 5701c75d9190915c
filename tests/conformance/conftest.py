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
    kind = d.drivers().get(name)
    if kind is None:
        raise AssertionError(f"target {name!r} is registered but has no conformance driver "
                             "(a Driver subclass in tests/conformance/drivers.py)")
    drv = kind.make(request, tmp_path, bin_dir, monkeypatch)
    try:
        yield drv
    finally:
        drv.close()
