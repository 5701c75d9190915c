"""The drawn parts of `schedgen report`: a lane's marks, its duration plot, the time axis.

A lane's SVG user space is W x H units stretched to the lane's width, about a pixel a
unit on a laptop screen. Every pass here is linear in the lane's runs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape
from typing import NamedTuple

from schedgen.outcomes import history
from schedgen.schedule.upcoming import local_zone
from schedgen.units import format_duration

MAX_MARKS = 400
BINS = 240
W, H = 1000, 28  # a lane's SVG user space (stretched to the lane's width)
PLOT_H = 40  # the duration plot's, drawn about as many pixels high
COLOURS = {"ok": "#2f9e5b", "empty": "#9fd5b3", "failed": "#d62839", "timeout": "#f28c28",
           "busy": "#8a94a6", "missed": "#6a3d9a", "running": "#3a86ff", "skipped": "#c9cfd8"}
DURATION = "#1b4f8a"  # the duration plot's line
# Outcomes shown as "failed" (they all mean the work was not done).
AS_FAILED = {"interrupted", "crashed", "precondition"}
ORDER = ("ok", "empty", "running", "busy", "skipped", "timeout", "failed", "missed")
PROBLEMS = ("timeout", "failed")
# Runs closer than GAP units apart are drawn as one group (a stacked mark with a count),
# a group spanning at most SPAN units; a failure or timeout is at least WIDE units wide.
GAP, SPAN, NARROW, WIDE = 5.0, 12.0, 3.0, 5.0


def outcome_class(outcome: str) -> str:
    return "failed" if outcome in AS_FAILED else (outcome if outcome in COLOURS else "failed")


def local(t: datetime, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return t.astimezone(local_zone()).strftime(fmt)


def pct(values: list[int], p: float) -> int | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p * len(s)) - 1))]


class Frame(NamedTuple):
    """The window drawn: x in [0, W] of a time in [start, end]."""
    start: datetime
    end: datetime

    @property
    def span(self) -> float:
        return (self.end - self.start).total_seconds() or 1.0

    def x(self, t: datetime) -> float:
        return max(0.0, min(1.0, (t - self.start).total_seconds() / self.span)) * W


def tip(r: history.Run) -> str:
    dur = "running" if r.duration is None else format_duration(r.duration)
    code = "" if r.exit_code is None else f" (exit {r.exit_code})"
    item = f" · {r.item}" if r.item else ""
    return f"{r.run_id} · {local(r.started, '%Y-%m-%d %H:%M:%S')} · {dur} · {r.outcome}{code}{item}"


def _r(v: float) -> str:
    return f"{round(v, 2):g}"


class Group(NamedTuple):
    x0: float
    x1: float
    runs: list[history.Run]


def groups(runs: Sequence[history.Run], frame: Frame) -> list[Group]:
    """Runs (newest first) in time order, those close together grouped."""
    out: list[Group] = []
    last = -math.inf
    for r in reversed(runs):
        x = frame.x(r.started)
        if out and x - last < GAP and x - out[-1].x0 < SPAN:
            out[-1].runs.append(r)
            out[-1] = out[-1]._replace(x1=x)
        else:
            out.append(Group(x, x, [r]))
        last = x
    return out


def marks(runs: Sequence[history.Run], missed: Sequence[datetime], frame: Frame,
          anchors: dict[str, str]) -> tuple[list[str], list[str]]:
    """(SVG marks, HTML count labels). Groups without a failure first, so a failure or
    timeout is drawn over its neighbours; each outcome of a group keeps a visible share."""
    plain: list[str] = []
    bad: list[str] = []
    labels: list[str] = []
    for g in groups(runs, frame):
        counts = Counter(outcome_class(r.outcome) for r in g.runs)
        problem = any(counts[k] for k in PROBLEMS)
        width = max(WIDE if problem else NARROW, g.x1 - g.x0 + NARROW)
        left = min(max(0.0, (g.x0 + g.x1) / 2 - width / 2), W - width)
        into = bad if problem else plain
        if len(g.runs) == 1:
            r = g.runs[0]
            cls = outcome_class(r.outcome)
            rect = (f'<rect class="mark {cls}" data-outcome="{cls}" data-count="1" x="{_r(left)}" '
                    f'y="4" width="{_r(width)}" height="{H - 8}"><title>{escape(tip(r))}</title>'
                    "</rect>")
            anchor = anchors.get(r.run_id)
            into.append(f'<a href="#{anchor}">{rect}</a>' if anchor else rect)
            continue
        words = ", ".join(f"{counts[k]} {k}" for k in ORDER if counts[k])
        shown = [tip(r) for r in g.runs[:8]]
        more = len(g.runs) - len(shown)
        title = escape(f"{len(g.runs)} runs: {words}\n" + "\n".join(shown)
                       + (f"\n… and {more} more" if more else ""))
        stack = "".join(_stack(counts, left, width, 4.0, float(H - 8), "mark", title))
        anchor = next((a for r in g.runs if (a := anchors.get(r.run_id))), None)
        into.append(f'<a href="#{anchor}">{stack}</a>' if anchor else stack)
        if problem:
            n = sum(counts[k] for k in PROBLEMS)
            labels.append(f'<span class="count" style="left:{100 * (left + width / 2) / W:.2f}%" '
                          f'title="{escape(words)}">{n}</span>')
    tri = [f'<path class="mark missed" data-outcome="missed" data-count="1" '
           f'd="M{_r(x - 5)} 1 L{_r(x + 5)} 1 L{_r(x)} 12 Z"><title>missed firing '
           f'{escape(local(t))}</title></path>' for t in missed for x in (frame.x(t),)]
    return plain + bad + tri, labels


def _stack(counts: Counter[str], x: float, width: float, top: float, height: float,
           kind: str, title: str) -> list[str]:
    """One rect per outcome, stacked bottom up in ORDER (failures on top), each at least
    a few units high so a single failure among many runs still shows."""
    total = sum(counts.values())
    y = top + height
    out = []
    for k in ORDER:
        if not counts[k]:
            continue
        h = max(4.0 if k in PROBLEMS else 1.5, height * counts[k] / total)
        y = max(top, y - h)
        out.append(f'<rect class="{kind} {k}" data-outcome="{k}" data-count="{counts[k]}" '
                   f'x="{_r(x)}" y="{_r(y)}" width="{_r(width)}" height="{_r(h)}">'
                   f"<title>{title}</title></rect>")
    return out


def bins(runs: Sequence[history.Run], missed: Sequence[datetime], frame: Frame) -> list[str]:
    counts: list[Counter[str]] = [Counter() for _ in range(BINS)]
    durations: list[list[int]] = [[] for _ in range(BINS)]
    for r in runs:
        i = _bin(r.started, frame)
        counts[i][outcome_class(r.outcome)] += 1
        if r.duration is not None:
            durations[i].append(r.duration)
    for t in missed:
        counts[_bin(t, frame)]["missed"] += 1
    out = []
    width = W / BINS
    for i, c in enumerate(counts):
        if not sum(c.values()):
            continue
        t0 = frame.start + timedelta(seconds=frame.span * i / BINS)
        t1 = frame.start + timedelta(seconds=frame.span * (i + 1) / BINS)
        p50 = pct(durations[i], 0.5)
        words = ", ".join(f"{c[k]} {k}" for k in ORDER if c[k])
        title = escape(f"{local(t0)} – {local(t1, '%H:%M')}: {words}"
                       + (f"; p50 {format_duration(p50)}" if p50 is not None else ""))
        out += _stack(c, i * width, width, 2.0, float(H - 4), "bin", title)
    return out


def _bin(t: datetime, frame: Frame) -> int:
    return min(BINS - 1, max(0, int((t - frame.start).total_seconds() / frame.span * BINS)))


def duration_plot(runs: Sequence[history.Run], frame: Frame, binned: bool) -> tuple[str, int]:
    """(SVG body, the top of its scale in seconds): each finished run's duration at its
    start, failures and timeouts as dots of their colour; binned, each column's median
    as the line and its longest run as a pale bar."""
    done = [r for r in reversed(runs) if r.duration is not None and r.outcome != "busy"]
    if not done:
        return "", 0
    top = max(1, max(r.duration or 0 for r in done))

    def y(d: int) -> str:
        return _r(PLOT_H - 3 - (PLOT_H - 6) * d / top)

    if binned:
        cols: list[list[int]] = [[] for _ in range(BINS)]
        for r in done:
            cols[_bin(r.started, frame)].append(r.duration or 0)
        width = W / BINS
        points = []
        bars = []
        for i, ds in enumerate(cols):
            if not ds:
                continue
            x = (i + 0.5) * width
            points.append(f"{_r(x)},{y(pct(ds, 0.5) or 0)}")
            bars.append(f'<rect class="dmax" x="{_r(i * width)}" y="{y(max(ds))}" '
                        f'width="{_r(width)}" height="{_r(PLOT_H - 3 - float(y(max(ds))))}"/>')
        line = f'<polyline class="dline" points="{" ".join(points)}"/>'
        return "".join(bars) + line, top
    points = [f"{_r(frame.x(r.started))},{y(r.duration or 0)}" for r in done]
    dots = [f'<rect class="ddot {cls}" x="{_r(frame.x(r.started) - 2)}" '
            f'y="{_r(float(y(r.duration or 0)) - 2)}" width="4" height="4"/>'
            for r in done if (cls := outcome_class(r.outcome)) in PROBLEMS]
    return f'<polyline class="dline" points="{" ".join(points)}"/>' + "".join(dots), top


STEPS = (60, 300, 600, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400,
         7 * 86400, 14 * 86400, 30 * 86400)


def ticks(frame: Frame) -> list[tuple[float, str]]:
    """(fraction of the window, label) at most about 10 round times: minutes, hours, days."""
    step = next((s for s in STEPS if frame.span / s <= 10), STEPS[-1] * math.ceil(
        frame.span / STEPS[-1] / 10))
    z = local_zone()
    first = frame.start.astimezone(z)
    midnight = first.replace(hour=0, minute=0, second=0, microsecond=0)
    out = []
    if step < 86400:
        into = (first - midnight).total_seconds()
        t = midnight + timedelta(seconds=math.ceil(into / step) * step)
        fmt = "%H:%M" if frame.span <= 86400 else "%d %H:%M"
    else:
        t = midnight + timedelta(days=1) if first > midnight else midnight
        fmt = "%b %d" if frame.span <= 180 * 86400 else "%d %b %Y"  # a year's ends apart
    while t <= frame.end:
        if t >= frame.start:
            out.append(((t - frame.start).total_seconds() / frame.span, t.strftime(fmt)))
        t = t + timedelta(seconds=step)  # wall-clock steps: a DST change keeps round labels
    return out


def axis(marks_at: list[tuple[float, str]]) -> str:
    # Labels are centred on their line: one at either edge would be cut in half.
    return "".join(f'<span class="tick" style="left:{100 * f:.2f}%">{escape(label)}</span>'
                   for f, label in marks_at if 0.03 < f < 0.97)


def grid(marks_at: list[tuple[float, str]], height: int) -> str:
    return "".join(f'<line class="grid" x1="{_r(f * W)}" x2="{_r(f * W)}" y1="0" '
                   f'y2="{height}"/>' for f, _ in marks_at)
