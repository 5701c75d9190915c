"""Where things live by default. Everything is under $HOME unless configured."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def is_macos() -> bool:
    return sys.platform == "darwin"


def home() -> Path:
    return Path(os.path.expanduser("~"))


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "")
    # The XDG spec says relative values are invalid and must be ignored.
    return Path(value) if value.startswith("/") else home() / fallback


def state_dir() -> Path:
    if is_macos():
        return home() / "Library" / "Application Support" / "schedgen"
    return _xdg("XDG_STATE_HOME", ".local/state") / "schedgen"


def data_dir() -> Path:
    if is_macos():
        return home() / "Library" / "Application Support" / "schedgen"
    return _xdg("XDG_DATA_HOME", ".local/share") / "schedgen"


def private_tmp() -> Path:
    """schedgen's own temp folder (0700, the apply lock's in /tmp): files that hold what
    others must not read. A short path: Debian's crontab(1) cuts a FILE argument at 99
    bytes, so the user's state dir (as deep as $HOME) will not do for the crontab's."""
    import tempfile

    return Path(tempfile.gettempdir()) / f"schedgen-{os.getuid()}"


def cache_dir() -> Path:
    if is_macos():
        return home() / "Library" / "Caches" / "schedgen"
    return _xdg("XDG_CACHE_HOME", ".cache") / "schedgen"


def default_log_root() -> Path:
    if is_macos():
        return home() / "Library" / "Logs" / "schedgen"
    return state_dir() / "logs"


def default_lock_dir() -> Path:
    return state_dir() / "locks"


def default_wrapper_dir() -> Path:
    return data_dir() / "wrappers"


def launch_agents_dir() -> Path:
    return home() / "Library" / "LaunchAgents"


def default_targets() -> tuple[str, ...]:
    return ("launchd",) if is_macos() else ("cron",)


def expand_home(value: str) -> str:
    """A leading ``~`` or ``~/`` as your home; every other byte as written (a Path would
    drop a trailing slash, which rsync and cp read as "the folder's contents")."""
    if value == "~" or value.startswith("~/"):
        return os.path.expanduser("~").rstrip("/") + value[1:] or "/"
    return value


def expand(value: str, base: Path) -> Path:
    """``~`` is the home of the user running schedgen; relative is relative to the config."""
    p = Path(os.path.expanduser(value))
    return p if p.is_absolute() else (base / p)


def config_dir() -> Path:
    """$XDG_CONFIG_HOME, else ~/.config."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def pause_file(namespace: str, job: str) -> Path:
    """Exists while the job is paused (schedgen pause; schedgen/machine/pause.py)."""
    return state_dir() / "paused" / namespace / job
