"""How `status` reads: a block per job for people, one object for --json."""

from __future__ import annotations

from typing import Any

from schedgen.commands.status_types import Status
from schedgen.outcomes.missed import missed_json, missed_text
from schedgen.schedule.when import human, machine, parse
from schedgen.targets import registry


def as_json(s: Status) -> dict[str, Any]:
    names = [n for n in registry.names() if registry.get(n).facts]
    return {
        "namespace": s.namespace, "drift": s.drifted, "other": list(s.other),
        "jobs": [{
            "job": j.job, "enabled": j.enabled, "targets": list(j.targets),
            "schedule": j.schedule, "readable": j.readable, "installed": j.installed,
            "drift": list(j.drift),
            "scope": "system" if j.user else "user", "user": j.user,
            # each target's own facts, by its name (null: none for this job)
            **{name: j.facts.get(name) for name in names},
            "last_run": j.last_run,
            "next_run": j.next_run, "next_notes": list(j.next_notes),
            "queue": j.queue._asdict() if j.queue else None, "lock_held": j.lock_held,
            "missed": missed_json(j.missed),
            "paused": None if j.paused is None else {"until": machine(j.paused.until)
                                                     if j.paused.until else None}, "policies": j.policies,
        } for j in s.jobs],
        # the shape of diff --json's "host"
        "host": {"name": s.host, "this_machine": not s.elsewhere,
                 "jobs": [j.job for j in s.jobs],
                 "skipped": [{"job": j, "field": "hosts", "why": w} for j, w in s.skipped]},
        "warnings": list(s.warnings),
        # a scheduler that could not be read: its jobs' "installed" is null
        "unknown": [{"target": t, "text": w} for t, w in s.unknown],
    }


def people(text: Any, zone: str | None) -> str:
    """A recorded RFC 3339 time as people read it (schedule/when.py); else as it is."""
    t = parse(text) if isinstance(text, str) else None
    if t is None:
        return str(text) if text else "?"
    from zoneinfo import ZoneInfo

    return human(t, ZoneInfo(zone) if zone else None)


def as_text(s: Status) -> str:
    head = "DRIFT" if s.drifted else "state unknown" if s.unknown else "in sync"
    if s.elsewhere:
        head = (f"host {s.host} (--host: not this machine): what it gets; what is installed "
                "there and its runs are not known here")
    lines = [f"namespace {s.namespace}: {head}"]
    for j in s.jobs:
        state_ = ("disabled" if not j.enabled else "on another host" if s.elsewhere
                  else "state unknown" if j.installed is None
                  else "installed" if j.installed else "not installed")
        lines.append(f"{j.job}  [{', '.join(j.targets)}]  {state_}")
        lines.append(f"  schedule   {j.schedule}  ({j.readable})")
        if j.user:
            lines.append(f"  scope      system, runs as {j.user}")
        for name in registry.names():  # each target's own facts, as it writes them
            if j.facts.get(name):
                lines += registry.get(name).status_lines(j.facts[name])
        lr = j.last_run
        if s.elsewhere:
            pass  # its runs are recorded on that machine
        elif lr:
            when = people(lr.get("finished_at") or lr.get("started_at"), j.timezone)
            code = f", exit {lr['exit_code']}" if lr.get("exit_code") is not None else ""
            outcome = lr.get("outcome", "?")
            lines.append(f"  last run   {lr.get('run_id')}: {outcome}{code} at {when}")
        else:
            lines.append("  last run   never")
        nxt = people(j.next_run, j.timezone) if j.next_run else "no calendar time"
        lines.append(f"  next run   {nxt}" + "".join(f"; {n}" for n in j.next_notes))
        if j.queue:
            q = j.queue
            lines.append(f"  queue      {q.inbox} waiting, {q.processing} processing, "
                         f"{q.failed} failed")
        if j.lock_held is not None:
            lines.append(f"  lock       {'held (a run is active)' if j.lock_held else 'free'}")
        if j.paused is not None:
            lines.append(f"  paused     {j.paused.until_text()}"
                         " (schedgen resume to end it)")
        if j.policy_words:
            lines.append(f"  policies   {'; '.join(j.policy_words)}")
        if j.missed and j.missed.firings:
            lines.append(f"  firings    {missed_text(j.missed)}")
        for d in j.drift:
            lines.append(f"  drift      {d}")
    lines += [f"skipped {j}: {w}" for j, w in s.skipped]
    lines += [f"drift: {o}" for o in s.other]
    lines += [f"warning: {w}" for w in s.warnings]
    lines += [f"unknown: {w}" for _, w in s.unknown]
    return "\n".join(lines)
