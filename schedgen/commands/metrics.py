"""`schedgen metrics [JOB] [--out DIR]`: the jobs' metrics without a scrape.

Counters come from the job's state file when the wrapper keeps one (metrics_dir set),
else from the run records (events, which rotation thins: then they are what is left);
missed firings (the last 7 days) and the next firing come from the schedule.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from schedgen.commands import scopes
from schedgen.commands.next import next_times
from schedgen.config.model import Config, Job
from schedgen.config.select import load_here
from schedgen.errors import UsageError
from schedgen.machine import ownership as state
from schedgen.machine.fs import atomic_write
from schedgen.outcomes import history, metrics, missed
from schedgen.records import runs as run_records

SCHEDULE_FILE = "schedgen-schedule_{namespace}_{job}.prom"


def from_records(job: Job) -> tuple[metrics.State, int]:
    """The state and busy count as the run records tell them (no state file)."""
    counts = dict.fromkeys(metrics.OUTCOMES, 0)
    busy = 0
    newest: history.Run | None = None
    success = failure = 0
    for run in history.runs(job):
        if run.outcome == "busy":
            busy += 1
            continue
        if run.outcome not in counts or run.smoke:
            continue  # running, crashed, empty, precondition: no finish of the wrapper's
        counts[run.outcome] += 1
        end = int(run.started.timestamp()) + (run.duration or 0)
        newest = newest or run
        if run.outcome == "ok":
            success = success or end
        else:
            failure = failure or end
    by = (counts["ok"], counts["failed"], counts["timeout"], counts["interrupted"])
    if newest is None:
        return metrics.EMPTY._replace(runs=by), busy
    return metrics.State(by, int(newest.started.timestamp()), success, failure,
                         newest.duration or 0, newest.exit_code or 0), busy


def job_text(config: Config, job: Job, now: datetime, record: state.Record,
             installs: missed.Installs | None = None) -> tuple[str, str]:
    """(every family, the schedule's families only) for one job."""
    st = metrics.read_state(job.log_dir)
    busy = metrics.read_busy(job.log_dir)
    if st is None:
        st, busy = from_records(job)
    q = run_records.queue_depth(job)
    queue = (q.inbox, q.processing, q.failed) if q else None
    m = missed.missed(job, record, now, installs=installs)
    n_missed = len(m.missed) if m else 0
    up = next_times(job, 1, now.astimezone())
    nxt = int(up.times[0].timestamp()) if up.times else None
    whole = metrics.text(config.namespace, job.name, st, busy, queue, n_missed, nxt)
    sched = metrics.text(config.namespace, job.name, st, busy, None, n_missed, nxt)
    # The schedule file holds only what the wrapper's own file lacks (no family twice).
    cut = sched.index(f"# HELP {metrics.PREFIX}missed_firings")
    return whole, sched[cut:]


def metrics_cmd(config_path: Path, name: str | None, out: Path | None,
                now: datetime | None = None) -> str:
    config = load_here(config_path)
    now = now or datetime.now(UTC)
    if name is not None and config.job(name) is None:
        known = ", ".join(j.name for j in config.jobs)
        raise UsageError(f"no job named {name!r} in {config.path} (jobs: {known})")
    jobs = [j for j in config.jobs if name is None or j.name == name]
    texts = []
    records = scopes.Records(config.namespace)
    made: missed.Made = {}  # one index of the record per record
    for job in jobs:
        record = records.of(job)
        whole, sched = job_text(config, job, now, record, missed.installs_of(made, record))
        texts.append(whole)
        if out is not None:
            atomic_write(out / SCHEDULE_FILE.format(namespace=config.namespace, job=job.name),
                         sched)
    return _merge(texts)


def _merge(texts: list[str]) -> str:
    """Several jobs' texts as one exposition: each family's HELP/TYPE once, its samples together."""
    families: dict[str, list[str]] = {}
    for t in texts:
        head = ""
        for line in t.splitlines():
            if line.startswith("# HELP "):
                head = line.split()[2]
                families.setdefault(head, [line])
            elif line.startswith("# TYPE "):
                if len(families[head]) == 1:
                    families[head].append(line)
            else:
                families[head].append(line)
    return "".join("\n".join(lines) + "\n" for lines in families.values())
