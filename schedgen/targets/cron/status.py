"""`status` for target cron: the crontab block split into each job's own lines."""

from __future__ import annotations

from schedgen.config.model import Job
from schedgen.plan import changes as p
from schedgen.targets.cron.adopt import COMMENT, Adoption
from schedgen.targets.cron.render import cron_command
from schedgen.targets.cron.words import ADOPT_NOTE


def job_parts(c: p.Change, jobs: tuple[Job, ...]) -> dict[str, p.Change]:
    """Each job's own lines of the crontab block, as changes of their own (one pass).
    A line belongs to the job whose command (render's cron_command) ends it."""
    tokens = {cron_command(j): j.name for j in jobs}

    def lines(text: str | None) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in p.table_lines(text or ""):
            body = line.rstrip("\n")
            # `<5 fields or @macro> <token>`: look the token up, never scan them all
            five, one = body.split(" ", 5), body.split(" ", 1)
            name = tokens.get(five[-1]) if len(five) == 6 else None
            name = name or (tokens.get(one[-1]) if len(one) == 2 else None)
            if name is None:  # a cron.d line: a user field before the command
                six, two = body.split(" ", 6), body.split(" ", 2)
                name = tokens.get(six[-1]) if len(six) == 7 else None
                name = name or (tokens.get(two[-1]) if len(two) == 3 else None)
            if name is not None:
                out[name] = out.get(name, "") + line
        return out

    before, after = lines(c.before), lines(c.after)
    out = {}
    pending = {x.job: x for x in c.details.pending} if isinstance(c.details, Adoption) else {}
    for job in dict.fromkeys([*before, *after]):
        b, a = before.get(job), after.get(job)
        if b == a:
            action = p.UNCHANGED
        else:
            action = p.CREATE if b is None else (p.DELETE if a is None else p.UPDATE)
        if c.action in (p.ORPHAN, p.KEPT):
            action = c.action
        note = c.note
        x = pending.get(job)
        if x is not None:  # its own line in the user's part of the crontab still runs too
            action = p.UPDATE if action == p.UNCHANGED else action
            note = ADOPT_NOTE if x.action == COMMENT else note
        out[job] = p.Change(c.target, c.kind, c.key, action, None, b, a, job=job,
                            note=note, edited=c.edited, unknown=c.unknown)
    return out
