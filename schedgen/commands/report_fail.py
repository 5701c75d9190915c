"""The report's failure list: each failure or timeout with its exit, duration and item,
the tail of its log inlined (bounded, shown safely) and, when the page is written beside
the logs, relative links to the run's stdout.log and stderr.log.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from schedgen.commands.report_draw import PROBLEMS, local, outcome_class
from schedgen.outcomes import history
from schedgen.records import untrusted
from schedgen.records.shown import shown
from schedgen.units import format_duration

LISTED = 20  # failures listed per job, newest first (the rest are counted)
TAIL_LINES = 12
TAIL_BYTES = 4096
LINE_CHARS = 240


class Failure(NamedTuple):
    anchor: str
    run: history.Run


def failures(lane_no: int, runs: list[history.Run]) -> tuple[list[Failure], int]:
    """(the newest LISTED failures of a lane with their anchors, how many more)."""
    bad = [r for r in runs if outcome_class(r.outcome) in PROBLEMS]
    return ([Failure(f"f{lane_no}-{i}", r) for i, r in enumerate(bad[:LISTED])],
            max(0, len(bad) - LISTED))


def _run_dir(log_dir: Path, run_id: str) -> Path | None:
    # The run ID is read from events a command could write: only a plain folder name.
    if run_id in ("", ".", "..") or "/" in run_id or "\\" in run_id or not run_id.isprintable():
        return None
    d = log_dir / "runs" / run_id
    # The job's command owns the folder: a link out of it is not its run.
    return d if d.is_dir() and not d.is_symlink() else None


def tail(log_dir: Path, path: Path) -> list[str]:
    """The last lines of a log, read from its end (a log can be large), shown safely;
    read as untrusted.py says (the log folder may be another account's)."""
    try:
        fd = untrusted.open_below(log_dir, path)
    except OSError:
        return []
    try:
        with os.fdopen(fd, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read(TAIL_BYTES)
    except OSError:
        return []
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    if size > TAIL_BYTES and len(lines) > 1:
        lines = lines[1:]  # the first is cut
    out = []
    for line in lines[-TAIL_LINES:]:
        text = shown(line)
        out.append(text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + " …")
    return out


def _link(path: Path, out_dir: Path | None, label: str) -> str:
    if out_dir is None or path.is_symlink() or not path.is_file():
        return ""
    try:
        rel = path.resolve().relative_to(out_dir.resolve())
    except ValueError:
        return ""  # not beside the page: a link would break when the page is moved
    return f'<a href="{escape(quote(rel.as_posix()))}">{label}</a>'


def item(job: str, log_dir: Path, f: Failure, out_dir: Path | None) -> str:
    r = f.run
    cls = outcome_class(r.outcome)
    dur = "–" if r.duration is None else format_duration(r.duration)
    code = "" if r.exit_code is None else f", exit {r.exit_code}"
    head = (f'<span class="dot {cls}"></span><b>{escape(local(r.started, "%Y-%m-%d %H:%M:%S"))}'
            f"</b> {escape(job)}: {escape(r.outcome)}{code}, {dur}"
            f' <span class="rid">{escape(r.run_id)}</span>'
            + (f" · item {escape(r.item)}" if r.item else "")
            + (f" · attempt {r.attempt_text()}" if r.attempt else ""))
    run_dir = _run_dir(log_dir, r.run_id)
    if run_dir is None:
        body = ('<p class="nolog">no run folder (pruned by keep_runs, or the run never '
                "started its command)</p>")
    else:
        links = " ".join(x for x in (_link(run_dir / "stderr.log", out_dir, "stderr.log"),
                                     _link(run_dir / "stdout.log", out_dir, "stdout.log")) if x)
        err, out = tail(log_dir, run_dir / "stderr.log"), tail(log_dir, run_dir / "stdout.log")
        which, lines = ("stderr", err) if err else ("stdout", out)
        text = "\n".join(escape(x) for x in lines)
        body = ((f'<p class="links">{links}</p>' if links else "")
                + (f'<pre class="tail" data-log="{which}">{text}</pre>' if lines else
                   '<p class="nolog">the run wrote nothing</p>'))
    return f'<li id="{f.anchor}" class="failure" data-kind="{cls}">{head}{body}</li>'
