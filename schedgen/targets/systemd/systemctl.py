"""Talking to the user's systemd manager: `systemctl --user` and `loginctl`.

Reads (`show`, lingering) never fail a plan: a host without systemctl, or without a
user manager to talk to ("Failed to connect to bus"), reports the state as unknown so
`diff` still works there; `apply` checks for the manager before it writes anything.
Nothing here ever stops a service: a run in progress always finishes.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from typing import NamedTuple

from schedgen.errors import SystemOpError
from schedgen.machine.ops import Ops, Result, run

NOT_ARMED = "timer not enabled and active in systemd"  # a plan's note

def systemctl() -> list[str]:
    """The user's manager; in system scope, the machine's (system units, as root)."""
    from schedgen import paths

    return ["systemctl"] if paths.system() else ["systemctl", "--user"]
PROPS = ("Id", "LoadState", "ActiveState", "SubState", "UnitFileState", "Result", "MainPID",
         "ExecMainStatus", "NextElapseUSecRealtime", "LastTriggerUSec")


class NoManager(SystemOpError):
    """No user manager answers: nothing can be loaded or started."""


class Unit(NamedTuple):
    id: str
    load: str  # loaded | not-found | ...
    active: str  # active | inactive | activating | failed | ...
    sub: str  # waiting | elapsed | start | dead | ...
    file_state: str  # enabled | disabled | "" (no unit file)
    result: str  # success | exit-code | ...
    pid: int | None  # the running process, if any
    exit_status: int | None  # ExecMainStatus of the last run
    next_elapse: datetime | None
    last_trigger: datetime | None

    @property
    def running(self) -> bool:
        return self.pid is not None

    @property
    def armed(self) -> bool:
        """A timer that is enabled and waiting to fire."""
        return self.file_state == "enabled" and self.active == "active"


MISSING = ("systemctl not found on PATH: this host does not run systemd, or PATH does not "
           "reach it. Target cron on such a host")


def unknown_words(cause: str) -> str:
    """Why the timers' state is unknown, what was and was not done (the cause says what
    to try)."""
    return (f"{cause.rstrip('.')}. The unit files in ~/.config/systemd/user were compared with "
            "the config, but the state of systemd timers (enabled, active, running) is unknown: "
            "nothing was started or changed.")


def available() -> bool:
    return shutil.which("systemctl") is not None


def _failed(what: str, r: Result) -> SystemOpError:
    msg = r.message()
    if "Failed to connect" in msg or "not been booted with systemd" in msg:
        return NoManager(f"{' '.join(systemctl())} {what}: no systemd user manager to talk to ({msg}). "
                         "Run schedgen in your login session (XDG_RUNTIME_DIR must be set), "
                         "or enable lingering: loginctl enable-linger")
    return SystemOpError(f"{' '.join(systemctl())} {what} failed: {msg}")


def check_manager() -> None:
    """Raise NoManager (exit 3) unless a user manager answers."""
    r = run([*systemctl(), "show", "--property=Version"])
    if not r.ok:
        raise _failed("show", r)


def show(units: list[str]) -> dict[str, Unit]:
    """The state of each unit (an unknown unit is LoadState=not-found, not an error)."""
    if not units:
        return {}
    r = run([*systemctl(), "--timestamp=unix", "show", f"--property={','.join(PROPS)}", "--",
             *units])
    if not r.ok:
        raise _failed("show", r)
    out: dict[str, Unit] = {}
    for block in r.stdout.split("\n\n"):
        p = dict(line.partition("=")[::2] for line in block.splitlines() if "=" in line)
        if not p.get("Id"):
            continue
        pid = _int(p.get("MainPID", ""))
        out[p["Id"]] = Unit(
            id=p["Id"], load=p.get("LoadState", ""), active=p.get("ActiveState", ""),
            sub=p.get("SubState", ""), file_state=p.get("UnitFileState", ""),
            result=p.get("Result", ""), pid=pid or None,
            exit_status=_int(p.get("ExecMainStatus", "")),
            next_elapse=_time(p.get("NextElapseUSecRealtime", "")),
            last_trigger=_time(p.get("LastTriggerUSec", "")))
    return out


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _time(text: str) -> datetime | None:
    """`@1764585600` (--timestamp=unix); empty, 'n/a' or 0 when unset."""
    if text.startswith("@") and text[1:].isdigit() and int(text[1:]) > 0:
        return datetime.fromtimestamp(int(text[1:]), UTC)
    return None


def daemon_reload(ops: Ops) -> None:
    r = ops.run([*systemctl(), "daemon-reload"])
    if not r.ok:
        raise _failed("daemon-reload", r)


def enable_now(ops: Ops, unit: str) -> None:
    r = ops.run([*systemctl(), "enable", "--now", unit])
    if not r.ok:
        raise _failed(f"enable --now {unit}", r)


def disable_now(ops: Ops, unit: str) -> None:
    """Disable and stop a timer; a unit whose file is already gone is only stopped."""
    r = ops.run([*systemctl(), "disable", "--now", unit])
    if r.ok:
        return
    if "does not exist" in r.message() or "not loaded" in r.message():
        r = ops.run([*systemctl(), "stop", unit])
        if r.ok or "not loaded" in r.message():
            return
    raise _failed(f"disable --now {unit}", r)


def lingering() -> bool | None:
    """Does the user's manager run without a login session? None: cannot tell."""
    if shutil.which("loginctl") is None:
        return None
    r = run(["loginctl", "show-user", str(os.getuid()), "--property=Linger", "--value"])
    if r.ok:
        return r.stdout.strip() == "yes"
    if "not logged in or lingering" in r.message():
        return False
    return None
