"""The user's crontab as text, and splicing schedgen's block in and out of it.

The table is never parsed into entries and written back (python-crontab's `write()`
rewrites lines it does not own, docs/design.md, "Known traps"): schedgen finds its own block by its
BEGIN/END marker lines and replaces exactly those bytes. Every other byte stays.
Bytes that are not UTF-8 survive too (surrogateescape both ways).
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.errors import SchedgenError, SystemOpError
from schedgen.machine import fs
from schedgen.machine.ops import Ops, find, run
from schedgen.machine.ownership import private_dir
from schedgen.plan.changes import table_lines

BEGIN = re.compile(r"[ \t]*#[ \t]*BEGIN schedgen namespace=(\S+)")
END = re.compile(r"[ \t]*#[ \t]*END schedgen namespace=(\S+)")


class DamagedBlock(SchedgenError):
    """The markers for a namespace do not form exactly one BEGIN..END pair."""


class Table(NamedTuple):
    text: str
    present: bool  # False: "no crontab for <user>"


class Missing(SystemOpError):
    """No crontab program on PATH."""


def read() -> Table:
    if find("crontab") is None:
        raise Missing("crontab not found on PATH: this host has no cron installed, or PATH "
                      "does not reach it")
    r = run(["crontab", "-l"])
    if r.ok:
        return Table(r.stdout, True)
    if "no crontab for" in r.stderr.lower() or "no crontab for" in r.stdout.lower():
        return Table("", False)
    raise SystemOpError(f"crontab -l failed: {r.message()}")


def _fix(exc: SystemOpError) -> str:
    if isinstance(exc, Missing):
        return ("Install cron (Debian, Ubuntu: apt-get install cron; Fedora: dnf install "
                "cronie) or run schedgen where `crontab` is on PATH")
    return ("Run `crontab -l` to see the error; /etc/cron.allow and /etc/cron.deny say who "
            "may use cron")


def unknown_words(exc: SystemOpError, namespace: str) -> str:
    """Why the crontab block is unknown, what was and was not done, what to try."""
    return (f"{exc}. The crontab was not read, so whether the block of namespace {namespace} "
            f"is installed is unknown: no cron drift is reported and nothing was changed. "
            f"{_fix(exc)}.")


def apply_words(exc: SystemOpError) -> SystemOpError:
    """The same for apply and uninstall, which stop before writing anything."""
    return SystemOpError(f"{exc}. The crontab was not read, so nothing was written or "
                         f"removed. {_fix(exc)}.")


def write(ops: Ops, text: str) -> None:
    """Install `text` as the whole table; an empty table removes the crontab.

    The table goes to crontab(1) as a complete file, never through a pipe: `crontab -`
    installs whatever it has read when its input ends, so schedgen killed halfway through
    writing a pipe would leave the user an empty or cut crontab. A file is whole before
    crontab starts, and crontab finishes reading it even if schedgen dies meanwhile.
    """
    if text:
        what = "crontab <new table>"
        if ops.dry_run:
            r = ops.run(["crontab", "-"])
        else:
            folder = paths.private_tmp()
            private_dir(folder)
            _sweep(folder)
            fd, name = fs.create(folder, f"crontab.{os.getpid()}.", ".tmp", 0o600)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(text.encode("utf-8", "surrogateescape"))
                r = ops.run(["crontab", str(name)])
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)
        if r.ok and not ops.dry_run:
            _check_installed(text)
    else:
        r = ops.run(["crontab", "-r"])
        what = "crontab -r"
        if not r.ok and "no crontab for" in r.message().lower():
            return
    if not r.ok:
        raise SystemOpError(f"{what} failed: {r.message()}")


STALE = 600  # seconds: a temp table older than this is no write's in progress


_TEMP_TABLE = re.compile(r"crontab\.(?:(\d+)\.)?[^.]*\.tmp")


def _sweep(folder: Path) -> None:
    """Remove the tables applies killed while crontab read them left in ``folder``. Only
    old ones of applies that are gone: crontab is given 60 s to read its file, and an
    apply that shares no lock with this one (another state dir under a test's lock) may
    be writing its own now, whatever the clock says (a clock set ahead made its fresh
    table look old). A name without a pid is from an older schedgen: age alone."""
    cutoff = time.time() - STALE
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        m = _TEMP_TABLE.fullmatch(e.name)
        if m is None or (m.group(1) and _alive(int(m.group(1)))):
            continue
        try:
            if e.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(e.path)
        except OSError:
            pass  # gone meanwhile


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone's (or not a pid): left alone
    return True


def _check_installed(text: str) -> None:
    """The table crontab(1) now lists is the one written (a crontab that exits 0 and
    installs nothing, or something else, must not pass for a done apply)."""
    now = read().text
    if now != text and now != listed(text):
        raise SystemOpError("crontab reported success, but the crontab it now lists is not the "
                            "one schedgen wrote")


def listed(text: str) -> str:
    """`text` as Debian's `crontab -l` shows it: a carriage return as \\r, a backspace as \\b."""
    return text.replace("\r", "\\r").replace("\b", "\\b")


def check_round_trip(text: str) -> None:
    """Refuse a table that writing back would change. Debian's `crontab -l` shows a carriage
    return as the two characters \\r, so a table with CRLF line ends is listed with each
    line ending in them; written back, each would become a real backslash and r. Lines of
    someone else's that end so are taken for that (a command ending in a literal \\r is
    not plausible); a backspace (\\b) cannot be told from a literal \\b in a regex and
    is not looked for (docs/install.md)."""
    bad = [n for n, line in enumerate(table_lines(text), 1) if line.rstrip("\n").endswith("\\r")]
    if bad:
        lines = ", ".join(str(n) for n in bad[:5]) + (", ..." if len(bad) > 5 else "")
        raise DamagedBlock(
            f"the crontab has Windows (CRLF) line ends (lines {lines}, as `crontab -l` shows "
            "them): written back they would change. Convert it first, e.g. `crontab -l | sed "
            "'s/\\\\r$//' | crontab -` after checking that output; nothing was changed.")


TRIES = 3


def write_if_unchanged(ops: Ops, namespace: str, before: str | None, after: str | None,
                       rewrite: Callable[[str], str] | None = None,
                       first: Callable[[Table], None] | None = None,
                       seen: Table | None = None) -> Table:
    """Replace the namespace's block, writing the table only if it is still what was read.

    crontab(1) has no compare-and-swap: the table is read, the new one made, and read
    again just before writing; if anything changed in between (a `crontab -e`, an apply
    with another state dir), the whole thing starts over from the new table, and after
    TRIES such races it gives up, writing nothing. The block itself must still be what
    the plan saw, or nothing is written at all. ``rewrite`` changes the rest of the
    table too (the user's lines an imported job adopts); ``first`` sees the table just
    before it is written (a copy of it is kept before schedgen's first write). ``seen``:
    the table as the plan read it, taken for the first read. Returns the table the new
    one was made from (the plan's, or one read since).
    """
    for attempt in range(TRIES):
        table = seen if attempt == 0 and seen is not None else read()
        if block(table.text, namespace) != before:
            raise SystemOpError(f"the crontab's schedgen block for namespace {namespace} changed "
                                "while schedgen was working; the crontab was not written. Run "
                                "the command again to see the new difference.")
        new = splice(table.text, namespace, after)
        if rewrite is not None:
            new = rewrite(new)
        if new == table.text:
            return table
        try:
            check_round_trip(table.text)  # as in the plan, for a table changed since
        except DamagedBlock as exc:
            raise SystemOpError(str(exc)) from None
        if read() != table:
            # someone wrote the crontab in between (or made an empty one where there was
            # none: the copy kept before the first write must say so): start over
            continue
        if first is not None:
            first(table)
        write(ops, new)
        return table
    raise SystemOpError(f"the crontab kept changing while schedgen was writing it ({TRIES} "
                        "tries: another program writes it right now); it was not written. Run "
                        "the command again.")


def span(text: str, namespace: str) -> tuple[int, int] | None:
    """Offsets of the block for `namespace` (BEGIN line start .. after the END line)."""
    begins: list[tuple[int, int]] = []  # (line number, offset)
    ends: list[tuple[int, int]] = []
    offset = 0
    for n, line in enumerate(table_lines(text), 1):
        for regex, found in ((BEGIN, begins), (END, ends)):
            m = regex.match(line)
            if m and m.group(1) == namespace:
                found.append((n, offset if regex is BEGIN else offset + len(line)))
        offset += len(line)
    if not begins and not ends:
        return None
    where = f"the crontab's schedgen block for namespace {namespace!r}"
    fix = ("Fix it by hand with `crontab -e` (keep one BEGIN/END pair or remove the block); "
           "nothing was changed.")
    if len(begins) > 1 or len(ends) > 1:
        lines = ", ".join(str(n) for n, _ in sorted(begins + ends))
        raise DamagedBlock(f"{where} appears more than once (marker lines {lines}). {fix}")
    if not ends:
        raise DamagedBlock(f"{where} has a BEGIN line (line {begins[0][0]}) but no END line. {fix}")
    if not begins:
        raise DamagedBlock(f"{where} has an END line (line {ends[0][0]}) but no BEGIN line. {fix}")
    if ends[0][0] < begins[0][0]:
        raise DamagedBlock(f"{where} has its END line (line {ends[0][0]}) before its BEGIN line "
                           f"(line {begins[0][0]}). {fix}")
    return begins[0][1], ends[0][1]


def block(text: str, namespace: str) -> str | None:
    s = span(text, namespace)
    return text[s[0]:s[1]] if s else None


def splice(text: str, namespace: str, new_block: str | None) -> str:
    """The table with the namespace's block replaced by `new_block` (None: removed)."""
    s = span(text, namespace)
    if s is None:
        if new_block is None:
            return text
        # A last line without a newline would run into BEGIN (and cron drops such a line).
        sep = "" if not text or text.endswith("\n") else "\n"
        return text + sep + new_block
    start, end = s
    return text[:start] + (new_block or "") + text[end:]
