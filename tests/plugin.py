"""The suite's fixtures, loaded as a plugin (tests/conftest.py names it), so test
modules use them without importing them."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import wrapper_kit
from tests.bsd_userland import NO_BASH32, bash32, bsd_bin
from tests.fake_kubectl import FakeKubectl
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeMacTools, FakeSystemctl
from tests.helpers import isolate_home
from tests.mailhub import MailHub, mailhub_fixture
from tests.pinghub import PingHub
from tests.sdmanager import Unavailable, UserManager
from tests.wrapper_kit import SYSTEM_PATH


@contextmanager
def isolated(root: Path, guard_bin: Path, *fakes: type) -> Iterator[pytest.MonkeyPatch]:
    """For a fixture wider than a test, what a test's own fixtures set up, undone at its
    end: a fresh HOME under ``root``, ``root``/bin first on PATH before the guards of the
    real tools (conftest.py), and each of ``fakes`` (FakeCrontab...) there with its variables."""
    with pytest.MonkeyPatch.context() as mp:
        isolate_home(mp, root)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        mp.setenv("PATH", f"{bin_dir}{os.pathsep}{guard_bin}{os.pathsep}{os.environ['PATH']}")
        for kind in fakes:
            for k, v in kind(bin_dir, root).env.items():
                mp.setenv(k, v)
        yield mp


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp bin/ first on PATH."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ['PATH']}")
    return d


@pytest.fixture
def fake_crontab(fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCrontab:
    fake = FakeCrontab(fake_bin, tmp_path)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    return fake


@pytest.fixture
def fake_launchctl(fake_bin: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> FakeLaunchctl:
    fake = FakeLaunchctl(fake_bin, tmp_path)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr("schedgen.targets.launchd.launchctl.RETRY_DELAYS", (0.01, 0.01, 0.01))
    return fake


@pytest.fixture
def fake_mac_tools(fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeMacTools:
    fake = FakeMacTools(fake_bin, tmp_path)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    return fake


@pytest.fixture
def fake_systemctl(fake_bin: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> FakeSystemctl:
    fake = FakeSystemctl(fake_bin, tmp_path)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    return fake


@pytest.fixture
def fake_kubectl(fake_bin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeKubectl:
    fake = FakeKubectl(fake_bin, tmp_path)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    return fake


_BSD_BIN: list[Path] = []


# What a BSD tool may refuse during a test: fscheck.sh asks `stat -c` first where OSTYPE
# is not darwin (bash 3.2 here says linux-gnu), then `stat -f`; a queue run asks mv in
# GNU's words once, and links from then on (sg_mvn).
_REFUSALS_EXPECTED = re.compile(r"stat -L -c %d -- .*|mv --no-clobber (--no-target-directory )?-- .*")


def macos_userland(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                   request: pytest.FixtureRequest | None = None) -> Path:
    """Wrappers from here on run under bash 3.2; returns the BSD PATH folder for the job
    (made once per worker). Skips when there is no bash 3.2 here. With ``request``, the
    test fails at its end if a BSD shim refused anything (the runtime hides most errors)."""
    b32 = bash32()
    if b32 is None:
        pytest.skip(NO_BASH32)
    if not _BSD_BIN:
        _BSD_BIN.append(bsd_bin(tmp_path_factory.mktemp("macos")))
    if request is not None:
        log = tmp_path_factory.mktemp("refused") / "log"
        monkeypatch.setenv("BSD_SHIM_LOG", str(log))

        def no_refusal() -> None:
            lines = log.read_text().splitlines() if log.exists() else []
            bad = [x for x in lines if not _REFUSALS_EXPECTED.fullmatch(x)]
            assert not bad, f"a BSD tool refused what the runtime asked of it: {bad}"
        request.addfinalizer(no_refusal)
    monkeypatch.setattr(wrapper_kit, "BASH", str(b32))
    monkeypatch.setattr(wrapper_kit, "SYSTEM_PATH", [str(_BSD_BIN[0])])
    monkeypatch.setattr(wrapper_kit, "MACOS", True)
    return _BSD_BIN[0]


@pytest.fixture(params=["gnu", "macos"])
def tool_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job's PATH and the bash that runs it: the system's (with flock), or macOS's
    (GNU bash 3.2, and BSD tools without flock/timeout/setsid: tests/bsd_userland.py)."""
    if request.param == "gnu":
        if shutil.which("flock") is None:
            pytest.skip("flock(1) is not installed here")
        return SYSTEM_PATH
    return [str(macos_userland(tmp_path_factory, monkeypatch, request))]


