"""A real systemd user manager for the tests: `systemd --user` in a private mount namespace.

systemd runs as a user manager only on a machine booted with systemd (it checks for
/run/systemd/system). Inside `unshare -m` a tmpfs on /run/systemd gives it that
directory without touching the machine's own /run; XDG_RUNTIME_DIR and HOME point at a
temp folder, so its sockets and unit files are the test's. `systemctl` reaches it from
the same mount namespace: a two-line `systemctl` on the test's PATH enters it
(`nsenter -m`) and runs the real systemctl there.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.helpers import write_executable

SYSTEMD = "/usr/lib/systemd/systemd"
# The manager's own mount of /run/systemd, so that sd_booted() is true in its namespace.
_START = """set -e
[ -d /run/systemd ] || mkdir -p /run/systemd
mount -t tmpfs -o mode=0755 schedgen-test /run/systemd
mkdir -p /run/systemd/system
exec "$0" --user --log-target=console --log-level=notice
"""


def _die_with_parent() -> None:
    """SIGTERM to the manager when the test process ends, however it ends (the setting
    survives the execs of unshare, sh and systemd: none is set-user-ID)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Unavailable(Exception):
    """The manager cannot run here; the message says why."""


class UserManager:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.runtime = root / "run"
        self.log = root / "manager.log"
        self.proc: subprocess.Popen[bytes] | None = None
        # the real one: a test's PATH starts with guards and fakes
        self.systemctl = shutil.which("systemctl", path="/usr/bin:/bin") or "/usr/bin/systemctl"

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_RUNTIME_DIR": str(self.runtime),
                "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

    def start(self) -> None:
        for tool in ("unshare", "nsenter", "mount"):
            if shutil.which(tool) is None:
                raise Unavailable(f"{tool} is not installed (util-linux)")
        if not os.path.exists(SYSTEMD):
            raise Unavailable(f"{SYSTEMD} is not installed (Debian package systemd)")
        if os.geteuid() != 0:
            raise Unavailable("a private mount namespace for the manager needs root")
        self.home.mkdir(parents=True, exist_ok=True)
        self.runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                ["unshare", "-m", "--propagation", "private", "sh", "-c", _START, SYSTEMD],
                env=self.env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 20
        state = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            r = self.run("is-system-running", check=False)
            state = r.stdout.strip()
            if state in ("running", "degraded"):
                return
            time.sleep(0.1)
        self.stop()
        raise Unavailable(f"systemd --user did not come up (state {state!r}): "
                          f"{self.log.read_text(errors='replace')[-800:]}")

    def argv(self, *args: str) -> list[str]:
        assert self.proc is not None
        return ["nsenter", "-t", str(self.proc.pid), "-m", "--", self.systemctl, "--user", *args]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(self.argv(*args), env=self.env(), capture_output=True, text=True,
                           timeout=60)
        if check and r.returncode != 0:
            raise AssertionError(f"systemctl --user {' '.join(args)}: {r.stderr}{r.stdout}")
        return r

    def install_shim(self, bin_dir: Path) -> None:
        """`systemctl` on PATH: the real one, run in the manager's mount namespace."""
        assert self.proc is not None
        write_executable(bin_dir / "systemctl", (
            "#!/bin/sh\n"
            f"XDG_RUNTIME_DIR='{self.runtime}' HOME='{self.home}' "
            f"exec nsenter -t {self.proc.pid} -m -- '{self.systemctl}' \"$@\"\n"))

    def reset(self) -> None:
        """Between tests: every unit a test left stopped and gone, the home emptied."""
        units = self.home / ".config" / "systemd" / "user"
        names = [p.name for p in units.rglob("*") if p.suffix in (".timer", ".service")] \
            if units.is_dir() else []
        if names:
            self.run("stop", *sorted(set(names)), check=False)
        for child in self.home.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        self.run("daemon-reload", check=False)
        self.run("reset-failed", check=False)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None
