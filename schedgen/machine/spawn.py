"""A program run and its output read, with posix_spawn(3): what `subprocess` did here.

Importing subprocess (and the threading, selectors, locale and signal it loads) was
about 3 ms of every apply, diff and status, which run crontab(1), launchctl or
systemctl a few times and need none of the rest. What it did for them is kept: the
program's stdout and stderr read together (no deadlock on a full pipe), its input
written as it reads, SIGPIPE and SIGXFSZ back to their defaults in it (Python ignores
them), no descriptor of schedgen's left open in it (Python opens them close-on-exec; the
ones schedgen was given open are closed in it), a session of its own on request, its
exit waited for by a pidfd where there is one, and a program that does not finish in
time killed. Where posix_spawn is missing, or the
open descriptors cannot be listed, subprocess does it.
"""

from __future__ import annotations

import os
import select
import signal
import time
from typing import NamedTuple


class Finished(NamedTuple):
    returncode: int  # negative: killed by that signal, as subprocess says it
    stdout: bytes
    stderr: bytes


class Timeout(Exception):
    """The program did not finish in time; it was killed."""


_SIGNALS = tuple(s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None))
                 if s is not None)
_CHUNK = 65536


def run(path: str, argv: list[str], input: bytes | None, timeout: float,
        new_session: bool = False) -> Finished:
    """Run ``path`` with ``argv``; stdin is schedgen's own unless ``input`` is given."""
    _reapable()
    if not hasattr(os, "posix_spawn"):
        return _with_subprocess(path, argv, input, timeout, new_session)
    deadline = time.monotonic() + timeout
    ours: list[int] = []  # the pipe ends this process keeps
    theirs: list[int] = []  # the ends the program gets, closed here once it has them
    try:
        out_r, out_w = os.pipe()
        ours.append(out_r)
        theirs.append(out_w)
        err_r, err_w = os.pipe()
        ours.append(err_r)
        theirs.append(err_w)
        actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, out_w, 1),
                                          (os.POSIX_SPAWN_DUP2, err_w, 2)]
        in_w = -1
        if input is not None:
            in_r, in_w = os.pipe()
            ours.append(in_w)
            theirs.append(in_r)
            actions.append((os.POSIX_SPAWN_DUP2, in_r, 0))
        inherited = _inherited(ours + theirs)
        if inherited is None:
            return _with_subprocess(path, argv, input, timeout, new_session)
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
        try:
            pid = os.posix_spawn(path, argv, os.environ, file_actions=actions,
                                 setsigdef=_SIGNALS, setsid=new_session)
        except (NotImplementedError, ValueError):
            # no POSIX_SPAWN_SETSID here; or an environment entry os.posix_spawn refuses
            # (one of no name, "=x", which the program is given all the same by exec)
            return _with_subprocess(path, argv, input, timeout, new_session)
        for fd in theirs:
            os.close(fd)
        theirs.clear()
        try:
            out, err = _communicate(out_r, err_r, in_w, input, deadline, ours)
            status = _wait(pid, deadline)
        except Timeout:
            _close(ours)
            _kill(pid)
            raise
        except BaseException:
            # As subprocess: its output no longer read, the program is waited for, not
            # killed (a change to the machine it makes is not cut short); but no longer
            # than its time, as without the interruption.
            _close(ours)
            try:
                _wait(pid, deadline)
            except Timeout:
                _kill(pid)
            raise
        return Finished(os.waitstatus_to_exitcode(status), out, err)
    finally:
        _close(ours + theirs)


def _reapable() -> None:
    """Programs whose exit can be waited for. SIGCHLD ignored (so given by a parent: exec
    keeps it) has the kernel reap them at once, their exit status lost; subprocess then
    said 0, here waitpid failed (ECHILD) and every program run was an error."""
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        except ValueError:
            pass  # not the main thread: an exit not found is taken for 0, as subprocess does


