"""How a plan reads (`diff`): unified diffs and a summary for people, JSON for CI."""

from __future__ import annotations

import os
from typing import Any, TextIO

from schedgen.paths import home
from schedgen.plan import changes as p
from schedgen.targets import registry

_SYMBOL = {p.CREATE: "+", p.UPDATE: "~", p.DELETE: "-", p.ORPHAN: "?", p.KEPT: "!",
           p.CONFLICT: "!", p.DISOWN: "?"}


_ANSI = {"red": 31, "green": 32, "yellow": 33, "cyan": 36}


def style(text: str, fg: str | None = None, bold: bool = False) -> str:
    """ANSI colour and weight, as a terminal understands them (no CLI library needed)."""
    codes = ([f"\x1b[{_ANSI[fg]}m"] if fg else []) + (["\x1b[1m"] if bold else [])
    return "".join(codes) + text + "\x1b[0m" if codes else text


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def headline(c: p.Change) -> str:
    what = f"{c.kind} {c.where}"
    if c.job:  # the crontab block holds several (c.jobs)
        what += f" (job {c.job})"
    notes = [n for n in (c.note, c.deferred and f"{c.deferred}: apply leaves it alone unless "
                                               "--force") if n]
    if c.reload and c.action == p.UNCHANGED:
        notes.insert(0, "reload")
    return f"{_SYMBOL.get(c.action, ' ')} {c.action} {what}" + (f": {'; '.join(notes)}" if notes
                                                                 else "")


def what(c: p.Change) -> str:
    """An artifact as a reviewer names it: `job file`, `runtime`, `systemd timer`."""
    if c.kind == "wrapper":
        return "job file"
    if c.kind == "runtime":
        return "runtime"
    words = registry.get(c.target).kind_words(c.kind) if c.target in registry.names() else c.kind
    return f"{c.target} {words}"


def short(where: str) -> str:
    """A path under the home folder as ~/..."""
    h = str(home()).rstrip("/") + "/"
    return "~/" + where[len(h):] if where.startswith(h) else where


def created_line(c: p.Change) -> str:
    """A new file in one line: what it is, where, its size (its text: diff --full)."""
    n = len((c.after or "").splitlines())
    about = [f"job {c.job}"] if c.job else []
    about.append(f"{n:,} line{'s' if n != 1 else ''}")
    if c.note:
        about.append(c.note)
    return f"+ new {what(c)} {short(c.where)} ({', '.join(about)})"


def diff_text(plan: p.Plan, color: bool, full: bool = True, also: tuple[str, ...] = ()) -> str:
    """`full`: new files in whole; else one line each (the crontab block, spliced into the
    user's own table, always in whole). `also`: what apply would delete besides the plan's
    files (metrics files of jobs gone), one line each."""
    out: list[str] = []

    def paint(text: str, fg: str | None = None, bold: bool = False) -> str:
        return style(text, fg, bold) if color else text

    for c in plan.changes:
        if not c.pending and not (c.reload and c.action == p.UNCHANGED):
            continue
        if (not full and c.action == p.CREATE and c.before is None and c.path is not None
                and not c.deferred):
            out.append(paint(created_line(c), fg="green") + "\n")
            continue
        out.append(paint(headline(c), bold=True) + "\n")
        if c.action == p.DELETE and c.before is not None:
            # The whole file going away says nothing a line count does not (--json has it).
            n = len(c.before.splitlines())
            out.append(paint(f"--- installed: {c.where}\n+++ /dev/null\n", bold=True))
            out.append(paint(f"@@ all {n} line{'s' if n != 1 else ''} removed @@\n", fg="red"))
        elif c.action in (p.CREATE, p.UPDATE, p.CONFLICT) and c.before != c.after:
            for line in c.unified_diff().splitlines(keepends=True):
                if line.startswith(("+++", "---")):
                    out.append(paint(line, bold=True))
                elif line.startswith("+"):
                    out.append(paint(line, fg="green"))
                elif line.startswith("-"):
                    out.append(paint(line, fg="red"))
                elif line.startswith("@@"):
                    out.append(paint(line, fg="cyan"))
                else:
                    out.append(line)
        extra = registry.get(c.target).diff_text(c) if c.target in registry.names() else None
        if extra:  # the target's own view of the change (a cluster's dry run)
            title, body = extra
            out.append(paint(title, bold=True) + "\n" + body.rstrip("\n") + "\n")
    out.extend(paint(f"- delete {what}", bold=True) + "\n" for what in also)
    for w in plan.warnings:
        out.append(paint(f"warning: {w}", fg="yellow") + "\n")
    for _, w in plan.unknown:
        out.append(paint(f"unknown: {w}", fg="yellow") + "\n")
    state = "in sync" if plan.in_sync and not also else "changes pending"
    out.append(f"namespace {plan.namespace}: {state}: {plan.summary()}\n")
    return "".join(out)


def change_json(c: p.Change, with_diff: bool = True) -> dict[str, Any]:
    d: dict[str, Any] = {
        "action": c.action, "kind": c.kind, "target": c.target,
        "path": str(c.path) if c.path is not None else None,
        "job": c.job, "jobs": list(c.jobs), "note": c.note or None, "edited": c.edited,
    }
    if c.target in registry.names():  # the target's own facts (the job files have none)
        d.update(registry.get(c.target).change_json(c))
    if with_diff:
        d["diff"] = c.unified_diff() if c.before != c.after else ""
    return d


def plan_json(plan: p.Plan) -> dict[str, Any]:
    return {
        "namespace": plan.namespace,
        "in_sync": plan.in_sync,
        "summary": {a: plan.count(a) for a in p.ACTIONS if a != p.FORGET}
        | {"deferred": sum(1 for c in plan.changes if c.deferred)},
        "changes": [change_json(c) for c in plan.changes if c.action != p.FORGET],
        "warnings": list(plan.warnings),
        "unknown": [{"target": t, "text": w} for t, w in plan.unknown],
    }
