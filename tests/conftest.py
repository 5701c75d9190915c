"""Every test runs with HOME in a temp folder; the real home is checked untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ("tests.plugin",)

REAL_HOME = Path(os.path.expanduser("~"))
# What schedgen would write under a real home; none of it may change during tests.
_WATCHED = [".local/share/schedgen", ".local/state/schedgen", "Library/LaunchAgents",
            "Library/Logs/schedgen", "Library/Application Support/schedgen",
            ".cache/schedgen", "Library/Caches/schedgen", ".config/systemd/user"]


def _snapshot() -> dict[str, list[str]]:
    out = {}
    for rel in _WATCHED:
        p = REAL_HOME / rel
        out[rel] = sorted(str(x) for x in p.rglob("*")) if p.exists() else []
    return out


@pytest.fixture(scope="session", autouse=True)
def _real_home_untouched():
    before = _snapshot()
    yield
    after = _snapshot()
    assert before == after, f"a test wrote into the real home: {before} -> {after}"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME for each test, with XDG and schedgen variables cleared."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    # the apply lock is per user (outside HOME): each test's fake crontab gets its own
    monkeypatch.setenv("SCHEDGEN_TEST_APPLY_LOCK", str(tmp_path / "apply-lock" / "apply.lock"))
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "SCHEDGEN_CONFIG",
                "SCHEDGEN_SMOKE", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    return h


_GUARD = """#!/bin/sh
echo "test guard: a test reached the real $(basename "$0") $*; use the fakes in tests/fakes.py" >&2
exit 99
"""


@pytest.fixture(autouse=True)
def _no_real_crontab_or_launchctl(request: pytest.FixtureRequest, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the end-to-end test, `crontab`, `launchctl`, `systemctl`, `loginctl` and `kubectl`
    fail loudly unless faked."""
    if request.node.get_closest_marker("e2e"):
        return
    guard = tmp_path / "guard-bin"
    guard.mkdir()
    for name in ("crontab", "launchctl", "systemctl", "loginctl", "kubectl"):
        (guard / name).write_text(_GUARD)
        (guard / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{guard}{os.pathsep}{os.environ.get('PATH', '')}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow run only when asked for: `pytest -m slow`."""
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)
