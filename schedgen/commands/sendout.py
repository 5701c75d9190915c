"""One run of a notify command (or sendmail, or curl), bounded as a whole and judged by its own exit status.

The command runs in a session of its own, its input and output in files, never pipes:
a child it leaves behind (`sleep 300 &`, or one that escaped with `setsid`) can hold a
pipe open for as long as it likes, and waiting for the end of that pipe would wait for
the child. So only the command itself is waited for, at most TIME_LIMIT seconds; then
whatever is left of its process group is killed, and so is anything that left the group
(found by a token in its environment, where /proc shows environments).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

TIME_LIMIT = 30  # seconds a notify command may take
TOKEN = "SCHEDGEN_NOTIFY_TOKEN"


class Sent(NamedTuple):
    ok: bool
    detail: str


def run_bounded(argv: list[str], env: dict[str, str], text: str, cwd: str | None,
                limit: float = TIME_LIMIT, what: str = "notify command") -> Sent:
    token = secrets.token_hex(8)
    env = {**env, TOKEN: token}
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out:
        stdin.write(text.encode("utf-8", "surrogateescape"))
        stdin.seek(0)
        try:
            proc = subprocess.Popen(argv, env=env, stdin=stdin, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, cwd=cwd)
        except OSError as exc:
            return Sent(False, f"cannot run the {what}: {exc.strerror}")
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            code = None
        _end(proc.pid, token)
        if code is None:
            proc.wait()
            return Sent(False, f"{what} killed after {limit:g}s")
        if code != 0:
            out.seek(0)
            tail = out.read()[-4096:].decode(errors="replace").strip().splitlines()[-1:] or [""]
            return Sent(False, f"{what} exit {code}: {tail[0][:200]}")
    return Sent(True, "sent")


def _end(pgid: int, token: str) -> None:
    """Kill what is left of the command: its process group, then what escaped it."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(5):  # one may fork while the others are being killed
        found = escaped(token)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def escaped(token: str) -> list[int]:
    """Processes of this user whose environment carries the token (Linux; [] elsewhere)."""
    mark = f"{TOKEN}={token}\0".encode()
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            data = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue  # gone, or another user's
        if mark in data:
            found.append(int(name))
    return found
