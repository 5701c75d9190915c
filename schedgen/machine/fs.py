"""Atomic file writes: a temp file in the same directory, then os.replace.

`atomic_write` makes one file durable on its own (an fsync, then the rename). Apply
writes many files at once and stages them instead (`stage`, then `put_in_place`): the
data of all of them is flushed in one go, then each is renamed in place, then each
folder is synced once (docs/performance.md argues the choice).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from schedgen import sha
from schedgen.machine import spawn

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)


def stage(path: Path, content: str | bytes, mode: int = 0o644) -> str:
    """The content in a temp file beside `path` (its name: .<name>.<8 chars>.tmp), not
    yet flushed nor in place. Its path as text: a Path made per staged file (and its
    parent) was a third of staging's own time."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    folder, name = os.path.split(path)
    try:
        fd, tmp = _create_in(folder, f".{name}.", ".tmp", mode)
    except FileNotFoundError:  # the folder first (asked only when missing: a mkdir per file
        path.parent.mkdir(parents=True, exist_ok=True)  # was a syscall per job)
        fd, tmp = _create_in(folder, f".{name}.", ".tmp", mode)
    _fill(fd, tmp, data)
    return tmp


def _fill(fd: int, tmp: str, data: bytes) -> None:
    """`data` written to the new file `tmp` open as `fd`, closed; removed if that fails."""
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except BaseException:
        _unlink(tmp)
        raise


def create(folder: Path, prefix: str, suffix: str, mode: int) -> tuple[int, Path]:
    """A new file of `mode`, open for writing, named prefix + 8 random characters + suffix
    (as tempfile.mkstemp, without the module at start-up, and its mode set on the open
    file rather than by a chmod of its path)."""
    fd, tmp = _create_in(str(folder), prefix, suffix, mode)
    return fd, Path(tmp)


