"""A job's metrics in the Prometheus text exposition format (node_exporter's textfile
collector reads <metrics_dir>/schedgen_<namespace>_<job>.prom).

The wrapper writes the file as each run ends (templates/runtime/65-metrics.bash), from
the job's state file (<log dir>/.metrics: counters that survive rotation) and its busy
count (.metrics-busy). `schedgen metrics` prints the same families, the same way, plus
what only Python knows: missed firings and the next firing. Both files are read as
hostile input: a line that is not ours counts as none.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from schedgen.config.metrics_names import file_name, label_value, labels, prom_path
from schedgen.records import untrusted

__all__ = ["file_name", "label_value", "labels", "prom_path", "read_state", "read_busy", "text"]

PREFIX = "schedgen_job_"
OUTCOMES = ("ok", "failed", "timeout", "interrupted")
_STATE_FIELDS = 10  # format, ok, failed, timeout, interrupted, start, success, failure, dur, code


class State(NamedTuple):
    runs: tuple[int, int, int, int]  # by OUTCOMES
    last_start: int
    last_success: int
    last_failure: int
    last_duration: int
    last_exit_code: int


EMPTY = State((0, 0, 0, 0), 0, 0, 0, 0, 0)


def _digits(words: list[str]) -> list[int] | None:
    # The wrapper's own rule: plain decimal, at most 18 digits (bash's arithmetic).
    if not all(w.isascii() and w.isdigit() and (w == "0" or not w.startswith("0"))
               and len(w) <= 18 for w in words):
        return None
    return [int(w) for w in words]


def read_state(log_dir: Path) -> State | None:
    """The job's .metrics state; None when missing or not ours (a file of other text)."""
    try:
        raw = untrusted.read_below(log_dir, log_dir / ".metrics", 200)
    except OSError:
        return None
    words = raw.split(b"\n", 1)[0].decode("ascii", "replace").split()
    n = _digits(words[:_STATE_FIELDS]) if len(words) >= _STATE_FIELDS else None
    if n is None or n[0] != 1:
        return None
    return State((n[1], n[2], n[3], n[4]), n[5], n[6], n[7], n[8], n[9])


def read_busy(log_dir: Path) -> int:
    try:
        words = untrusted.read_below(log_dir, log_dir / ".metrics-busy", 32).split()
    except OSError:
        return 0
    n = _digits([w.decode("ascii", "replace") for w in words[:1]]) if words else None
    return n[0] if n else 0


def _family(name: str, kind: str, help_text: str, samples: list[tuple[str, int | float]]) -> str:
    lines = [f"# HELP {PREFIX}{name} {help_text}", f"# TYPE {PREFIX}{name} {kind}"]
    lines += [f"{PREFIX}{name}{{{lab}}} {value}" for lab, value in samples]
    return "\n".join(lines) + "\n"


def text(namespace: str, job: str, state: State, busy: int,
         queue: tuple[int, int, int] | None = None, missed: int | None = None,
         next_firing: int | None = None) -> str:
    """The job's families, in the wrapper's order and words (missed/next: Python only)."""
    lab = labels(namespace, job)
    out = [
        _family("last_start_timestamp_seconds", "gauge", "When the last run started (Unix time).",
                [(lab, state.last_start)]),
        _family("last_success_timestamp_seconds", "gauge",
                "When the last ok run ended (Unix time; 0: never).", [(lab, state.last_success)]),
        _family("last_failure_timestamp_seconds", "gauge",
                "When the last failed, timed out or interrupted run ended (Unix time; 0: never).",
                [(lab, state.last_failure)]),
        _family("last_duration_seconds", "gauge", "How long the last run took.",
                [(lab, state.last_duration)]),
        _family("last_exit_code", "gauge", "The last run's exit status.",
                [(lab, state.last_exit_code)]),
        _family("runs_total", "counter", "Runs ended, by outcome.",
                [(f'{lab},outcome="{o}"', n) for o, n in zip(OUTCOMES, state.runs, strict=True)]),
        _family("lock_busy_total", "counter", "Runs that found the job's lock held and gave up.",
                [(lab, busy)]),
    ]
    if queue is not None:
        out.append(_family("queue_items", "gauge",
                           "Queue items by folder: inbox, processing (claimed), failed.",
                           [(f'{lab},state="{s}"', n)
                            for s, n in zip(("inbox", "processing", "failed"), queue, strict=True)]))
    if missed is not None:
        out.append(_family("missed_firings", "gauge",
                           "Firings the schedule named with no run, over the last 7 days.",
                           [(lab, missed)]))
    if next_firing is not None:
        out.append(_family("next_firing_timestamp_seconds", "gauge",
                           "When the schedule fires next (Unix time).", [(lab, next_firing)]))
    return "".join(out)
