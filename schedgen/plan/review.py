"""What changed per job in jobs.toml terms: the installed settings vs the config's.

apply keeps each job's settings in the ownership record once all of the job's
artifacts are installed as planned (`remember`); `diff` compares them with the
config (`review`). Env values are kept and compared only as digests, so no value
ever reaches a review. A record from an older schedgen has no settings: then the
review says so and the file diffs are all there is.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

import shlex
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.config.model import Config, Job
from schedgen.machine.ownership import Record
from schedgen.machine.record_format import Installed
from schedgen.plan import changes as p
from schedgen.schedule.describe import describe_entries
from schedgen.schedule.expressions import parse_schedule
from schedgen.sha import sha256
from schedgen.units import format_duration

NEW, CHANGED, REMOVED, FILES, UNKNOWN = "new", "changed", "removed", "files", "unknown"


class FieldChange(NamedTuple):
    field: str  # jobs.toml key, dotted for tables: "schedule", "lock.name", "env"
    old: Any  # as recorded (None: not set)
    new: Any
    text: str  # one line for people, never an env value


class JobReview(NamedTuple):
    job: str
    status: str  # NEW | CHANGED | REMOVED | FILES (settings equal, files differ) | UNKNOWN
    fields: tuple[FieldChange, ...]
    note: str = ""


_AS_IS = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> Any:
    """A JSON-able, comparable form of a model value."""
    if type(value) in _AS_IS:  # most values: asked first (apply keeps every job's settings)
        return value
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "_asdict"):
        # Its fields in order, as _asdict() has them, without building that dict first.
        return {k: v if type(v) in _AS_IS else _plain(v)
                for k, v in zip(value._fields, value, strict=True)}
    if isinstance(value, tuple | list):
        return [v if type(v) in _AS_IS else _plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)  # e.g. a time zone object: its name


def env_digest(value: str) -> str:
    return sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def settings(job: Job) -> dict[str, Any]:
    """A job's settings in jobs.toml terms, every field the model has (so fields added
    later, like a time zone, are compared too); env values only as digests."""
    out: dict[str, Any] = {}
    row: Any = job  # its values, each of its own type
    # In _asdict()'s order, without building that dict first.
    for name, value in zip(job._fields, row, strict=True):
        if type(value) in _AS_IS:  # most fields: no call (apply keeps every job's)
            if name != "name":
                out[name] = value
        elif name == "schedule":
            out[name] = [e.text for e in value]
        elif name == "env":
            out[name] = {k: env_digest(v) for k, v in value}
        else:
            out[name] = _plain(value)
    _policies_as_before(out)
    return out


def _policies_as_before(out: dict[str, Any]) -> None:
    """Keys added later are left out while they say what a job did before them, so that
    settings kept by an older schedgen compare equal: retries none, the lock's on_busy
    the one its wait implies, a queue that goes on past a failing item."""
    if not out.get("retries"):
        for k in ("retries", "retry_delay", "backoff"):
            out.pop(k, None)
    lock = out.get("lock")
    if isinstance(lock, dict) and lock.get("on_busy") == ("wait" if lock.get("wait") else "skip"):
        lock.pop("on_busy")
    queue = out.get("queue")
    if isinstance(queue, dict) and queue.get("stop_on_failure") is False:
        queue.pop("stop_on_failure")


def _by_job(plan: p.Plan) -> dict[str, list[p.Change]]:
    out: dict[str, list[p.Change]] = {}
    for c in plan.changes:
        for j in ({c.job} if c.job else set()) | set(c.jobs):
            out.setdefault(j, []).append(c)
    return out


def remember(config: Config, plan: p.Plan, record: Record) -> None:
    """After apply's steps: keep the settings of every job whose artifacts are all
    installed as planned; forget jobs with nothing installed; leave the rest as they
    were (a failed or deferred step keeps the old settings, which the disk still has)."""
    settings_ = dict(record.settings or {})
    changes = _by_job(plan)
    installed_jobs = {e.job for e in record.entries.values() if e.job}
    installed_jobs |= {j for e in record.entries.values() for j in e.jobs}
    digests: dict[str, str] = {}

    def hashed(c: p.Change) -> str:
        # Once per change: the crontab block is wanted by every cron job, and hashing it
        # for each made this quadratic.
        if c.key not in digests:
            digests[c.key] = p.digest(c.after or "")
        return digests[c.key]

    for job in config.jobs:
        wanted = [c for c in changes.get(job.name, []) if c.after is not None]
        if not job.enabled or not wanted:
            if job.name not in installed_jobs:
                settings_.pop(job.name, None)
            continue
        if job.name in settings_ and all(_proven(c, record) for c in wanted):
            continue  # made from the job the settings were kept for: they still hold
        if all((e := record.get(c.key)) is not None and e.sha256 == hashed(c)
               for c in wanted):
            settings_[job.name] = settings(job)
    names = {j.name for j in config.jobs}
    for name in list(settings_):
        if name not in names and name not in installed_jobs:
            del settings_[name]
    record.settings = settings_


def settings_after(config: Config, plan: p.Plan, record: Record) -> dict[str, Any] | None:
    """The settings `apply` would keep had each step of the plan gone through (a deferred
    one does not): what `diff` tells the metrics files apply would remove from."""
    after = Record(record.namespace, dict(record.entries), record.config, record.extra,
                   None if record.settings is None else dict(record.settings))
    for c in plan.changes:
        if c.deferred:
            continue
        if c.action in (p.CREATE, p.UPDATE) and c.after is not None:
            after.set(Installed(kind=c.kind, path=str(c.path) if c.path is not None else None,
                                sha256=p.digest(c.after), job=c.job, jobs=c.jobs,
                                targets=c.targets, mode=c.mode, source=c.source))
        elif c.action in (p.DELETE, p.FORGET, p.DISOWN):
            after.drop(c.key)
    remember(config, plan, after)
    return after.settings


def _proven(c: p.Change, record: Record) -> bool:
    """Found unchanged by its source digest (targets/base.py), which names the job's
    settings in full: the apply that recorded it kept these settings too."""
    e = record.get(c.key)
    return (c.source is not None and c.after is c.before and e is not None
            and e.source == c.source)


def review(config: Config, record: Record, plan: p.Plan) -> list[JobReview]:
    """Per job with something pending (or settings that moved), what changed."""
    changes = _by_job(plan)
    recorded = record.settings
    out: list[JobReview] = []
    names = set()
    for job in config.jobs:
        names.add(job.name)
        # its own files: a shared crontab block that changes says nothing about this job
        pending = [c for c in changes.get(job.name, []) if c.pending and c.job == job.name]
        new = settings(job)
        if recorded is None:
            if pending and record.entries:
                out.append(JobReview(job.name, UNKNOWN, (), "no settings in the ownership "
                                     "record (installed by an older schedgen): see the file diffs"))
            elif pending:
                out.append(JobReview(job.name, NEW, _describe_new(new)))
            continue
        old = recorded.get(job.name)
        if old is None:
            if pending and job.enabled:
                out.append(JobReview(job.name, NEW, _describe_new(new)))
            continue
        fields = tuple(_compare(old, new))
        if fields:
            out.append(JobReview(job.name, CHANGED, fields,
                                 "disabled: apply removes it" if not job.enabled else ""))
        elif pending:
            out.append(JobReview(job.name, FILES, (), "settings unchanged; the installed files "
                                 "differ (hand-edited, missing, or generated differently)"))
    skipped = {s.job: s.why for s in config.skipped}
    for name in sorted(set(recorded or {}) - names):
        if name in skipped:  # still in the file, for other hosts: a plain apply removes it
            out.append(JobReview(name, REMOVED, (), f"not for this host: {skipped[name]}"))
            continue
        orphan = any(c.action == p.ORPHAN for c in changes.get(name, []))
        out.append(JobReview(name, REMOVED, (), "gone from jobs.toml" + (
            "; apply --prune removes its files" if orphan else "")))
    return out


# -- words ------------------------------------------------------------------------
def _schedule_words(texts: list[str]) -> str:
    try:
        return describe_entries(parse_schedule(texts if len(texts) != 1 else texts[0]))
    except ValueError:
        return "?"


def _schedule(texts: Any) -> str:
    if not texts:
        return "(none)"
    shown = " | ".join(texts)
    return f"{shown!r} ({_schedule_words(list(texts))})"


def _command(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return f"bash -c {shlex.quote(value)}"
    return shlex.join(value)


def _value(field: str, value: Any) -> str:
    if value is None:
        return "(none)"
    if field in ("command", "smoke"):
        return _command(value)
    if field in ("targets", "path", "hosts"):
        return ", ".join(value) if value else "(none)"
    if field == "schedule":
        return _schedule(value)
    if field in ("timeout", "lock.wait", "queue.stale_after", "max_lateness", "random_delay",
                 "retry_delay") and isinstance(value, int):
        return format_duration(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _env(old: dict[str, str], new: dict[str, str]) -> str:
    parts = [f"+ {k}" for k in new if k not in old]
    parts += [f"- {k}" for k in old if k not in new]
    parts += [f"~ {k} (value changed)" for k in new if k in old and old[k] != new[k]]
    return "; ".join(parts)


# Settings that are secrets themselves: whoever has a ping URL can ping as the job, and
# a webhook URL (Slack's, Discord's) is its own credential.
SECRET_FIELDS = ("notify.ping_url", "notify.webhook")
HIDDEN = "<masked>"


def _secret(field: str, a: Any, b: Any) -> FieldChange:
    how = "changed" if a and b else "set" if b else "removed"
    return FieldChange(field, HIDDEN if a else None, HIDDEN if b else None,
                       f"{field}: {how} (value not shown)")


def secrets(settings: dict[str, Any]) -> list[str]:
    """The secret values in one job's settings (as `settings` or a record keeps them)."""
    out = []
    for f in SECRET_FIELDS:
        table, _, key = f.partition(".")
        v = (settings.get(table) or {}).get(key) if isinstance(settings.get(table), dict) else None
        if isinstance(v, str) and v:
            out.append(v)
    return out


