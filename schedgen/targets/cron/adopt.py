"""The user's own crontab lines an imported job replaces (`adopts = "cron: LINE"`).

apply turns such a line off by putting a prefix before it, never by rewriting it:

    #schedgen-adopted ns=NAMESPACE job=JOB: <the line exactly as it was>

so the job runs once, from schedgen's block, and taking the prefix off gives the line
back byte for byte: `uninstall` does that. A line is found by its text (what the job's
`adopts` holds), not by the job's name, so a renamed job still owns its line (apply
only rewrites the name in the prefix). Lines inside any schedgen block are never looked
at; every other line stays byte-exact.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

import re
from typing import NamedTuple

from schedgen.plan.changes import table_lines
from schedgen.targets.cron.crontab import BEGIN, END, Table

MARK = re.compile(r"#schedgen-adopted ns=(\S+) job=(\S+): (.*)", re.DOTALL)


def mark(namespace: str, job: str, line: str) -> str:
    return f"#schedgen-adopted ns={namespace} job={job}: {line}"


class Line(NamedTuple):
    number: int  # in the crontab as read (1-based)
    job: str
    text: str  # the user's line, without its newline
    action: str  # COMMENT, RESTORE, RENAME (the job in the prefix), OFF (already done)


COMMENT, RESTORE, RENAME, OFF = "comment out", "put back", "rename", "off"


class Adoption(NamedTuple):
    """A crontab block change's own facts: the user's lines it turns off or puts back."""

    namespace: str
    wanted: tuple[tuple[str, str], ...]  # (line, job) the config adopts
    uninstall: bool
    lines: tuple[Line, ...]
    missing: tuple[tuple[str, str], ...] = ()  # (job, line) adopted but in no crontab line
    # The table as the plan read it: apply compares it with a read just before writing
    # instead of reading once more first (crontab(1) calls are most of a small apply).
    seen: Table | None = None

    @property
    def pending(self) -> tuple[Line, ...]:
        return tuple(x for x in self.lines if x.action != OFF)


def _user_lines(table: str) -> list[tuple[int, str]]:
    """(number, line with its newline) of every line outside all schedgen blocks."""
    out: list[tuple[int, str]] = []
    inside = False
    for n, line in enumerate(table_lines(table), 1):
        if BEGIN.match(line):
            inside = True
        elif END.match(line) and inside:
            inside = False
        elif not inside:
            out.append((n, line))
    return out


def _split(line: str) -> tuple[str, str]:
    return (line[:-1], "\n") if line.endswith("\n") else (line, "")


def plan(table: str, namespace: str, wanted: dict[str, str], uninstall: bool) -> Adoption:
    """What apply would do to the user's lines of `table` (`wanted`: line -> job)."""
    lines: list[Line] = []
    seen: set[str] = set()
    for n, raw in _user_lines(table):
        body, _ = _split(raw)
        m = MARK.fullmatch(body)
        if m and m.group(1) == namespace:
            seen.add(m.group(3))
            job = wanted.get(m.group(3))
            if uninstall or job is None:
                # no job adopts it now: only uninstall puts it back (its job may be an
                # orphan that still runs)
                lines.append(Line(n, m.group(2), m.group(3), RESTORE if uninstall else OFF))
            else:
                lines.append(Line(n, job, m.group(3), OFF if job == m.group(2) else RENAME))
        elif body in wanted and not uninstall:
            seen.add(body)
            lines.append(Line(n, wanted[body], body, COMMENT))
    missing = tuple((job, line) for line, job in wanted.items() if line not in seen)
    return Adoption(namespace, tuple(wanted.items()), uninstall, tuple(lines),
                    () if uninstall else missing)


def rewrite(table: str, a: Adoption) -> str:
    """`table` with the adoption carried out, worked out again on this very table (it
    may have changed since the plan); every other byte as it was."""
    wanted = dict(a.wanted)
    done = plan(table, a.namespace, wanted, a.uninstall)
    by_number = {x.number: x for x in done.pending}
    out: list[str] = []
    for n, raw in enumerate(table_lines(table), 1):
        x = by_number.get(n)
        if x is None:
            out.append(raw)
            continue
        _, newline = _split(raw)
        out.append((x.text if x.action == RESTORE else mark(a.namespace, x.job, x.text))
                   + newline)
    return "".join(out)


def describe(a: Adoption) -> list[str]:
    """For `diff`: a line each, what happens to which of the user's lines."""
    out = []
    for x in a.lines:
        if x.action == COMMENT:
            out.append(f"  line {x.number}: {x.text}\n    replaced by job {x.job}: apply "
                       "comments it out (`schedgen uninstall` puts it back)")
        elif x.action == RENAME:
            out.append(f"  line {x.number}: {x.text}\n    replaced by job {x.job} (renamed): "
                       "apply writes the new name in its comment")
        elif x.action == RESTORE:
            out.append(f"  line {x.number}: {x.text}\n    put back as it was (job {x.job} "
                       "is uninstalled)")
    for job, line in a.missing:
        out.append(f"  job {job} adopts a crontab line that is not in the crontab: {line}")
    return out
