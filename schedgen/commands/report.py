"""`schedgen report`: one self-contained HTML page of the last N days of runs.

Inline CSS and SVG only (no script, no network): a lane per job with each run as a mark
coloured by outcome and missed firings marked, durations in each mark's tooltip (SVG
<title>), and a table of runs, success rate, p50/p95 duration, last failure and queue
depth. A lane with more runs than MAX_MARKS is drawn as BINS columns, each stacked by
outcome, so 10,000 runs stay a small, legible file.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime, timedelta
from html import escape
from pathlib import Path
from typing import NamedTuple

from schedgen.commands.status import unknown as unknown_state
from schedgen.config.model import Job
from schedgen.config.select import load_here
from schedgen.errors import SystemOpError, UsageError
from schedgen.machine import ownership as state
from schedgen.machine.fs import atomic_write
from schedgen.outcomes import history, missed
from schedgen.records import runs as run_records
from schedgen.schedule.upcoming import local_zone
from schedgen.units import format_duration

MAX_MARKS = 400
BINS = 240
W, H = 1000, 28  # a lane's SVG user space (stretched to the lane's width)
COLOURS = {"ok": "#2f9e5b", "empty": "#9fd5b3", "failed": "#d62839", "timeout": "#f28c28",
           "busy": "#8a94a6", "missed": "#6a3d9a", "running": "#3a86ff"}
# Outcomes shown as "failed" (they all mean the work was not done).
AS_FAILED = {"interrupted", "crashed", "precondition"}
ORDER = ("ok", "empty", "running", "busy", "timeout", "failed", "missed")


class Lane(NamedTuple):
    job: Job
    runs: tuple[history.Run, ...]
    missed: tuple[datetime, ...]
    queue: run_records.QueueDepth | None


def outcome_class(outcome: str) -> str:
    return "failed" if outcome in AS_FAILED else (outcome if outcome in COLOURS else "failed")


def collect(config_path: Path, days: int, now: datetime | None = None) -> tuple[str, list[Lane],
                                                                                 datetime, datetime]:
    if days < 1:
        raise UsageError("--days must be at least 1")
    config = load_here(config_path)
    now = now or datetime.now(UTC)
    start = now - timedelta(days=days)
    record = state.load(config.namespace)
    lanes = []
    for job in config.jobs:
        rs = tuple(history.runs(job, since=start))
        m = missed.missed(job, record, now, since=start)
        gone = tuple(f.at for f in m.missed) if m else ()
        lanes.append(Lane(job, rs, gone, run_records.queue_depth(job)))
    return config.namespace, lanes, start, now


def _pct(values: list[int], p: float) -> int | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p * len(s)) - 1))]


def _local(t: datetime, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return t.astimezone(local_zone()).strftime(fmt)


def _x(t: datetime, start: datetime, end: datetime) -> float:
    span = (end - start).total_seconds() or 1
    return round(max(0.0, min(1.0, (t - start).total_seconds() / span)) * W, 2)


def _tip(r: history.Run) -> str:
    dur = "running" if r.duration is None else format_duration(r.duration)
    code = "" if r.exit_code is None else f" (exit {r.exit_code})"
    item = f" · {r.item}" if r.item else ""
    return f"{r.run_id} · {_local(r.started, '%Y-%m-%d %H:%M:%S')} · {dur} · {r.outcome}{code}{item}"


def _marks(lane: Lane, start: datetime, end: datetime) -> list[str]:
    out = []
    for r in reversed(lane.runs):
        cls = outcome_class(r.outcome)
        x = _x(r.started, start, end)
        out.append(f'<rect class="mark {cls}" data-outcome="{cls}" data-count="1" x="{x - 1.5}" '
                   f'y="4" width="3" height="{H - 8}"><title>{escape(_tip(r))}</title></rect>')
    for t in lane.missed:
        x = _x(t, start, end)
        out.append(f'<path class="mark missed" data-outcome="missed" data-count="1" '
                   f'd="M{x - 5} 1 L{x + 5} 1 L{x} 12 Z"><title>missed firing '
                   f'{escape(_local(t))}</title></path>')
    return out


def _bins(lane: Lane, start: datetime, end: datetime) -> list[str]:
    span = (end - start).total_seconds() or 1
    counts: list[Counter[str]] = [Counter() for _ in range(BINS)]
    durations: list[list[int]] = [[] for _ in range(BINS)]
    for r in lane.runs:
        i = min(BINS - 1, max(0, int((r.started - start).total_seconds() / span * BINS)))
        counts[i][outcome_class(r.outcome)] += 1
        if r.duration is not None:
            durations[i].append(r.duration)
    for t in lane.missed:
        i = min(BINS - 1, max(0, int((t - start).total_seconds() / span * BINS)))
        counts[i]["missed"] += 1
    out = []
    width = W / BINS
    for i, c in enumerate(counts):
        total = sum(c.values())
        if not total:
            continue
        t0 = start + timedelta(seconds=span * i / BINS)
        t1 = start + timedelta(seconds=span * (i + 1) / BINS)
        p50 = _pct(durations[i], 0.5)
        words = ", ".join(f"{c[k]} {k}" for k in ORDER if c[k])
        tip = (f"{_local(t0)} – {_local(t1, '%H:%M')}: {words}"
               + (f"; p50 {format_duration(p50)}" if p50 is not None else ""))
        y = float(H - 2)
        for k in ORDER:
            if not c[k]:
                continue
            h = max(1.5, (H - 4) * c[k] / total)
            y -= h
            out.append(f'<rect class="bin {k}" data-outcome="{k}" data-count="{c[k]}" '
                       f'x="{round(i * width, 2)}" y="{round(y, 2)}" width="{round(width, 2)}" '
                       f'height="{round(h, 2)}"><title>{escape(tip)}</title></rect>')
    return out


def _ticks(start: datetime, end: datetime) -> list[tuple[float, str]]:
    """(fraction of the window, label) at each day (or 6 hours, for a short window)."""
    span = (end - start).total_seconds()
    days = span / 86400
    step = timedelta(hours=6) if days <= 2 else timedelta(days=1 if days <= 14 else
                                                          max(1, round(days / 10)))
    z = local_zone()
    t = start.astimezone(z).replace(minute=0, second=0, microsecond=0)
    if step >= timedelta(days=1):
        t = t.replace(hour=0)
    ticks = []
    while t <= end:
        if t >= start:
            label = t.strftime("%b %d") if step >= timedelta(days=1) else t.strftime("%d %H:%M")
            ticks.append(((t - start).total_seconds() / span, label))
        t = (t + step).astimezone(z)
    return ticks


def _axis(ticks: list[tuple[float, str]]) -> str:
    # Labels are centred on their line: one at either edge would be cut in half.
    return "".join(f'<span class="tick" style="left:{100 * f:.2f}%">{escape(label)}</span>'
                   for f, label in ticks if 0.03 < f < 0.97)


def _grid(ticks: list[tuple[float, str]]) -> str:
    return "".join(f'<line class="grid" x1="{round(f * W, 2)}" x2="{round(f * W, 2)}" y1="0" '
                   f'y2="{H}"/>' for f, _ in ticks)


def _summary_row(lane: Lane) -> str:
    done = [r for r in lane.runs if r.outcome not in ("busy", "empty", "running")]
    ok = sum(1 for r in done if r.outcome == "ok")
    rate = f"{100 * ok / len(done):.1f}%" if done else "–"
    durs = [r.duration for r in done if r.duration is not None]
    p50, p95 = _pct(durs, 0.5), _pct(durs, 0.95)
    fail = next((r for r in lane.runs if outcome_class(r.outcome) in ("failed", "timeout")), None)
    last = (f'<span class="dot {outcome_class(fail.outcome)}"></span>{escape(_local(fail.started))} '
            f'{escape(fail.outcome)}' + (f" (exit {fail.exit_code})" if fail.exit_code is not None
                                         else "")) if fail else "–"
    q = lane.queue
    queue = f"{q.inbox} waiting, {q.processing} processing, {q.failed} failed" if q else "–"
    def fmt(v: int | None) -> str:
        return "–" if v is None else format_duration(v)

    busy = sum(1 for r in lane.runs if r.outcome == "busy")
    return (f'<tr data-job="{escape(lane.job.name)}"><th scope="row">{escape(lane.job.name)}</th>'
            f'<td class="n">{len(done):,}</td><td class="n">{rate}</td><td class="n">{fmt(p50)}</td>'
            f'<td class="n">{fmt(p95)}</td><td class="n">{busy}</td>'
            f'<td class="n">{len(lane.missed)}</td><td>{last}</td><td>{escape(queue)}</td></tr>')


CSS = """
:root { --ink:#1d2330; --muted:#5f6b7a; --line:#dfe3ea; --bg:#ffffff; --lane:#f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; font: 14px/1.45 -apple-system, "Segoe UI", Roboto,
       "DejaVu Sans", Arial, sans-serif; color: var(--ink); background: var(--bg); }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 0 0 12px; color: var(--muted); }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.lanes { border-top: 1px solid var(--line); }