def _compare(old: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    out: list[FieldChange] = []
    for field in [*new, *(k for k in old if k not in new)]:
        a, b = old.get(field), new.get(field)
        if a == b:
            continue
        if field == "env":
            out.append(FieldChange(field, sorted(a or {}), sorted(b or {}),
                                   f"env: {_env(a or {}, b or {})}"))
        elif isinstance(a, dict) and isinstance(b, dict):
            for k in [*b, *(k for k in a if k not in b)]:
                if a.get(k) != b.get(k):
                    f = f"{field}.{k}"
                    if f in SECRET_FIELDS:
                        out.append(_secret(f, a.get(k), b.get(k)))
                        continue
                    out.append(FieldChange(f, a.get(k), b.get(k),
                                           f"{f}: {_value(f, a.get(k))} -> {_value(f, b.get(k))}"))
        elif isinstance(a, dict) or isinstance(b, dict):
            out.append(FieldChange(field, a, b, f"{field}: {_on_off(a)} -> {_on_off(b)}"))
        else:
            out.append(FieldChange(field, a, b,
                                   f"{field}: {_value(field, a)} -> {_value(field, b)}"))
    return out


_HEADLINE = ("schedule", "command", "targets", "env", "env_file", "working_dir", "timeout",
             "lock", "queue", "timezone", "retries")


def _describe_new(new: dict[str, Any]) -> tuple[FieldChange, ...]:
    out = []
    for field in _HEADLINE:
        if field not in new or new[field] in (None, [], {}):
            continue
        v = new[field]
        if field == "env":
            text = f"env: {', '.join(v)} (values not shown)"
            v = sorted(v)
        elif field == "lock":
            text = f"lock: {v['name']}" + (f", waits {_value('lock.wait', v['wait'])}"
                                           if v.get("wait") else "") + (
                ", replaces the running run" if v.get("on_busy") == "replace" else "")
        elif field == "queue":
            text = f"queue: {v['inbox']} ({v['pattern']}, batch {v['batch']}" + (
                ", stops at the first failing item)" if v.get("stop_on_failure") else ")")
        elif field == "retries":
            text = (f"retries: {v}, {_value('retry_delay', new.get('retry_delay'))} apart, "
                    f"backoff {new.get('backoff')}")
        else:
            text = f"{field}: {_value(field, v)}"
        out.append(FieldChange(field, None, v, text))
    return tuple(out)


def _on_off(v: Any) -> str:
    """A table (lock, queue) given or not: "on" for a table or true, else "off"."""
    return "on" if isinstance(v, dict) or v else "off"
