"""How `next` reads: a block per job, or {job: [RFC 3339 UTC times]} for --json."""

from __future__ import annotations

from schedgen.commands.next import Upcoming
from schedgen.schedule.tznext import host_beside
from schedgen.schedule.when import human, machine


def as_json(results: list[Upcoming]) -> dict[str, list[str]]:
    return {r.job: [machine(t) for t in r.times] for r in results}


def _zoned_line(r: Upcoming, i: int) -> str:
    t = r.times[i]
    text = f"  {human(t)}"
    beside = host_beside(t, t.astimezone(r.host)) if r.host is not None else ""
    mark = r.marks[i] if i < len(r.marks) else ""
    extras = [x for x in (beside, mark) if x]
    return text + (f"  ({'; '.join(extras)})" if extras else "")


def as_text(results: list[Upcoming]) -> str:
    lines: list[str] = []
    for r in results:
        head = f"{r.job}: {r.description}" if r.description else r.job
        lines.append(head)
        lines.append(f"  {r.schedule}  ({r.readable})")
        if r.zone:
            lines += [_zoned_line(r, i) for i in range(len(r.times))]
        else:
            lines += [f"  {human(t)}" for t in r.times]
        for target, times in r.by_target:
            lines.append(f"  on {target} instead:")
            lines += [f"    {human(t)}" for t in times]
        lines += [f"  note: {note}" for note in r.notes]
        lines.append("")
    return "\n".join(lines).rstrip("\n")
