"""`schedgen doctor` for systemd user timers: a user manager answers, and lingering keeps
the timers running while you are logged out."""

from __future__ import annotations

import getpass
import shutil

from schedgen import paths
from schedgen.doctor import Check, ok, problem, skipped, warning
from schedgen.machine.ops import run
from schedgen.targets.systemd import systemctl


def manager() -> Check:
    name = "systemd user manager"
    if shutil.which("systemctl") is None:
        return skipped(name, "systemctl not found (no systemd here)")
    r = run([*systemctl.systemctl(), "show", "--property=Version"])
    if not r.ok:
        return problem(name, f"no user manager answers ({r.message()})",
                       "run schedgen in your login session (XDG_RUNTIME_DIR set), or enable "
                       f"lingering: `loginctl enable-linger {getpass.getuser()}`")
    return ok(name, r.stdout.strip() or "answers")


def linger() -> Check:
    name = "linger"
    on = systemctl.lingering()
    user = getpass.getuser()
    if on is None:
        return warning(name, "loginctl cannot tell whether lingering is on",
                       f"`loginctl show-user {user} --property=Linger`")
    if not on:
        return problem(name, "lingering is off: systemd stops your user timers when you log "
                             "out, and they fire again only at your next login",
                       f"loginctl enable-linger {user}")
    return ok(name, "on: your timers run while you are logged out")


def checks(jobs: tuple[object, ...]) -> list[Check]:
    if jobs and paths.system():  # the system manager: no login session, no lingering
        return [manager()]
    return [manager(), linger()] if jobs else []
