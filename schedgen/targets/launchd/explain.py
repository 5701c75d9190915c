"""What launchctl's error numbers and a job's last exit status mean, and what to do.

launchctl prints "<Verb> failed: N: <strerror>" (launchctl(1); the numbers are errno
values, or launchd's own from 100 up). The causes are those public reports found for
each (github.com/psimaker/vaultsync/issues/89: an SSH session without a login at the
screen; github.com/tomcounsell/ai/issues/2013: a label still loaded or being torn down).
"""

from __future__ import annotations

import os
import re
import signal

_CODE = re.compile(r"failed: (\d+):")


def _uid() -> int:
    return os.getuid()


def launchctl_error(code: int, label: str, plist: str) -> tuple[str, str]:
    """(what it means, what to do) for launchctl's error number `code`."""
    d = f"gui/{_uid()}"
    again = f"launchctl bootout {d}/{label}; schedgen apply"
    table = {
        5: ("Input/output error: launchd would not load the plist. The usual causes: the "
            "job is still loaded (or was unloaded a moment ago); the plist is not valid or "
            "is writable by others; or this session cannot reach the gui domain (logged in "
            "over SSH while nobody is logged in at the Mac's screen)",
            f"run `schedgen doctor {label.rsplit('.', 1)[-1]}`; then `plutil -lint {plist}`; "
            f"`{again}`; over SSH, log in at the Mac's screen (or Screen Sharing) first"),
        17: ("File exists: the job is already loaded", f"`{again}`"),
        37: ("Operation already in progress: launchd is still loading or unloading the job",
             "wait a few seconds, then run `schedgen apply` again"),
        1: ("Operation not permitted: this user may not change that domain (a sudo "
            "bootstrap into another user's gui domain, or a plist owned by someone else)",
            f"run schedgen as the user who owns {plist}, without sudo"),
        113: ("Could not find specified service: the job is not loaded", "`schedgen apply`"),
        119: ("Service is disabled: the job was switched off (launchctl disable, or "
              "Allow in the Background switched off in Login Items)",
              f"System Settings → General → Login Items & Extensions → Allow in the "
              f"Background: switch the item on; then `launchctl enable {d}/{label}` and "
              "`schedgen apply`"),
        122: ("Path had bad ownership/permissions: launchd loads a user's agent only from "
              "a plist the user owns and nobody else may write",
              f"chmod 644 {plist}; chown $(id -un) {plist}; `schedgen apply`"),
        125: ("Domain does not support specified action: the job was sent to a domain "
              "that cannot load agents (system as a user, or user/ instead of gui/)",
              f"load it in {d}: `schedgen apply` as the logged-in user, without sudo"),
        78: ("Function not implemented: launchd refused the plist's settings",
             f"`plutil -lint {plist}`; `schedgen apply --force`"),
    }
    return table.get(code, (f"error {code}", f"`launchctl error {code}` says more"))


def code_of(text: str) -> int | None:
    m = _CODE.search(text)
    return int(m.group(1)) if m else None


def exit_meaning(code: int) -> tuple[str, str]:
    """(meaning, remedy) of a job's last exit status as launchd records it."""
    if code == 0:
        return "success", ""
    if code < 0 or code > 128:
        n = -code if code < 0 else code - 128
        try:
            name = signal.Signals(n).name
        except ValueError:
            name = f"signal {n}"
        return (f"killed by {name}",
                "a timeout (124 is schedgen's own), a logout, or launchd's "
                "ExitTimeOut; see the job's log (`schedgen logs JOB --stderr`)")
    table = {
        75: ("the lock was busy (busy_exit): the previous run was still going",
             "normal now and then; if every run says so, see `schedgen status` for the lock"),
        78: ("a precondition failed (EX_CONFIG): env file, working dir, program, log or "
             "lock dir", "`schedgen run JOB --smoke` says which"),
        124: ("the run timed out", "raise `timeout`, or see why it hangs: `schedgen logs JOB`"),
        126: ("the program could not be executed: not executable, or quarantined",
              "`schedgen doctor JOB` checks both"),
        127: ("command not found on the job's PATH",
              "add its folder to `path` in jobs.toml (Homebrew: /opt/homebrew/bin)"),
        74: ("the run's records or an item could not be written or moved (EX_IOERR)",
             "a full disk, or a folder it may not write: `schedgen logs JOB --stderr`"),
    }
    return table.get(code, (f"the command's own status {code}",
                            "`schedgen logs JOB --stderr` shows what it said"))