def _inherited(own: list[int]) -> list[int] | None:
    """The descriptors above stderr that a program would inherit: the ones schedgen was
    given open by its own parent (its pipes and files are close-on-exec), to close in the
    program as subprocess does. None: they cannot be listed here."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        fds = []
        for name in names:
            fd = int(name)
            if fd > 2 and fd not in own:
                try:
                    if os.get_inheritable(fd):
                        fds.append(fd)
                except OSError:
                    pass  # the listing's own, closed since
        return fds
    return None


def _drop(fds: list[int], fd: int) -> None:
    fds.remove(fd)
    os.close(fd)


def _close(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass  # closed on the way already
    fds.clear()


def _communicate(out_r: int, err_r: int, in_w: int, data: bytes | None,
                 deadline: float, ours: list[int]) -> tuple[bytes, bytes]:
    """Both outputs to their end, the input written meanwhile (its pipe closed, and
    taken out of ``ours``, once written: the program reads its end)."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poll = select.poll()
    poll.register(out_r, select.POLLIN)
    poll.register(err_r, select.POLLIN)
    view = memoryview(data or b"")
    if in_w >= 0:
        if view:
            os.set_blocking(in_w, False)
            poll.register(in_w, select.POLLOUT)
        else:
            _drop(ours, in_w)
            in_w = -1
    open_fds = 2 + (in_w >= 0)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout
        for fd, events in poll.poll(int(left * 1000) + 1):
            if fd == in_w:
                try:
                    view = view[os.write(in_w, view[:_CHUNK]):]
                except BrokenPipeError:
                    view = view[:0]  # it stopped reading: the rest is not wanted
                except BlockingIOError:
                    continue
                if not view:
                    poll.unregister(in_w)
                    _drop(ours, in_w)
                    in_w = -1
                    open_fds -= 1
                continue
            piece = os.read(fd, _CHUNK) if events & (select.POLLIN | select.POLLHUP) else b""
            if piece:
                chunks[fd].append(piece)
            else:
                poll.unregister(fd)
                open_fds -= 1
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _wait(pid: int, deadline: float) -> int:
    """Its wait status, once it has exited (it may outlive the end of its output); 0
    where it was reaped already, by no one here (SIGCHLD ignored), as subprocess says."""
    try:
        return _waited(pid, deadline)
    except ChildProcessError:
        return 0


def _waited(pid: int, deadline: float) -> int:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        return status
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = -1
    try:
        delay = 0.0005
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout
            if fd >= 0:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                poller.poll(int(left * 1000) + 1)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
    finally:
        if fd >= 0:
            os.close(fd)


def _kill(pid: int) -> None:
    """Out of time: killed and reaped, no zombie left."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass  # reaped already


def start_quiet(path: str, argv: list[str]) -> int | None:
    """Start a program that reads nothing and whose words are not wanted (stdin, stdout
    and stderr /dev/null), to wait for later with `status`; None: it could not start."""
    if not hasattr(os, "posix_spawn"):
        return None
    _reapable()
    inherited = _inherited([])
    if inherited is None:
        return None
    null = os.devnull
    actions: list[tuple[int | str, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
        *((os.POSIX_SPAWN_CLOSE, fd) for fd in inherited)]
    try:
        return os.posix_spawn(path, argv, os.environ, file_actions=actions, setsigdef=_SIGNALS)
    except (OSError, ValueError):  # ValueError: an environment entry of no name ("=x")
        return None


def status(pid: int) -> int:
    """The exit status of a program `start_quiet` started, once it has ended."""
    try:
        _, st = os.waitpid(pid, 0)
    except ChildProcessError:
        return -1  # reaped elsewhere: nothing known of how it ended
    return os.waitstatus_to_exitcode(st)


def _with_subprocess(path: str, argv: list[str], input: bytes | None, timeout: float,
                     new_session: bool) -> Finished:
    import subprocess

    with subprocess.Popen([path, *argv[1:]], stdin=None if input is None else subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=new_session) as p:
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise Timeout from None
    return Finished(p.returncode, out, err)
