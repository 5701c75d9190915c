"""Run a program with its clock set to a chosen instant (libfaketime, preloaded).

libfaketime 0.9.10 (Debian's) keeps one semaphore for a program and all it starts:
the `faketime` command makes it, and a program preloaded without one makes its own and
passes it down (FAKETIME_SHARED); 0.9.10 has no switch to turn it off. Every program takes
it at its start and around each stat(). One killed while it holds it (a run's watchdog
kills a command just started, on a loaded machine) leaves it taken, and every later
program under it waits at its start for ever. Here the programs are given one whose
count is 2**30: each killed holder keeps one unit, the others never wait. (What it
guards, the start time the programs share and the 'i' tick counter, does not need more:
the clock here is an offset from the real one, the same for all; no 'i' ticks.)
FAKETIME_DISABLE_SHM=1 turns it off altogether in later versions.

- ``run(when, argv)``: the clock starts at ``when`` and ticks, given as an offset from
  the real clock (FAKETIME="+N"), so the program and everything it starts agree.
- ``run(when, argv, frozen=True)``: the clock stays at ``when``.

``when`` is an aware datetime, an epoch, or "YYYY-mm-dd HH:MM:SS" in the program's TZ (as
libfaketime reads it). Every run has a timeout: a program that does not end in time fails
the test with its stuck processes listed (pid, kernel wait channel, command line), and
all of them are killed, the ones holding the output pipes too.
"""

from __future__ import annotations

import atexit
import ctypes
import glob
import os
import signal
import struct
import subprocess
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

_CANDIDATES = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
               "/usr/local/lib/faketime/libfaketime.so.1")
LIBRARY = next((p for pat in _CANDIDATES for p in sorted(glob.glob(pat))), None)

When = datetime | int | float | str
WIDE = 2**30       # the semaphore's count: holders killed before they give it back
_made: dict[int, str] = {}   # pid -> FAKETIME_SHARED of the pair that process made


class ClockHang(AssertionError):
    """A program under the faked clock did not end within its timeout."""


def epoch(when: When, tz: str | None = None) -> float:
    if isinstance(when, datetime):
        if when.tzinfo is None:
            raise ValueError(f"{when!r}: give an aware datetime (the program's TZ is not ours)")
        return when.timestamp()
    if isinstance(when, str):
        naive = datetime.strptime(when, "%Y-%m-%d %H:%M:%S")
        return (naive.replace(tzinfo=ZoneInfo(tz.lstrip(":"))) if tz else naive).timestamp()
    return float(when)


def _local(t: float, tz: str | None) -> datetime:
    return datetime.fromtimestamp(t, ZoneInfo(tz.lstrip(":"))) if tz else datetime.fromtimestamp(t)


def faked_env(when: When, env: Mapping[str, str] | None = None, *,
              frozen: bool = False) -> dict[str, str]:
    """``env`` (default: ours) for a program started now to read ``when``."""
    if LIBRARY is None:
        raise RuntimeError("libfaketime.so.1 not found (Debian: apt-get install faketime)")
    out = dict(os.environ if env is None else env)
    out.update(FAKETIME_SHARED=_shared(), FAKETIME_DISABLE_SHM="1")
    out.pop("FAKETIME_FMT", None)
    if frozen:   # as local time: libfaketime 0.9.10 reads FAKETIME_FMT=%s an offset off
        out["FAKETIME"] = (when if isinstance(when, str) else
                           _local(epoch(when), out.get("TZ")).strftime("%Y-%m-%d %H:%M:%S"))
    else:        # computed last: the clock starts "now"
        out["FAKETIME"] = f"{epoch(when, out.get('TZ')) - time.time():+.6f}"
    preload = [p for p in out.get("LD_PRELOAD", "").split(":") if p and p != LIBRARY]
    out["LD_PRELOAD"] = ":".join([LIBRARY, *preload])
    return out


def _shared() -> str:
    """This process's semaphore (count WIDE) and segment, made once, gone at its exit."""
    pid = os.getpid()
    if pid not in _made:
        name = f"schedgen_tests_clock_{pid}"
        _unlink(name)                  # a dead process's of the same pid
        libc = ctypes.CDLL(None, use_errno=True)
        libc.sem_open.restype = ctypes.c_void_p
        libc.sem_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
        sem = libc.sem_open(f"/{name}".encode(), os.O_CREAT | os.O_EXCL, 0o600, WIDE)
        if not sem:
            raise OSError(ctypes.get_errno(), f"sem_open /{name}")
        libc.sem_close(ctypes.c_void_p(sem))
        # struct ft_shared_s: ticks, file_idx, then the start time's four timespecs,
        # unset (tv_nsec -1) so the first program to start sets them
        fd = os.open(f"/dev/shm/{name}", os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        os.write(fd, struct.pack("<QQ" + "qq" * 4, 0, 0, *[0, -1] * 4).ljust(4096, b"\0"))
        os.close(fd)
        atexit.register(_unlink, name)
        _made[pid] = f"/{name} /{name}"
    return _made[pid]


def _unlink(name: str) -> None:
    if os.getpid() == int(name.rpartition("_")[2]):
        for f in (f"/dev/shm/sem.{name}", f"/dev/shm/{name}"):
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass


def popen(when: When, argv: Sequence[str | Path], *, env: Mapping[str, str] | None = None,
          frozen: bool = False, **kwargs: Any) -> subprocess.Popen[Any]:
    """Start ``argv`` at ``when``; the caller ends it (start_new_session and kill_group)."""
    return subprocess.Popen(list(argv), env=faked_env(when, env, frozen=frozen), **kwargs)


def run(when: When, argv: Sequence[str | Path], *, env: Mapping[str, str] | None = None,
        frozen: bool = False, timeout: float = 60, input: str | bytes | None = None,
        check: bool = False, capture_output: bool = False,
        **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """Like subprocess.run at ``when``, in a session of its own, with a timeout always."""
    if capture_output:
        kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    kwargs.setdefault("start_new_session", True)
    p = popen(when, argv, env=env, frozen=frozen, **kwargs)
    try:
        out, err = p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        stuck = _describe(p.pid)
        _kill_session(p.pid)
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        raise ClockHang(f"{list(map(str, argv))} at {when!r} did not end within {timeout:g} s; "
                        f"its processes then (pid, wait channel, command):\n{stuck}") from None
    if check and p.returncode:
        raise subprocess.CalledProcessError(p.returncode, p.args, out, err)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _session(sid: int) -> list[int]:
    pids = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(d.name))
    return pids


def _describe(sid: int) -> str:
    lines = []
    for pid in _session(sid) or [sid]:
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        lines.append(f"  {pid} {wchan} {cmd.strip()}")
    return "\n".join(lines) or "  (none left)"


def _kill_session(sid: int) -> None:
    for pid in [sid, *_session(sid)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
