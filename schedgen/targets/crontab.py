"""The user's crontab as text, and splicing schedgen's block in and out of it.

The table is never parsed into entries and written back (python-crontab's `write()`
rewrites lines it does not own, DESIGN.md §6): schedgen finds its own block by its
BEGIN/END marker lines and replaces exactly those bytes. Every other byte stays.
Bytes that are not UTF-8 survive too (surrogateescape both ways).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from schedgen.errors import SchedgenError, SystemOpError
from schedgen.machine.ops import Ops, run
from schedgen.plan.changes import table_lines

BEGIN = re.compile(r"[ \t]*#[ \t]*BEGIN schedgen namespace=(\S+)")
END = re.compile(r"[ \t]*#[ \t]*END schedgen namespace=(\S+)")


class DamagedBlock(SchedgenError):
    """The markers for a namespace do not form exactly one BEGIN..END pair."""


class Table(NamedTuple):
    text: str
    present: bool  # False: "no crontab for <user>"


def read() -> Table:
    r = run(["crontab", "-l"])
    if r.ok:
        return Table(r.stdout, True)
    if "no crontab for" in r.stderr.lower() or "no crontab for" in r.stdout.lower():
        return Table("", False)
    raise SystemOpError(f"crontab -l failed: {r.message()}")


def write(ops: Ops, text: str) -> None:
    """Install `text` as the whole table; an empty table removes the crontab."""
    if text:
        r = ops.run(["crontab", "-"], input=text.encode("utf-8", "surrogateescape"))
        what = "crontab -"
    else:
        r = ops.run(["crontab", "-r"])
        what = "crontab -r"
        if not r.ok and "no crontab for" in r.message().lower():
            return
    if not r.ok:
        raise SystemOpError(f"{what} failed: {r.message()}")


TRIES = 3


def write_if_unchanged(ops: Ops, namespace: str, before: str | None, after: str | None) -> None:
    """Replace the namespace's block, writing the table only if it is still what was read.

    crontab(1) has no compare-and-swap: the table is read, the new one made, and read
    again just before writing; if anything changed in between (a `crontab -e`, an apply
    with another state dir), the whole thing starts over from the new table, and after
    TRIES such races it gives up, writing nothing. The block itself must still be what
    the plan saw, or nothing is written at all.
    """
    for _ in range(TRIES):
        table = read()
        if block(table.text, namespace) != before:
            raise SystemOpError(f"the crontab's schedgen block for namespace {namespace} changed "
                                "while schedgen was working; the crontab was not written. Run "
                                "the command again to see the new difference.")
        new = splice(table.text, namespace, after)
        if new == table.text:
            return
        if read().text != table.text:
            continue  # someone wrote the crontab in between: start over from theirs
        write(ops, new)
        return
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
