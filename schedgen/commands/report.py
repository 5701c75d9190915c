"""`schedgen report`: one self-contained HTML page that answers "what failed and why".

Inline CSS and SVG only (no script, nothing fetched). By default the window fits the
records: from the first run (or the install) to now, so a day-old install fills the
width; `--days`/`--since`/`--until` choose it. A lane per job draws each run as a mark
coloured by outcome (failures and timeouts over the rest, runs too close to tell apart
stacked with a count) and missed firings, above a plot of durations over time; a lane
with more than MAX_MARKS runs is drawn as BINS columns. The table gives runs, success
rate, p50/p95, last and next run; the failure list gives each failure's exit, item and
log tail, linked to its log files when the page is written beside the logs.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from html import escape
from pathlib import Path
from typing import NamedTuple

from schedgen.commands import report_fail as fail
from schedgen.commands import scopes
from schedgen.commands.next import next_times
from schedgen.commands.report_draw import (
    BINS,
    COLOURS,
    DURATION,
    MAX_MARKS,
    ORDER,
    PLOT_H,
    Frame,
    H,
    W,
    axis,
    bins,
    duration_plot,
    grid,
    local,
    marks,
    outcome_class,
    pct,
    ticks,
)
from schedgen.commands.report_when import days_back
from schedgen.commands.status import unknown as unknown_state
from schedgen.config.model import Job
from schedgen.config.select import load_here
from schedgen.errors import SystemOpError, UsageError
from schedgen.machine import pause
from schedgen.machine.fs import atomic_write
from schedgen.outcomes import history, missed
from schedgen.records import runs as run_records
from schedgen.schedule.upcoming import local_zone
from schedgen.units import format_duration

__all__ = ["BINS", "COLOURS", "DURATION", "FIT_MAX", "MAX_MARKS", "Lane", "collect", "render", "report"]

MIN_SPAN = timedelta(minutes=10)  # a fitted window is never narrower
EMPTY_SPAN = timedelta(days=1)  # the window when there is no record at all
FIT_MAX = timedelta(days=366)  # a fitted window is never wider


class Lane(NamedTuple):
    job: Job
    runs: tuple[history.Run, ...]
    missed: tuple[datetime, ...]
    queue: run_records.QueueDepth | None
    last: history.Run | None = None  # the newest run that was not busy, in or before the window
    next_at: datetime | None = None  # the schedule's next firing after now
    next_note: str = ""  # why there is none (disabled, @reboot only...)
    paused: str = ""  # "paused until ..." while `schedgen pause` holds it
    before: int = 0  # runs older than a fitted window (FIT_MAX), not drawn


def collect(config_path: Path, days: int | None = None, now: datetime | None = None,
            since: datetime | None = None, until: datetime | None = None,
            ) -> tuple[str, list[Lane], datetime, datetime]:
    """(namespace, lanes, start, end): ``days`` back from ``until`` (default now), or from
    ``since``, or fitted to the records (the first run or install, a little before)."""
    if days is not None and days < 1:
        raise UsageError("--days must be at least 1")
    if days is not None and since is not None:
        raise UsageError("--days and --since both choose where the window starts: give one")
    config = load_here(config_path)
    now = now or datetime.now(UTC)
    end = until or now
    if since is not None and since >= end:
        raise UsageError("--since must be before --until (and before now)")
    start = days_back(end, days) if days is not None else since
    records = scopes.Records(config.namespace)  # each job's install time from its scope's
    read = {job.name: history.runs(job, since=start) for job in config.jobs}
    made: missed.Made = {}  # one index of the record per record
    fitted = start is None
    if start is None:
        firsts = [min(r.started for r in rs) for rs in read.values() if rs]
        firsts += [t for job in config.jobs if (t := missed.installs_of(made, records.of(job)).at(job))]
        # One run stamped long ago (a clock reset, a line the job wrote) would leave the
        # rest a sliver at the right edge: a fitted window reaches back FIT_MAX at most.
        firsts = [max(t, end - FIT_MAX) for t in firsts if t < end]
        if firsts:
            first = min(firsts)
            span = max(MIN_SPAN, end - first)
            start = (end - span - span * 0.01).replace(second=0, microsecond=0)
            start = max(start, end - FIT_MAX)
        else:
            start = end - EMPTY_SPAN
    lanes = []
    z = local_zone()
    for job in config.jobs:
        every = read[job.name]
        last = next((r for r in every if r.outcome != "busy" and r.started <= end), None)
        rs = tuple(r for r in every if start <= r.started <= end)
        m = missed.missed(job, records.of(job), min(now, end), since=start,
                          installs=missed.installs_of(made, records.of(job)))
        gone = tuple(f.at for f in m.missed if f.at <= end) if m else ()
        up = next_times(job, 1, now.astimezone(z).replace(microsecond=0), config.namespace)
        p = pause.paused(config.namespace, job.name, now)
        before = sum(1 for r in every if r.started < start) if fitted else 0
        lanes.append(Lane(job, rs, gone, run_records.queue_depth(job),
                          last or history.last(job), up.times[0] if up.times else None,
                          "; ".join(up.notes), p.text() if p else "", before))
    return config.namespace, lanes, start, end


def window_words(start: datetime, end: datetime, now: datetime | None = None) -> str:
    """`in the last 7 days` for whole days up to now, else `since ...` or `from ... to ...`."""
    seconds = (end - start).total_seconds()
    if now is not None and abs((end - now).total_seconds()) >= 1:
        return f"from {local(start)} to {local(end)}"
    if seconds % 86400 == 0:
        days = int(seconds // 86400)
        return f"in the last {days} day{'s' if days != 1 else ''}"
    return f"since {local(start)}"


def _run_words(r: history.Run | None) -> str:
    if r is None:
        return "–"
    dur = "" if r.duration is None else f", {format_duration(r.duration)}"
    code = f" (exit {r.exit_code})" if r.exit_code not in (None, 0) else ""
    return (f'<span class="dot {outcome_class(r.outcome)}"></span>'
            f"{escape(local(r.started))} {escape(r.outcome)}{code}{dur}")


def _next_words(lane: Lane) -> str:
    if lane.next_at is not None:
        return escape(local(lane.next_at))
    return escape(lane.next_note or "–")


def _summary_row(lane: Lane) -> str:
    done = [r for r in lane.runs if r.outcome not in ("busy", "empty", "running", "skipped")]
    ok = sum(1 for r in done if r.outcome == "ok")
    bad = sum(1 for r in done if outcome_class(r.outcome) in ("failed", "timeout"))
    rate = f"{100 * ok / len(done):.1f}%" if done else "–"
    durs = [r.duration for r in done if r.duration is not None]
    p50, p95 = pct(durs, 0.5), pct(durs, 0.95)
    q = lane.queue
    queue = f"{q.inbox} waiting, {q.processing} processing, {q.failed} failed" if q else "–"

    def fmt(v: int | None) -> str:
        return "–" if v is None else format_duration(v)

    busy = sum(1 for r in lane.runs if r.outcome == "busy")
    return (f'<tr data-job="{escape(lane.job.name)}"><th scope="row">{escape(lane.job.name)}</th>'
            f'<td class="n">{len(done):,}</td><td class="n">{bad:,}</td><td class="n">{rate}</td>'
            f'<td class="n">{fmt(p50)}</td><td class="n">{fmt(p95)}</td><td class="n">{busy}</td>'
            f'<td class="n">{len(lane.missed)}</td><td class="last">{_run_words(lane.last)}</td>'
            f'<td class="next">{_next_words(lane)}</td><td>{escape(queue)}</td></tr>')


CSS = """
:root { --ink:#1d2330; --muted:#5f6b7a; --line:#dfe3ea; --bg:#ffffff; --lane:#f5f7fa;
        --plot:#eef3fb; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px; font: 14px/1.45 -apple-system, "Segoe UI", Roboto,
       "DejaVu Sans", Arial, sans-serif; color: var(--ink); background: var(--bg); }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 0 0 12px; color: var(--muted); }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.dot.duration { height: 3px; width: 14px; background: var(--dur); }
