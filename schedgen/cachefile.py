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
    """The bytes of a regular file, else None: a FIFO there would block a plain read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
