"""The only place where apply changes the machine.

Targets call these methods for every write, removal and state-changing command.
`DryOps` has the same interface and changes nothing, so `apply --dry-run` walks
exactly the code path of a real apply. Reads always go to the real machine.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from schedgen.errors import SystemOpError
from schedgen.machine import spawn
from schedgen.machine.fs import Flushing, new_folder, put_in_place, rmdir_if_empty, stage, stage_new


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def message(self) -> str:
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return text[-1] if text else f"exit status {self.returncode}"


def find(program: str) -> str | None:
    """shutil.which(program), as it does it on POSIX: importing shutil (and the zlib, bz2
    and lzma it loads) cost every command about 2 ms, for this alone."""
    if os.path.dirname(program):
        return program if _runnable(program) else None
    path = os.environ.get("PATH", None)
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for folder in path.split(os.pathsep):
        if folder not in seen:
            seen.add(folder)
            name = os.path.join(folder, program)
            if _runnable(name):
                return name
    return None


def _runnable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name)


def which(program: str) -> str:
    found = find(program)
    if found is None:
        raise SystemOpError(f"{program} not found on PATH")
    return found


TIMEOUT = 60  # seconds a program is given to answer


def run(argv: list[str], input: bytes | None = None, detach: bool = False) -> Result:
    """Run a program; text is decoded so that any byte survives a round trip. `detach`: in
    a session of its own, so that a ^C at the terminal (sent to the whole foreground group)
    does not cut a change to the machine short; apply acts on it once the call is done."""
    path = which(argv[0])
    try:
        done = spawn.run(path, [path, *argv[1:]], input, TIMEOUT, new_session=detach)
    except spawn.Timeout:
        raise SystemOpError(f"{' '.join(argv)}: no answer after {TIMEOUT} seconds") from None
    except OSError as exc:
        raise SystemOpError(f"{' '.join(argv)}: {exc.strerror}") from None
    return Result(done.returncode, _decode(done.stdout), _decode(done.stderr))


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


# atomic_write's temporary file beside PATH: .<name>.<8 random characters>.tmp
_TEMP = re.compile(r"\.(.+)\.[A-Za-z0-9_]{8}\.tmp")


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


class Ops:
    """Files written are staged (whole, beside their path) and put in place together by
    `commit`: before any command that changes the machine runs (a crontab, plist or unit
    that makes them live), before a removal, and at the end of the apply. One flush of
    their data and one sync per folder, not an fsync per file (docs/performance.md)."""

    dry_run = False

    def __init__(self) -> None:
        self._temps: dict[str, dict[str, list[Path]]] = {}  # per folder: name -> temp files
        self._staged: dict[Path, str] = {}  # path -> its new content, not yet in place
        self._flushing: Flushing | None = None
        self._new: dict[str, str] = {}  # folder not there yet -> where its files are staged

    def write(self, path: Path, content: str, mode: int) -> None:
        data = content.encode("utf-8", "surrogateescape")
        try:
            staging = self._sweep(path)
            if staging is not None:
                earlier = self._staged.pop(path, None)
                if earlier is not None:  # written twice: the last content counts
                    _discard(earlier)
                tmp = stage_new(staging, path.name, data, mode)
                if self._flushing is not None:
                    self._flushing.rewritten(tmp)
            else:
                tmp = stage(path, data, mode)
                earlier = self._staged.pop(path, None)
        except OSError as exc:
            raise SystemOpError(f"cannot write {path}: {exc.strerror}") from None
        if earlier is not None and earlier != tmp:  # written twice: the last content counts
            _discard(earlier)
        self._staged[path] = tmp

    def flush_early(self) -> None:
        """Start flushing the files staged so far, in parallel: the step that commits them
        (a crontab's, after reading it again; a plist's) is next."""
        if self._flushing is None and self._staged:
            self._flushing = Flushing(self._staged.values())

    def commit(self) -> None:
        """The staged files durable and in place (a no-op when none is staged)."""
        staged, self._staged = self._staged, {}
        new, self._new = self._new, {}
        for folder in new:
            self._temps[folder] = {}  # in place after this: a file written later goes beside
        flushing, self._flushing = self._flushing, None
        durable = flushing.wait() if flushing is not None else frozenset()
        if not staged and not new:
            return
        try:
            put_in_place(staged, durable, new)
        except OSError as exc:
            for tmp in staged.values():
                _discard(tmp)  # those not renamed yet
            for staging in new.values():
                rmdir_if_empty(staging)
            where = f" {exc.filename}" if exc.filename else ""
            raise SystemOpError(f"cannot put the files written in place{where}: "
                                f"{exc.strerror}") from None

    def _sweep(self, path: Path) -> str | None:
        """Remove what an earlier apply, killed while writing this very file, left beside it
        (applies of a user take turns, so none is being written now). Only temp files of
        the name written: a shared folder's other temp files are not ours. The folder is
        listed once an apply, so this stays linear in the number of files. A folder that
        is not there is staged whole: the folder its files go to until commit."""
        folder, name = os.path.split(path)  # strings: a Path's parent and hash per file
        staging = self._new.get(folder)  # were most of this
        if staging is not None:
            return staging
        found = self._temps.get(folder)
        if found is None:
            found = self._temps[folder] = {}
            try:
                with os.scandir(folder or ".") as it:
                    for e in it:
                        m = _TEMP.fullmatch(e.name)
                        if m:
                            found.setdefault(m.group(1), []).append(Path(e.path))
            except FileNotFoundError:
                if folder and not os.path.lexists(folder):
                    del self._temps[folder]
                    staging = self._new[folder] = new_folder(folder, self._new.values())
                    return staging
            except OSError:
                pass
        for tmp in found.pop(name, ()):
            try:
                tmp.unlink()
            except OSError:
                pass  # another user's, or gone: left as it is
        return None

    def _settle(self, path: Path) -> None:
        """A folder staged whole (not there yet) put in place before anything else is done
        in it or to it."""
        if self._new:
            p = os.fspath(path)
            if any(p == f or p.startswith(f + os.sep) for f in self._new):
                self.commit()

    def remove(self, path: Path) -> None:
        self.commit()  # in order: a file written before is in place before one goes
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise SystemOpError(f"cannot remove {path}: {exc.strerror}") from None

    def mkdir(self, path: Path, mode: int = 0o700) -> None:
        self._settle(path)
        try:
            path.mkdir(parents=True, exist_ok=True, mode=mode)
        except OSError as exc:
            raise SystemOpError(f"cannot create {path}: {exc.strerror}") from None

    def chown(self, path: Path, uid: int, gid: int) -> None:
        self._settle(path)
        try:
            os.chown(path, uid, gid, follow_symlinks=False)
        except OSError as exc:
            raise SystemOpError(f"cannot give {path} to uid {uid}: {exc.strerror}") from None

    def give_tree(self, path: Path, old_uid: int, uid: int, gid: int) -> None:
        """`path` and what is in it that `old_uid` owns, given to uid:gid. The folder is
        the old account's: no link is followed (each entry changed as itself, through the
        folder's descriptor), and what it does not own (a hard link to another's file)
        is left as it is."""
        self._settle(path)
        try:
            os.chown(path, uid, gid, follow_symlinks=False)
            for _, dirs, files, fd in os.fwalk(path, follow_symlinks=False):
                for name in (*dirs, *files):
                    if os.stat(name, dir_fd=fd, follow_symlinks=False).st_uid == old_uid:
                        os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
        except OSError as exc:
            raise SystemOpError(f"cannot give {path} to uid {uid}: {exc.strerror}") from None

    def symlink(self, path: Path, target: Path) -> None:
        """`path` a link to `target`, put in place in one rename (whatever was there, a
        file or a link, is replaced; a folder is not)."""
        self._settle(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.link")
        try:
            tmp.unlink(missing_ok=True)
            os.symlink(target, tmp)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise SystemOpError(f"cannot link {path} to {target}: {exc.strerror}") from None

    def create_as(self, path: Path, mode: int, uid: int, gid: int) -> None:
        """An empty file made for an account, in a folder it owns: never through a link
        (one there, or any file, is left as it is)."""
        self._settle(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        except FileExistsError:
            return
        except OSError as exc:
            raise SystemOpError(f"cannot create {path}: {exc.strerror}") from None
        try:
            os.fchmod(fd, mode)
            os.fchown(fd, uid, gid)
        except OSError as exc:
            raise SystemOpError(f"cannot give {path} to uid {uid}: {exc.strerror}") from None
        finally:
            os.close(fd)

    def run(self, argv: list[str], input: bytes | None = None) -> Result:
        """A command that changes the machine (launchctl bootstrap, crontab FILE); the
        files written before it are durable and in place first."""
        self.commit()
        return run(argv, input, detach=True)


class DryOps(Ops):
    dry_run = True

    def flush_early(self) -> None:
        pass

    def commit(self) -> None:
        pass

    def write(self, path: Path, content: str, mode: int) -> None:
        pass

    def remove(self, path: Path) -> None:
        pass

    def mkdir(self, path: Path, mode: int = 0o700) -> None:
        pass

    def chown(self, path: Path, uid: int, gid: int) -> None:
        pass

    def give_tree(self, path: Path, old_uid: int, uid: int, gid: int) -> None:
        pass

    def symlink(self, path: Path, target: Path) -> None:
        pass

    def create_as(self, path: Path, mode: int, uid: int, gid: int) -> None:
        pass

    def run(self, argv: list[str], input: bytes | None = None) -> Result:
        which(argv[0])  # a dry run still says when the program is missing
        return Result(0, "", "")


def read_file(path: Path) -> tuple[str | None, int | None]:
    """Content (None if absent) and permission bits of an installed file."""
    try:
        fd = _open_quietly(path)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError
            mode = st.st_mode & 0o7777
            if stat.S_ISREG(st.st_mode):
                with open(fd, "rb", closefd=False) as f:
                    data = f.read()
            elif _null(st):  # a link to /dev/null (a masked systemd unit): empty, as ever
                data = b""
            else:  # a FIFO or a device: a read could never end
                raise SystemOpError(f"{path} is not a regular file (a FIFO, socket or device), "
                                    "where schedgen expects a file; move it away")
        finally:
            os.close(fd)
    except FileNotFoundError:
        return None, None
    except IsADirectoryError:
        raise SystemOpError(f"{path} is a directory, where schedgen expects a file") from None
    except OSError as exc:
        raise SystemOpError(f"cannot read {path}: {exc.strerror}") from None
    return data.decode("utf-8", "surrogateescape"), mode


_NOATIME = getattr(os, "O_NOATIME", 0)


def _null(st: os.stat_result) -> bool:
    if not stat.S_ISCHR(st.st_mode):
        return False
    try:
        return st.st_rdev == os.stat(os.devnull).st_rdev
    except OSError:
        return False


def _open_quietly(path: Path) -> int:
    """Opened for reading without updating its access time where the system allows it
    (Linux, the file's owner): the first read of each new file after an apply would
    otherwise write its inode again, a disk write per job file for a check that changes
    nothing."""
    # O_NONBLOCK: a FIFO in the file's place would block the open until a writer came
    # (a regular file's reads do not block either way)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if _NOATIME:
        try:
            return os.open(path, flags | _NOATIME)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EINVAL):
                raise
            # not the owner (EPERM), or a file system without the flag: an ordinary read
    return os.open(path, flags)
