"""Files of the cache folder that a render trusts (render/compiled.py's code,
config/tomlcache.py's document): a file damaged on disk, left by a crash or put there by
someone else is ignored (the caller then works as without it), never believed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from schedgen.sha import sha256


def seal(key: str, body: bytes) -> bytes:
    """The file's bytes: the key and the body's digest on the first line, then the body."""
    return f"{key} {sha256(body).hexdigest()}\n".encode("ascii") + body


def unseal(data: bytes, key: str) -> bytes | None:
    """The body, if the file was sealed under `key` and its body is the one sealed."""
    head, nl, body = data.partition(b"\n")
    if not nl or head != f"{key} {sha256(body).hexdigest()}".encode("ascii"):
        return None
    return body


def read(path: Path) -> bytes | None:
    """The bytes of a regular file of this user, else None: a FIFO there would block a plain
    read, and another account's file (a HOME shared through sudo) is not trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write(folder: Path, name: str, data: bytes) -> None:
    """`data` as folder/name, whole or not at all; never fails a command (a cache that
    cannot be written only costs time). The temporary name is not guessable and is created
    anew (O_EXCL): a link planted in a shared folder is not written through."""
    tmp = folder / f".{name}.{os.getpid()}.{os.urandom(6).hex()}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, folder / name)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
