"""What launchd takes of a job: calendar intervals, and a plist name a file may have."""

from __future__ import annotations

from schedgen.config.hostile import NAME_MAX, too_long
from schedgen.config.model import Job
from schedgen.paths import launch_agents_dir
from schedgen.schedule.expressions import Cron, Every, Reboot
from schedgen.schedule.to_calendar import NotExpressible, needs_gate, union_dicts
from schedgen.targets.interface import Refusal


def refusals(job: Job, w: str) -> list[Refusal]:
    out = []
    crons = [e for e in job.schedule or () if isinstance(e, Cron)]
    try:
        # widened where launchd cannot say the days exactly: the job's gate drops the
        # extra fires (a zoned job's in its zone, another's in the host's)
        union_dicts(crons, widen=True)
    except NotExpressible as exc:
        out.append(Refusal(f"{w}.schedule", f"target launchd: {exc}"))
    else:
        if not job.timezone and crons and needs_gate(crons):
            out += _ungatable(job, w, crons)
    every = next((e.seconds for e in job.schedule or () if isinstance(e, Every)), None)
    throttle = job.throttle_interval
    if every is not None and throttle is not None and throttle > every:
        out.append(Refusal(f"{w}.throttle_interval",
                           f"target launchd: {throttle} s is longer than the schedule's "
                           f"@every ({every} s): launchd would start the job at most "
                           f"every {throttle} s; set it to {every} or less"))
    if job.label_prefix is None:
        return out  # reported as the label prefix's own problem
    name = f"{job.label}.plist"
    if len(name.encode()) > NAME_MAX:
        out.append(Refusal(f"{w}.label_prefix", f"the plist file name {name[:40]}... would be "
                                           f"{len(name.encode())} bytes, more than {NAME_MAX}: "
                                           "use a shorter label_prefix"))
    else:
        long = too_long(launch_agents_dir() / name)
        if long:
            out.append(Refusal(f"{w}.label_prefix", f"the plist's path would be {long}"))
    return out


def _ungatable(job: Job, w: str, crons: list[Cron]) -> list[Refusal]:
    """A gated plist's every start passes the gate (launchd passes --gate to them all):
    a start at load, at no firing of the schedule, would be dropped. (@every takes no
    other expression beside it.)"""
    what = [e.text for e in job.schedule if isinstance(e, Reboot)]
    if job.run_at_load:
        what.append("run_at_load")
    if not what:
        return []
    gated = next(c.text for c in crons if needs_gate([c]))
    return [Refusal(f"{w}.schedule",
                    f"target launchd: {gated!r} has no exact launchd dicts, so its plist "
                    "fires more often and the job file runs only the schedule's firings "
                    f"(docs/launchd.md); that would drop the starts of {', '.join(what)} "
                    "too: give them a job of their own (catch_up = \"once\" runs a "
                    "missed firing at load, through the gate)")]