def _create_in(folder: str, prefix: str, suffix: str, mode: int) -> tuple[int, str]:
    """create(), in a folder given as text, the file's path as text."""
    for _ in range(100):
        tmp = os.path.join(folder, f"{prefix}{os.urandom(4).hex()}{suffix}")
        try:
            return _open_new(tmp, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def _open_new(path: str, mode: int) -> int:
    """`path` created (never through a link, never over a file) with its mode, open."""
    fd = os.open(path, _NEW, mode)
    try:
        os.fchmod(fd, mode)  # the umask may have taken bits the file must have
    except BaseException:
        os.close(fd)
        _unlink(path)
        raise
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def atomic_write(path: Path, content: str | bytes, mode: int = 0o644) -> None:
    tmp = stage(path, content, mode)
    try:
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def put_in_place(staged: dict[Path, str], durable: frozenset[str] = frozenset(),
                 new: dict[str, str] | None = None) -> None:
    """Staged files (path -> temp file) made durable and renamed in place: after it
    returns, a crash leaves each path with its new content, whole; before, the old one or
    (where the rename was not yet durable) no file or the new one, never a part.
    ``durable``: temp files whose data a flush (`Flushing`) has put on disk already.
    ``new``: folders that were not there (folder -> the folder their files were staged
    in, under their own names, by `new_folder`): each comes in place whole, in one
    rename, not one per file (a first install's 200 renames were 4 ms)."""
    new = new or {}
    pending = [t for t in staged.values() if t not in durable]
    whole_fs = sync_files(pending)
    inside = set(new.values())
    # a staging folder whose entries no syncfs wrote (a file of it fsynced alone)
    unsynced = set() if whole_fs else {os.path.dirname(t) for t in pending} & inside
    synced: list[str] = []
    for path, tmp in staged.items():
        if os.path.dirname(tmp) not in inside:
            os.replace(tmp, path)
            synced.append(os.path.dirname(path) or ".")
    for folder, staging in new.items():
        if staging in unsynced:
            sync_dirs([staging])
        try:
            os.rename(staging, folder)  # fails where the folder came meanwhile
        except OSError:
            for name in os.listdir(staging):
                os.replace(os.path.join(staging, name), os.path.join(folder, name))
            rmdir_if_empty(staging)
            synced.append(folder)
        synced.append(os.path.dirname(folder) or ".")
    sync_dirs(list(dict.fromkeys(synced)))


def new_folder(folder: str, in_use: Iterable[str] = ()) -> str:
    """A folder to stage files in for `folder`, which is not there: beside it, named
    .<name>.<8 random characters>.tmp, made as a mkdir of the folder would make it (its
    parents first). Those that applies killed before their commit left are removed first
    (applies of a user take turns: none is in use but ``in_use``, this apply's own, which
    a folder named two ways, through a link, finds as well)."""
    parent, name = os.path.split(folder)
    if parent:
        os.makedirs(parent, exist_ok=True)
    sweep_new_folders(folder, in_use)
    for _ in range(100):
        staging = os.path.join(parent, f".{name}.{os.urandom(4).hex()}.tmp")
        try:
            os.mkdir(staging)
        except FileExistsError:
            continue
        return staging
    raise FileExistsError(f"no free temporary name in {parent}")


def sweep_new_folders(folder: str, in_use: Iterable[str] = ()) -> None:
    """Remove the staging folders `new_folder` made for `folder` that are left over:
    this account's, holding only files, none of ``in_use``."""
    parent, name = os.path.split(folder)
    try:
        entries = list(os.scandir(parent or "."))
    except OSError:
        return
    uid = os.geteuid()
    kept: set[tuple[int, int]] | None = None
    for e in entries:
        if not (e.name.startswith(f".{name}.") and _STAGING.fullmatch(e.name[len(name) + 2:])):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not e.is_dir(follow_symlinks=False) or st.st_uid != uid:
                continue
            if kept is None:  # asked only when there is something to sweep
                kept = set()
                for used in in_use:
                    try:
                        u = os.stat(used)
                        kept.add((u.st_dev, u.st_ino))
                    except OSError:
                        pass
            if (st.st_dev, st.st_ino) in kept:
                continue
            for f in os.scandir(e.path):
                if not f.is_dir(follow_symlinks=False):
                    os.unlink(f.path)
            os.rmdir(e.path)
        except OSError:
            pass  # left as it is: not only ours, or gone meanwhile


_STAGING = re.compile(r"[0-9a-f]{8}\.tmp")


def stage_new(staging: str, name: str, content: bytes, mode: int) -> str:
    """The content under its own name in a staging folder (`new_folder`; one staged there
    before under that name, removed first)."""
    tmp = os.path.join(staging, name)
    _fill(_open_new(tmp, mode), tmp, content)
    return tmp


def rmdir_if_empty(path: str) -> None:
    """A staging folder left empty, removed."""
    try:
        os.rmdir(path)
    except OSError:
        pass  # not empty, or gone: left as it is


def _folders(files: Iterable[str | Path]) -> list[str]:
    """The folders the files are in, each once, in order (as text: a Path's parent made
    and hashed per file cost more than the rest of this)."""
    return list(dict.fromkeys(os.path.dirname(f) or "." for f in files))


# Up to this many files, an fsync of each: fewer journal commits than that cost less than
# a syncfs, which also waits for whatever else is dirty on the file system.
FSYNC_EACH_UP_TO = 4


def sync_files(files: Iterable[str | Path]) -> bool:
    """Their data on disk. Linux, more than a few files: one syncfs(2) per file system
    they are on (one journal commit, not one per file); otherwise, or if syncfs fails, an
    fsync of each. True: none, or by syncfs (the folders' entries went to disk too)."""
    files = list(files)
    if not files:
        return True
    if (len(files) > FSYNC_EACH_UP_TO and sys.platform.startswith("linux")
            and _syncfs_all(files)):
        return True
    for f in files:
        _fsync(f)
    return False


# coreutils' sync(1), where the system keeps it (not the user's PATH: this is no command of
# theirs); `--file-system` is syncfs(2) on the file system of each file named.
SYNC = ("/usr/bin/sync", "/bin/sync")


class Flushing:
    """The data of staged files on its way to disk while apply goes on (the next command
    comes after a read or two of the crontab, or a plist's write): syncfs(2) by a `sync
    --file-system` of its own, in parallel. `wait` tells which files it made durable;
    any it did not (a `sync` without the option, a failure) are flushed at commit as
    ever. Only where `sync_files` would use syncfs: Linux, more than a few files."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = set(files)
        self._pid: int | None = None
        if len(self.files) <= FSYNC_EACH_UP_TO or not sys.platform.startswith("linux"):
            return
        program = next((p for p in SYNC if os.access(p, os.X_OK)), None)
        if program is None:
            return
        folders = []
        seen: set[int] = set()
        for folder in _folders(self.files):
            try:
                dev = os.stat(folder).st_dev
            except OSError:
                return  # found at commit, as it would be without this
            if dev not in seen:
                seen.add(dev)
                folders.append(folder)
        self._pid = spawn.start_quiet(program, [program, "--file-system", "--", *folders])

    def rewritten(self, tmp: str) -> None:
        """`tmp` holds other content now (a file written twice, staged under its own name
        in a new folder): this flush does not make that durable."""
        self.files.discard(tmp)

    def wait(self) -> frozenset[str]:
        """Once the flush has ended: the files it made durable (none if it failed)."""
        pid, self._pid = self._pid, None
        if pid is None:
            return frozenset()
        return frozenset(self.files) if spawn.status(pid) == 0 else frozenset()


def _fsync(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs_all(files: list[str | Path]) -> bool:
    """A file is on its folder's file system: each folder is opened (not each file) to
    find which file systems to flush."""
    import ctypes  # only when there is something to flush (start-up time)

    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    done: set[int] = set()
    for folder in _folders(files):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            dev = os.fstat(fd).st_dev
            if dev not in done:
                if syncfs(fd) != 0:
                    return False
                done.add(dev)
        finally:
            os.close(fd)
    return True


def sync_dirs(folders: Iterable[str | Path]) -> None:
    """Each folder's entries (the renames into it) on disk."""
    for d in folders:
        try:
            fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue  # a folder that cannot be opened cannot be synced: the rename stands
        try:
            os.fsync(fd)
        except OSError:
            pass  # some file systems refuse fsync on a folder; nothing more can be done
        finally:
            os.close(fd)


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sha256(content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return sha.sha256(data).hexdigest()