@pytest.fixture
def userland(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
             monkeypatch: pytest.MonkeyPatch) -> str:
    """For tests marked `macos`: "gnu" (the system's bash and tools) or "macos" (bash 3.2
    and the BSD userland, set in tests.wrapper_kit: BASH, and SYSTEM_PATH, the default
    PATH of make_job)."""
    if request.param == "macos":
        macos_userland(tmp_path_factory, monkeypatch, request)
    return str(request.param)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `macos` runs twice: under the system's bash and tools, and under
    bash 3.2 with the BSD userland (tests using tool_path get this from it)."""
    if metafunc.definition.get_closest_marker("macos") and "tool_path" not in metafunc.fixturenames:
        if "userland" not in metafunc.fixturenames:
            metafunc.fixturenames.append("userland")
        metafunc.parametrize("userland", ["gnu", "macos"], indirect=True)


@pytest.fixture
def mailhub(home: Path) -> Iterator[MailHub]:
    """A loopback SMTP server, and ~/.msmtprc pointing msmtp at it."""
    hub = mailhub_fixture()
    hub.msmtprc(home)
    yield hub
    hub.stop()


@pytest.fixture
def pinghub() -> Iterator[PingHub]:
    hub = PingHub()
    t = threading.Thread(target=hub.server.serve_forever, daemon=True)
    t.start()
    yield hub
    hub.server.shutdown()
    hub.server.server_close()
def _unavailable(why: str) -> None:
    """Skip, saying why, where the real thing cannot run (.ci/run installs what it needs)."""
    pytest.skip(why)


@pytest.fixture(scope="session")
def cron_user() -> Iterator[str]:
    """A throwaway user whose crontab the real `crontab -u` edits: one per test process
    (named by its pid, so two test runs on one machine never share a table), removed at
    the end with its table."""
    if not os.path.exists("/usr/bin/crontab"):
        _unavailable("no /usr/bin/crontab (Debian package cron)")
    if os.geteuid() != 0:
        _unavailable("crontab -u (another user's table) needs root")
    if shutil.which("useradd") is None:
        _unavailable("useradd is not installed (Debian package passwd)")
    name = f"sgtest{os.getpid()}"
    try:
        pwd.getpwnam(name)
    except KeyError:
        for _ in range(50):  # another worker may hold /etc/passwd's lock a moment
            r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh",
                                name], capture_output=True, text=True)
            if r.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"useradd {name}: {r.stderr}")
    yield name
    subprocess.run(["/usr/bin/crontab", "-u", name, "-r"], capture_output=True)
    for _ in range(50):
        if subprocess.run(["userdel", name], capture_output=True).returncode in (0, 6):
            break
        time.sleep(0.1)


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


@pytest.fixture
def live_manager(user_manager: UserManager, fake_bin: Path,
                 monkeypatch: pytest.MonkeyPatch) -> UserManager:
    """The worker's manager, emptied, with this test's environment and a `systemctl` on
    PATH that reaches it."""
    user_manager.reset()
    for k, v in user_manager.env().items():
        if k != "PATH":
            monkeypatch.setenv(k, v)
    user_manager.install_shim(fake_bin)
    return user_manager


# Started first, so their waiting overlaps the rest of the run: the real cron daemon
# reads a changed crontab only at the next minute.
_LONG_FIRST = ("tests/test_e2e_cron.py::", "tests/test_e2e_adopt.py::", "tests/test_import_calendar.py::test_any_dicts",
               "tests/test_calendar.py::test_generated", "tests/test_calendar.py::test_calendar_fires")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(_LONG_FIRST))
