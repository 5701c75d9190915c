"""Where things live by default. Everything is under $HOME unless configured.

A system-scope job (`scope = "system"`) lives in the machine's folders instead; while a
command works on those jobs, `in_scope("system")` makes every folder below the system
one, so the ownership record, the wrappers and the logs of the two scopes never mix.
$SCHEDGEN_SYSTEM_ROOT puts the system folders under another root (tests).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

USER = "user"
SYSTEM = "system"
SCOPES = (USER, SYSTEM)
_SCOPE: ContextVar[str] = ContextVar("schedgen_scope", default=USER)


def scope() -> str:
    """The scope the command works in now: "user" (the default) or "system"."""
    return _SCOPE.get()


def system() -> bool:
    return _SCOPE.get() == SYSTEM


@contextmanager
def in_scope(name: str) -> Iterator[None]:
    """`name`'s folders in force. In system scope the umask is 022, whatever root's: group
    and others may not write what is made (a folder made 0777 under a root's umask 000
    would let any account swap a system job's files or its record), and may enter it
    (under a root's 027 or 077 the job's user could not reach its job file, its log or
    its lock folder, and every run failed)."""
    token = _SCOPE.set(name)
    umask = os.umask(0o022) if name == SYSTEM else None
    try:
        yield
    finally:
        _SCOPE.reset(token)
        if umask is not None:
            os.umask(umask)


def system_path(path: str) -> Path:
    """A machine folder (/etc/cron.d, /var/log/schedgen) under $SCHEDGEN_SYSTEM_ROOT."""
    root = os.environ.get("SCHEDGEN_SYSTEM_ROOT", "")
    return Path(root.rstrip("/") + path) if root.startswith("/") else Path(path)


def system_state_dir() -> Path:
    return system_path("/var/lib/schedgen")


def system_log_root() -> Path:
    return system_path("/var/log/schedgen")


def system_wrapper_dir() -> Path:
    return system_path("/usr/local/libexec/schedgen")


def system_lock_dir(user: str) -> Path:
    """Per account: its runs write their lock files there (it owns the folder)."""
    return system_state_dir() / "locks" / user


def is_macos() -> bool:
    return sys.platform == "darwin"


def home() -> Path:
    return Path(os.path.expanduser("~"))


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "")
    # The XDG spec says relative values are invalid and must be ignored.
    return Path(value) if value.startswith("/") else home() / fallback


def state_dir() -> Path:
    if system():
        return system_state_dir()
    if is_macos():
        return home() / "Library" / "Application Support" / "schedgen"
    return _xdg("XDG_STATE_HOME", ".local/state") / "schedgen"


def data_dir() -> Path:
    if system():
        return system_state_dir()
    if is_macos():
        return home() / "Library" / "Application Support" / "schedgen"
    return _xdg("XDG_DATA_HOME", ".local/share") / "schedgen"


def private_tmp() -> Path:
    """schedgen's own temp folder (0700, the apply lock's in /tmp): files that hold what
    others must not read. A short path: Debian's crontab(1) cuts a FILE argument at 99
    bytes, so the user's state dir (as deep as $HOME) will not do for the crontab's."""
    return Path(_temp_root()) / f"schedgen-{os.getuid()}"


def _temp_root() -> str:
    """tempfile.gettempdir()'s choice ($TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp, the
    current folder: the first one usable), asked of access(2): gettempdir creates and
    removes a file to find out, and importing tempfile costs as much again."""
    for var in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(var)
        if value and _usable(value):
            return os.path.abspath(value)
    for folder in ("/tmp", "/var/tmp", "/usr/tmp"):
        if _usable(folder):
            return folder
    return os.getcwd()


def _usable(folder: str) -> bool:
    return os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)


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
    """LaunchAgents of the user; in system scope, the machine's LaunchDaemons."""
    if system():
        return system_path("/Library/LaunchDaemons")
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
    return pause_dir(namespace) / job


_ENV = ("HOME", "XDG_STATE_HOME", "SCHEDGEN_SYSTEM_ROOT")  # all state_dir() depends on
_PAUSE_DIRS: dict[tuple[object, ...], Path] = {}


def pause_dir(namespace: str) -> Path:
    """The namespace's pause files' folder: asked for each job (status, every job file),
    so worked out once per scope, platform and environment."""
    key = (namespace, _SCOPE.get(), is_macos(), *map(os.environ.get, _ENV))
    folder = _PAUSE_DIRS.get(key)
    if folder is None:
        folder = _PAUSE_DIRS[key] = state_dir() / "paused" / namespace
    return folder


def open_above(path: Path) -> Path | None:
    """The first folder above `path` (links resolved: they are what the scheduler
    follows) that is not root's, or in which another account may rename: writable by
    another account and not sticky-and-root's (/tmp, where others cannot rename what is
    not theirs). None: every folder above is root's alone."""
    real = Path(os.path.realpath(path))
    for folder in real.parents:
        try:
            st = os.stat(folder)
        except FileNotFoundError:
            continue  # made by apply, root's
        others = st.st_mode & stat.S_IWOTH or (st.st_mode & stat.S_IWGRP and st.st_gid != 0)
        if st.st_uid != 0 or (others and not st.st_mode & stat.S_ISVTX):
            return folder
    return None