.lanes { border-top: 1px solid var(--line); }
.lane { display: grid; grid-template-columns: 200px 1fr; align-items: center;
        border-bottom: 1px solid var(--line); padding: 4px 0; row-gap: 2px; }
.lane .name { padding: 0 10px 0 0; font-weight: 600; overflow: hidden;
              text-overflow: ellipsis; white-space: nowrap; }
.lane .name small, .lane .dlabel { display: block; font-weight: 400; color: var(--muted);
              font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.lane .dlabel { padding-right: 10px; }
.track { position: relative; background: var(--lane); height: 28px; }
.plot { position: relative; background: var(--plot); height: 40px; }
.track svg, .plot svg { position: absolute; inset: 0; width: 100%; height: 100%; display: block; }
svg line.grid { stroke: #dde2ea; stroke-width: 1; vector-effect: non-scaling-stroke; }
.track .none, .plot .none { position: absolute; left: 8px; top: 5px; color: var(--muted);
              font-size: 12px; }
.count { position: absolute; top: -7px; transform: translateX(-50%); background: var(--ink);
         color: #fff; font-size: 10px; line-height: 12px; padding: 0 3px; border-radius: 6px; }
polyline.dline { fill: none; stroke: var(--dur); stroke-width: 2;
                 vector-effect: non-scaling-stroke; }
rect.dmax { fill: #b9c9e3; }
.axis { display: grid; grid-template-columns: 200px 1fr; height: 20px; color: var(--muted);
        font-size: 12px; }
.axis .ticks { position: relative; }
.tick { position: absolute; top: 2px; transform: translateX(-50%); white-space: nowrap; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); }
thead th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
ul.failures { list-style: none; padding: 0; margin: 0; }
li.failure { border-left: 4px solid var(--line); padding: 4px 10px; margin: 0 0 10px; }
li.failure[data-kind=failed] { border-color: #d62839; }
li.failure[data-kind=timeout] { border-color: #f28c28; }
li.failure:target { background: #fff4d6; }
.rid { color: var(--muted); font-family: ui-monospace, "DejaVu Sans Mono", monospace;
       font-size: 12px; }
pre.tail { margin: 4px 0 0; padding: 6px 8px; background: #f5f7fa; font-size: 12px;
           white-space: pre-wrap; overflow-wrap: anywhere; max-height: 16em; overflow: auto; }
.links a { margin-right: 10px; } .nolog, .more { color: var(--muted); margin: 2px 0; }
.empty-page { padding: 40px; text-align: center; color: var(--muted);
              border: 1px dashed var(--line); }
"""


def _lane(lane: Lane, frame: Frame, marks_at: list[tuple[float, str]],
          anchors: dict[str, str], words: str) -> str:
    n = len(lane.runs) + len(lane.missed)
    binned = n > MAX_MARKS
    labels: list[str] = []
    if binned:
        drawn = bins(lane.runs, lane.missed, frame)
    else:
        drawn, labels = marks(lane.runs, lane.missed, frame, anchors)
    plot, top = duration_plot(lane.runs, frame, binned)
    name = escape(lane.job.name)
    none = "" if n else f'<span class="none">no runs {words}</span>'
    schedule = escape(" | ".join(lane.job.schedule_text))
    nxt = f"next {_next_words(lane)}"
    return (f'<section class="lane" data-job="{name}" data-mode="{"binned" if binned else "marks"}">'
            f'<div class="name" title="{escape(lane.job.description or lane.job.name)}">{name}'
            f"<small>{schedule}</small><small>{nxt}</small>"
            + (f'<small class="paused">{escape(lane.paused)}</small>' if lane.paused else "")
            + "</div>"
            f'<div class="track">{none}'
            f'<svg viewBox="0 0 {W} {H}" preserveAspectRatio="none" role="img" '
            f'aria-label="runs of {name}">{grid(marks_at, H)}{"".join(drawn)}</svg>'
            f'{"".join(labels)}</div>'
            f'<div class="dlabel">duration{f", top {format_duration(top)}" if plot else ""}</div>'
            f'<div class="plot" data-top="{top}">'
            + (f'<svg viewBox="0 0 {W} {PLOT_H}" preserveAspectRatio="none" role="img" '
               f'aria-label="duration of each run of {name}">{grid(marks_at, PLOT_H)}{plot}</svg>'
               if plot else '<span class="none">no finished runs</span>')
            + "</div></section>")


def render(namespace: str, lanes: list[Lane], start: datetime, end: datetime,
           unknown: tuple[tuple[str, str], ...] = (), out_dir: Path | None = None,
           words: str | None = None) -> str:
    """The page. Links to log files are made relative to ``out_dir`` (the page's folder),
    for the logs under it; without it, only the tails are shown. ``words`` say what the
    window is (default: as if it ended now)."""
    colour_css = "".join(f".{k} {{ fill: {v}; background: {v}; }}\n" for k, v in COLOURS.items())
    colour_css += f".mark.missed {{ fill: {COLOURS['missed']}; }}\n:root {{ --dur: {DURATION}; }}\n"
    total = sum(len(lane.runs) for lane in lanes)
    frame = Frame(start, end)
    words = words or window_words(start, end)
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>schedgen report: {escape(namespace)}</title>",
        f"<style>{CSS}{colour_css}</style></head>",
        f'<body data-start="{int(start.timestamp())}" data-end="{int(end.timestamp())}">',
        f"<h1>schedgen: namespace {escape(namespace)}</h1>",
        f'<p class="sub">{len(lanes)} job{"s" if len(lanes) != 1 else ""}, {total:,} run'
        f'{"s" if total != 1 else ""} {words}: '
        f"{escape(local(start))} – {escape(local(end))} ({escape(local(end, '%Z'))})</p>",
        '<div class="legend">' + "".join(
            f'<span><i class="dot {k}"></i>{k}</span>' for k in ORDER)
        + '<span><i class="dot duration"></i>duration</span></div>',
    ]
    before = sum(lane.before for lane in lanes)
    if before:
        parts.append(f'<p class="before">{before:,} older run{"s" if before != 1 else ""} '
                     f"not drawn (a fitted window reaches back a year at most; --since or "
                     f"--days to see them)</p>")
    # a scheduler that could not be read: missed firings may be its jobs not installed
    parts += [f'<p class="unknown" data-target="{escape(t)}">state unknown: {escape(w)}</p>'
              for t, w in unknown]
    if not lanes:
        parts.append('<div class="empty-page">No jobs in this config.</div>')
        parts.append("</body></html>\n")
        return "\n".join(parts)
    listed = [fail.failures(i, list(lane.runs)) for i, lane in enumerate(lanes)]
    marks_at = ticks(frame)
    parts.append(f'<div class="axis"><div></div><div class="ticks">{axis(marks_at)}</div></div>')
    parts.append('<div class="lanes">')
    for lane, (fs, _) in zip(lanes, listed, strict=True):
        parts.append(_lane(lane, frame, marks_at, {f.run.run_id: f.anchor for f in fs}, words))
    parts.append("</div>")
    parts.append("<h2>Summary</h2><table><thead><tr><th>job</th><th>runs</th><th>failed</th>"
                 "<th>success</th><th>p50</th><th>p95</th><th>busy</th><th>missed</th>"
                 "<th>last run</th><th>next run</th><th>queue</th></tr></thead><tbody>")
    parts += [_summary_row(lane) for lane in lanes]
    parts.append("</tbody></table>")
    n_bad = sum(len(fs) + more for fs, more in listed)
    parts.append(f'<h2>Failures and timeouts ({n_bad:,})</h2>')
    if not n_bad:
        parts.append(f'<p class="more">none {words}</p>')
    else:
        parts.append('<ul class="failures">')
        # Newest first across jobs: what went wrong last is read first.
        shown = sorted(((f, lane) for lane, (fs, _) in zip(lanes, listed, strict=True)
                        for f in fs), key=lambda x: x[0].run.started, reverse=True)
        parts += [fail.item(lane.job.name, lane.job.log_dir, f, out_dir) for f, lane in shown]
        for lane, (_, more) in zip(lanes, listed, strict=True):
            if more:
                parts.append(f'<li class="more">{escape(lane.job.name)}: {more:,} older '
                             f"failure{'s' if more != 1 else ''} not listed (schedgen history "
                             f"{escape(lane.job.name)})</li>")
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


class Written(NamedTuple):
    runs: int
    unknown: tuple[tuple[str, str], ...]  # (target, why) a scheduler could not be read
    words: str  # the window, as the page says it


def report(config_path: Path, out: Path, days: int | None = None, now: datetime | None = None,
           since: datetime | None = None, until: datetime | None = None) -> Written:
    now = now or datetime.now(UTC)
    namespace, lanes, start, end = collect(config_path, days, now, since, until)
    unknown = unknown_state(config_path)
    words = window_words(start, end, now)
    text = render(namespace, lanes, start, end, unknown, out.absolute().parent, words)
    try:
        atomic_write(out, text, 0o644)
    except OSError as exc:
        raise SystemOpError(f"cannot write {out}: {exc.strerror}") from None
    return Written(sum(len(lane.runs) for lane in lanes), unknown, words)
