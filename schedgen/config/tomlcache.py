"""jobs.toml as tomllib reads it, kept between runs: tomllib's pure Python parse (and its
import) was a third of loading a 200-job config, on every command.

The document is kept in marshal's form (a few hundred microseconds to read back), one
file per config path in the cache folder, under a key of the config's exact text and
Python's version (tomllib and marshal are Python's): any other text is parsed afresh. A
document marshal cannot hold (a TOML date or time) is not kept. Read by every command
that loads a config; written only by those that write anyway (`apply`, `render`, at
the end of `storing_compiled_templates`), like the compiled templates.
"""

from __future__ import annotations

import marshal
import sys
from pathlib import Path
from typing import Any

from schedgen import cachefile
from schedgen.sha import sha256

FOLDER = "toml"
_PENDING: dict[str, tuple[str, bytes]] = {}  # file name -> (key, marshalled document)


def _key(text: str) -> str:
    return sha256(f"{sys.version}\0{text}".encode("utf-8", "surrogateescape")).hexdigest()


def _name(path: Path) -> str:
    return sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def read(cache: Path, path: Path, text: str) -> dict[str, Any] | None:
    """The document kept for this very text, if any."""
    raw = cachefile.read(cache / FOLDER / _name(path))
    if raw is None:
        return None
    body = cachefile.unseal(raw, _key(text))  # a byte changed on disk: parsed afresh
    if body is None:
        return None
    try:
        data = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None  # damaged: parsed afresh, and kept anew by a writing command
    return data if isinstance(data, dict) else None


def remember(path: Path, text: str, data: dict[str, Any]) -> None:
    """Keep the parse of `text` for `store` (marshalled now: the loader may change it)."""
    try:
        body = marshal.dumps(data)
    except ValueError:
        return  # a date or time: not kept
    _PENDING[_name(path)] = (_key(text), body)


def store(cache: Path) -> None:
    """Write what `remember` kept; never fails a command."""
    pending = dict(_PENDING)
    _PENDING.clear()
    for name, (key, body) in pending.items():
        cachefile.write(cache / FOLDER, name, cachefile.seal(key, body))
