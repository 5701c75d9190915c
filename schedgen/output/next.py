"""How `next` reads: a block per job, or {job: [ISO times]} for --json."""

from __future__ import annotations

from schedgen.commands.next import Upcoming


def as_json(results: list[Upcoming]) -> dict[str, list[str]]:
    return {r.job: [t.isoformat() for t in r.times] for r in results}


def as_text(results: list[Upcoming]) -> str:
    lines: list[str] = []
    for r in results:
        head = f"{r.job}: {r.description}" if r.description else r.job
        lines.append(head)
        lines.append(f"  {r.schedule}  ({r.readable})")
        lines += [f"  {t.strftime('%a %Y-%m-%d %H:%M %Z').rstrip()}" for t in r.times]
        lines += [f"  note: {note}" for note in r.notes]
        lines.append("")
    return "\n".join(lines).rstrip("\n")