.lane { display: grid; grid-template-columns: 200px 1fr; align-items: center;
        border-bottom: 1px solid var(--line); min-height: 34px; }
.lane .name { padding: 4px 10px 4px 0; font-weight: 600; overflow: hidden;
              text-overflow: ellipsis; white-space: nowrap; }
.lane .name small { display: block; font-weight: 400; color: var(--muted); font-size: 12px; }
.track { position: relative; background: var(--lane); height: 28px; }
.track svg { position: absolute; inset: 0; width: 100%; height: 100%; display: block; }
.track line.grid { stroke: #dde2ea; stroke-width: 1; vector-effect: non-scaling-stroke; }
.track .none { position: absolute; left: 8px; top: 5px; color: var(--muted); font-size: 12px; }
.axis { display: grid; grid-template-columns: 200px 1fr; height: 20px; color: var(--muted);
        font-size: 12px; }
.axis .ticks { position: relative; }
.tick { position: absolute; top: 2px; transform: translateX(-50%); white-space: nowrap; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); }
thead th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.empty-page { padding: 40px; text-align: center; color: var(--muted);
              border: 1px dashed var(--line); }
"""


def render(namespace: str, lanes: list[Lane], start: datetime, end: datetime,
           unknown: tuple[tuple[str, str], ...] = ()) -> str:
    colour_css = "".join(f".{k} {{ fill: {v}; background: {v}; }}\n" for k, v in COLOURS.items())
    colour_css += ".mark.missed { fill: #6a3d9a; }\n"
    total = sum(len(lane.runs) for lane in lanes)
    days = round((end - start).total_seconds() / 86400)
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>schedgen report: {escape(namespace)}</title>",
        f"<style>{CSS}{colour_css}</style></head><body>",
        f"<h1>schedgen: namespace {escape(namespace)}</h1>",
        f'<p class="sub">{len(lanes)} job{"s" if len(lanes) != 1 else ""}, {total:,} run'
        f'{"s" if total != 1 else ""} in the last {days} day{"s" if days != 1 else ""}: '
        f"{escape(_local(start))} – {escape(_local(end))} ({escape(_local(end, '%Z'))})</p>",
        '<div class="legend">' + "".join(
            f'<span><i class="dot {k}"></i>{k}</span>' for k in ORDER) + "</div>",
    ]
    # a scheduler that could not be read: missed firings may be its jobs not installed
    parts += [f'<p class="unknown" data-target="{escape(t)}">state unknown: {escape(w)}</p>'
              for t, w in unknown]
    if not lanes:
        parts.append('<div class="empty-page">No jobs in this config.</div>')
    else:
        ticks = _ticks(start, end)
        parts.append(f'<div class="axis"><div></div><div class="ticks">{_axis(ticks)}'
                     "</div></div>")
        parts.append('<div class="lanes">')
        for lane in lanes:
            n = len(lane.runs) + len(lane.missed)
            drawn = _bins(lane, start, end) if n > MAX_MARKS else _marks(lane, start, end)
            mode = "binned" if n > MAX_MARKS else "marks"
            plural = "s" if days != 1 else ""
            none = "" if n else f'<span class="none">no runs in the last {days} day{plural}</span>'
            parts.append(
                f'<section class="lane" data-job="{escape(lane.job.name)}" data-mode="{mode}">'
                f'<div class="name" title="{escape(lane.job.description or lane.job.name)}">'
                f'{escape(lane.job.name)}<small>{escape(" | ".join(lane.job.schedule_text))}'
                f'</small></div><div class="track">{none}'
                f'<svg viewBox="0 0 {W} {H}" preserveAspectRatio="none" role="img" '
                f'aria-label="runs of {escape(lane.job.name)}">{_grid(ticks)}{"".join(drawn)}</svg></div>'
                "</section>")
        parts.append("</div>")
        parts.append("<h2>Summary</h2><table><thead><tr><th>job</th><th>runs</th>"
                     "<th>success</th><th>p50</th><th>p95</th><th>busy</th><th>missed</th>"
                     "<th>last failure</th><th>queue</th></tr></thead><tbody>")
        parts += [_summary_row(lane) for lane in lanes]
        parts.append("</tbody></table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


class Written(NamedTuple):
    runs: int
    unknown: tuple[tuple[str, str], ...]  # (target, why) a scheduler could not be read


def report(config_path: Path, out: Path, days: int, now: datetime | None = None) -> Written:
    namespace, lanes, start, end = collect(config_path, days, now)
    unknown = unknown_state(config_path)
    text = render(namespace, lanes, start, end, unknown)
    try:
        atomic_write(out, text, 0o644)
    except OSError as exc:
        raise SystemOpError(f"cannot write {out}: {exc.strerror}") from None
    return Written(sum(len(lane.runs) for lane in lanes), unknown)
