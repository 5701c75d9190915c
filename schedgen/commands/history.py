"""The work behind `history` and `logs`: typed arguments in, text or JSON out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

from schedgen.commands import scopes
from schedgen.config import load as cfg
from schedgen.config.model import Config, Job
from schedgen.errors import UsageError
from schedgen.outcomes import events, history, missed
from schedgen.records.runs import newest_first, run_order
from schedgen.records.shown import shown
from schedgen.schedule.upcoming import local_zone
from schedgen.schedule.when import human
from schedgen.units import parse_duration


class JobHistory(NamedTuple):
    job: Job
    runs: tuple[history.Run, ...]
    missed: missed.Missed | None
    truncated: bool = False  # -n cut the runs short: older missed firings are not shown
    skipped: int = 0  # event lines read that were no record (see events.Skipped)


def pick(config: Config, names: list[str] | None) -> list[Job]:
    if not names:
        return list(config.jobs)
    unknown = [x for x in names if config.job(x) is None]
    if unknown:
        known = ", ".join(j.name for j in config.jobs)
        raise UsageError(f"no job named {', '.join(map(repr, unknown))} in {config.path} "
                         f"(jobs: {known})")
    return [j for n in dict.fromkeys(names) if (j := config.job(n)) is not None]


def since_of(value: str | None, now: datetime) -> datetime | None:
    if value is None:
        return None
    try:
        return now - timedelta(seconds=parse_duration(value))
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None


def job_history(config_path: Path, names: list[str] | None, n: int | None, since: str | None,
                now: datetime | None = None) -> list[JobHistory]:
    if n is not None and n < 1:
        raise UsageError("-n must be at least 1")
    config = cfg.load(config_path)
    jobs = pick(config, names)
    now = now or datetime.now(UTC)
    start = since_of(since, now)
    limit = n if n is not None else (None if start is not None else 20)
    records = scopes.Records(config.namespace)
    made: missed.Made = {}  # one index of the record per record
    out = []
    for job in jobs:
        skipped = events.Skipped()
        runs = tuple(history.runs(job, limit=limit, since=start, skipped=skipped))
        # Missed firings over the span the runs cover (or --since), shown among them.
        truncated = limit is not None and len(runs) >= limit
        span = start if start is not None else (runs[-1].started if truncated else None)
        m = missed.missed(job, records.of(job), now, since=span or None,
                          installs=missed.installs_of(made, records.of(job)))
        out.append(JobHistory(job, runs, m, truncated, skipped.n))
    return out


def _zone(job: Job) -> tzinfo:
    """Times are shown in the job's own zone when it has one (its schedule's), else the host's."""
    return ZoneInfo(job.timezone) if job.timezone else local_zone()


def rows(h: JobHistory) -> list[tuple[datetime, list[str]]]:
    zone = _zone(h.job)

    def _local(t: datetime) -> str:
        return human(t, zone)

    out = [(r.started, [r.run_id, _local(r.started),
                        "-" if r.duration is None else f"{r.duration}s",
                        r.outcome + (" (smoke)" if r.smoke else ""),
                        "-" if r.exit_code is None else str(r.exit_code),
                        r.attempt_text() or "-", r.item or ""])
           for r in h.runs]
    oldest = h.runs[-1].started if h.truncated and h.runs else None
    for f in (h.missed.firings if h.missed else ()):
        if oldest is not None and f.at < oldest:
            continue  # older than the runs shown
        what = "missed" if f.state == "missed" else (
            f"late (ran {_local(f.ran_at)[11:16]})" if f.ran_at else "late")
        out.append((f.at, ["-", _local(f.at), "-", what, "-", "-", ""]))
    out.sort(key=lambda x: x[0], reverse=True)
    return out


def history_text(hs: list[JobHistory]) -> str:
    lines: list[str] = []
    for h in hs:
        # ATTEMPT only for a job whose runs say one (retries, a queue item's tries).
        tries = any(r.attempt is not None for r in h.runs)
        head = ["RUN ID", "START", "DURATION", "OUTCOME", "EXIT", "ATTEMPT", "ITEM"]
        zoned = f", times in {h.job.timezone}" if h.job.timezone else ""
        lines.append(f"{h.job.name}  ({' | '.join(h.job.schedule_text)}{zoned})")
        table = [r for _, r in rows(h)]
        if not tries:
            head, table = _without(5, head), [_without(5, r) for r in table]
        note = [f"  {events.skipped_words(h.skipped)}"] if h.skipped else []
        if not table:
            lines += ["  no runs recorded", *note, ""]
            continue
        widths = [max(len(x[i]) for x in [head, *table]) for i in range(len(head))]
        for r in [head, *table]:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if h.missed and h.missed.firings:
            lines.append(f"  {missed.missed_text(h.missed)}")
        lines += [*note, ""]
    return "\n".join(lines).rstrip("\n")


def _without(i: int, row: list[str]) -> list[str]:
    return row[:i] + row[i + 1:]


def history_json(hs: list[JobHistory]) -> dict[str, Any]:
    return {"jobs": [{"job": h.job.name, "runs": [r.as_json() for r in h.runs],
                      "missed": missed.missed_json(h.missed), "skipped_lines": h.skipped}
                     for h in hs]}


def log_file(config_path: Path, name: str, run_id: str | None, stderr: bool) -> Path:
    """The stdout (or stderr) file of a run: the given one (a unique prefix will do), else
    the newest that has a run directory."""
    config = cfg.load(config_path)
    job = pick(config, [name])[0]
    runs_dir = job.log_dir / "runs"
    which = "stderr.log" if stderr else "stdout.log"
    if run_id is None:
        for ev in events.back(job.log_dir):
            found_id = ev.get("run_id")
            if ev.get("event") != "start" or not _folder_name(found_id):
                continue
            assert isinstance(found_id, str)
            if (runs_dir / found_id).is_dir():
                return runs_dir / found_id / which
            break  # pruned: fall back to the folder
        try:
            ids = newest_first(d.name for d in runs_dir.iterdir() if d.is_dir())
        except OSError:
            ids = []
        if not ids:
            raise UsageError(f"job {name!r} has no run records in {runs_dir}")
        return runs_dir / ids[0] / which
    if _folder_name(run_id) and (runs_dir / run_id).is_dir():
        return runs_dir / run_id / which
    try:
        found = sorted((d.name for d in runs_dir.iterdir() if d.name.startswith(run_id)),
                       key=run_order)
    except OSError:
        found = []
    if len(found) == 1:
        return runs_dir / found[0] / which
    if found:
        raise UsageError(f"run ID {shown(run_id)!r} is ambiguous: "
                         f"{', '.join(shown(f) for f in found[:5])}")
    raise UsageError(f"job {name!r} has no run {shown(run_id)!r} in {runs_dir} (busy, empty and "
                     "precondition runs have no run directory; old ones are pruned by keep_runs)")


def _folder_name(value: object) -> bool:
    """A run ID that names a folder inside runs/ (an event's may say anything)."""
    return isinstance(value, str) and value not in ("", ".", "..") and "/" not in value \
        and "\0" not in value
