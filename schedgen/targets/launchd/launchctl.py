"""Talking to launchd with the current verbs: bootout, bootstrap, enable, list.

The deprecated `load`/`unload` are never used. Known failures are handled the way
macOS reports them (docs/design.md, "Known traps"):
- bootout of a service that is not loaded: "3: No such process" (113 "Could not find
  specified service" on newer macOS): fine, it is what we wanted.
- bootstrap "5: Input/output error": still loaded, or too soon after a bootout: retry.
- bootstrap "119: Service is disabled": `enable`, then bootstrap.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import NamedTuple

from schedgen.errors import SystemOpError
from schedgen.machine.ops import Ops, Result, run

UNLOADED_NOTE = "not loaded in launchd"  # a plan's note: the plist is there, launchd has it not

NOT_LOADED = (3, 113)
BUSY = 5
DISABLED = 119
RETRY_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)  # seconds between bootstrap attempts on error 5
_CODE = re.compile(r"failed: (\d+):")


class Service(NamedTuple):
    label: str
    pid: int | None  # running now
    last_exit: int | None  # last exit status (negative: killed by that signal)


MISSING = "launchctl not found on PATH (launchd runs on macOS only)"


def unknown_words(cause: str) -> str:
    """Why launchd's state is unknown, what was and was not done, what to try."""
    return (f"{cause}. The plists in ~/Library/LaunchAgents were compared with the config, "
            "but whether launchd has the jobs loaded or running is unknown: nothing was loaded "
            "or changed. Run schedgen on the Mac the jobs are for, or give them a target this "
            "host runs (cron or systemd) in jobs.toml.")


def domain() -> str:
    """The user's login session; in system scope, the machine's (LaunchDaemons, as root)."""
    from schedgen import paths

    return "system" if paths.system() else f"gui/{os.getuid()}"


def listing(unknown_ok: bool = False) -> dict[str, Service] | None:
    """`launchctl list`: a header `PID Status Label`, then one row per loaded service.

    None with `unknown_ok` when there is no launchctl at all (review on another OS)."""
    if shutil.which("launchctl") is None:
        if unknown_ok:
            return None
        raise SystemOpError(f"{MISSING}: the launchd jobs cannot be loaded here, so nothing "
                            "was written or loaded. Apply on the Mac the jobs are for, or give "
                            "them a target this host runs (cron or systemd) in jobs.toml.")
    r = run(["launchctl", "list"])
    if not r.ok:
        raise SystemOpError(f"launchctl list failed: {r.message()}")
    out: dict[str, Service] = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) != 3 or parts[0] == "PID":
            continue
        pid, status, label = parts
        out[label] = Service(label, _int(pid), _int(status))
    return out


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None  # "-": not running / no status yet


def code(r: Result) -> int:
    """launchctl's error number: from "...failed: N: ..." if printed, else the exit status."""
    m = _CODE.search(r.stderr) or _CODE.search(r.stdout)
    return int(m.group(1)) if m else r.returncode


def bootout(ops: Ops, label: str) -> None:
    r = ops.run(["launchctl", "bootout", f"{domain()}/{label}"])
    if not r.ok and code(r) not in NOT_LOADED:
        raise SystemOpError(f"launchctl bootout {domain()}/{label} failed: {r.message()}")


def bootstrap(ops: Ops, label: str, plist: Path) -> None:
    enabled = False
    delays = list(RETRY_DELAYS)
    while True:
        r = ops.run(["launchctl", "bootstrap", domain(), str(plist)])
        if r.ok:
            if not ops.dry_run:
                from schedgen.targets.launchd import memory

                memory.loaded(label)
            return
        n = code(r)
        if n == DISABLED and not enabled:
            enable(ops, label)
            enabled = True
            continue
        if n == BUSY and delays:
            time.sleep(delays.pop(0))
            continue
        tried = "" if n != BUSY else f" (tried {len(RETRY_DELAYS) + 1} times)"
        from schedgen.targets.launchd import explain, memory

        memory.refused(label, r.message())
        means, todo = explain.launchctl_error(n, label, str(plist))
        raise SystemOpError(f"launchctl bootstrap {domain()} {plist} failed{tried}: {r.message()}"
                            f"\n  means: {means}\n  do: {todo}")


def enable(ops: Ops, label: str) -> None:
    r = ops.run(["launchctl", "enable", f"{domain()}/{label}"])
    if not r.ok:
        raise SystemOpError(f"launchctl enable {domain()}/{label} failed: {r.message()}")


def reload(ops: Ops, label: str, plist: Path) -> None:
    """Bootout (not loaded is fine), then bootstrap the plist."""
    bootout(ops, label)
    bootstrap(ops, label, plist)
