"""`schedgen doctor` for cron jobs: a cron daemon runs, and this user may have a crontab.

`ROOT` is the file system root the checks read (/proc, /etc): tests point it elsewhere."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from schedgen import paths
from schedgen.doctor import Check, ok, problem, warning

ROOT = Path("/")
# The daemons' process names: Debian's cron, cronie's crond (also busybox's applet), fcron.
DAEMONS = ("cron", "crond", "fcron")


def daemon_running(root: Path | None = None) -> Check:
    name = "cron daemon"
    if root is None and paths.is_macos():
        return ok(name, "macOS's launchd starts cron (com.vix.cron) whenever a crontab exists")
    proc = (root or ROOT) / "proc"
    if not proc.is_dir():
        return warning(name, f"{proc} cannot be read: whether cron runs is unknown",
                       "check that your cron daemon runs (`pgrep -l cron`)")
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            comm = (d / "comm").read_text(encoding="utf-8", errors="replace").strip()
            if comm in DAEMONS or (comm == "busybox"
                                   and b"crond" in (d / "cmdline").read_bytes()):
                return ok(name, f"{comm} is running (pid {d.name})")
        except OSError:
            continue
    return problem(name, "no cron daemon is running: the crontab is installed but nothing "
                         "reads it, so no job fires",
                   "start it and have it start at boot: `sudo systemctl enable --now cron` "
                   "(Debian, Ubuntu) or `sudo systemctl enable --now crond` (Fedora, RHEL)")


def _names(f: Path) -> set[str]:
    return {line.strip() for line in f.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


def allowed(user: str | None = None, root: Path | None = None) -> Check:
    """crontab(1): with cron.allow, only users listed there; else not those in cron.deny."""
    name = "crontab allowed"
    user = user or getpass.getuser()
    etc = (root or ROOT) / "etc"
    allow, deny = etc / "cron.allow", etc / "cron.deny"
    try:
        if allow.exists():
            if user in _names(allow):
                return ok(name, f"{user} is in {allow}")
            return problem(name, f"{allow} exists and does not list {user}: `crontab` refuses "
                                 "you, so apply cannot install the jobs",
                           f"ask an administrator to add {user} to {allow}")
        if deny.exists() and user in _names(deny):
            return problem(name, f"{user} is in {deny}: `crontab` refuses you",
                           f"ask an administrator to remove {user} from {deny}")
    except OSError as exc:
        return warning(name, f"cannot read {exc.filename}: {exc.strerror}",
                       "`crontab -l` tells whether you may use cron")
    return ok(name, f"{user} may use crontab (no {allow.name}; not in {deny.name})")


def checks(jobs: tuple[object, ...]) -> list[Check]:
    if not jobs:
        return []
    if paths.system():  # /etc/cron.d is read whoever is in cron.allow or cron.deny
        return [daemon_running()]
    return [daemon_running(), allowed(os.environ.get("LOGNAME") or None)]
