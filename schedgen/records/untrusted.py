"""Opening what a job's runs wrote, in a folder its account owns.

A system job's log folder is its user's, and root reads it (status, check, history,
report): a link planted there must not lead root's reads to a file that account could
not read, nor a FIFO or a device make them block or never end. So every name below the
log folder is opened without following a link, the file without blocking, and only a
regular file is taken.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)


def open_below(base: Path, path: Path) -> int:
    """A read-only descriptor of `path`, a regular file under `base` reached through no
    link below `base` (base itself is the configured folder, links and all). Raises
    OSError as open(2) would: FileNotFoundError, ELOOP for a link, EINVAL for a FIFO,
    device or folder."""
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        parts = ()
    if not parts:  # not below base: the file alone, still not through a link
        base, parts = path.parent, (path.name,)
    fd = os.open(base, os.O_RDONLY | _DIRECTORY)
    try:
        for name in parts[:-1]:
            sub = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = sub
        f = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(f).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(f, True)
    except BaseException:
        os.close(f)
        raise
    return f


def read_below(base: Path, path: Path, limit: int) -> bytes:
    """At most `limit` bytes from the start of the file (open_below's rules)."""
    fd = open_below(base, path)
    try:
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
