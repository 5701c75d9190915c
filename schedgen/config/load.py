"""Load jobs.toml into the immutable model, reporting every problem at once."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.config import defaults as d
from schedgen.config import hostile, tomlcache
from schedgen.config import values as f
from schedgen.config.defaults import FORMAT
from schedgen.config.model import Config, Job, Kubernetes, Lock, Logs, Notify, Queue
from schedgen.config.notify import NOTIFY_KEYS
from schedgen.config.notify import parse as notify_parse
from schedgen.config.problems import Fields, Problems
from schedgen.config.timezone import conflicts, zone_name
from schedgen.errors import ConfigError, Problem, SchedgenError
from schedgen.schedule.expressions import Every, Reboot, parse_schedule
from schedgen.targets import registry

__all__ = ["FORMAT", "config_path", "load", "loads"]


def config_path(given: str | None) -> Path:
    return Path(given or os.environ.get("SCHEDGEN_CONFIG") or "jobs.toml")


def load(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchedgenError(f"{path}: no such config file (give one with -c/--config)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchedgenError(f"{path}: cannot read the config: {exc}") from None
    cache = paths.cache_dir()
    data = tomlcache.read(cache, path, text)
    return loads(text, path, data, remember=data is None)


def loads(text: str, path: Path, data: dict[str, Any] | None = None,
          remember: bool = False) -> Config:
    """``data``: the document as tomllib reads ``text``, when the caller has it (import
    writes ``text`` from it with tomli-w: reading it back was a third of an import; `load`
    keeps it between runs, config/tomlcache.py). ``remember``: keep this parse."""
    if data is None:
        import tomllib  # not when the document is kept (config/tomlcache.py)

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"line (\d+)", str(exc))
            raise ConfigError(str(path), [Problem("toml", f"syntax error: {exc}",
                                                  int(m.group(1)) if m else None)]) from None
        if remember:
            tomlcache.remember(path, text, data)
    problems = Problems(text)
    config = _Checker(problems, path.resolve().parent).config(data, path)
    hostile.check(config, problems.add)
    if problems.found:
        ordered = sorted(problems.found, key=lambda p: p.line or 1 << 30)
        raise ConfigError(str(path), ordered)
    return config


class _Checker:
    """The document and its jobs; sub-tables in the functions below, values in values.py."""

    def __init__(self, problems: Problems, base: Path):
        self.problems = problems
        self.base = base
        # What a job that gives a key not has: [defaults], else the built-in default
        # (computed ones resolved once); and the parsed values of those, shared.
        self.inherited: dict[str, Any] = {}
        self.shared: dict[str, tuple[Any, str | None]] = {}
        self.sub_shared: dict[str, dict[str, tuple[Any, str | None]]] = {}  # lock, logs
        self._paths: dict[str, Path] = {}

    def path(self, value: Any) -> Path:
        if not isinstance(value, str):
            return f.path(value, self.base)
        # The same few folders for every job: each worked out once a load.
        found = self._paths.get(value)
        if found is None:
            found = self._paths[value] = f.path(value, self.base)
        return found

    def config(self, data: dict[str, Any], path: Path) -> Config:
        top = self.problems.table("", data, ("format", "defaults", "jobs"))
        if "format" in top and top["format"] != FORMAT:
            self.problems.add("format", f"format {top['format']!r} is not supported (this schedgen reads format {FORMAT})")
        defaults = self.problems.table("defaults", top.get("defaults", {}), tuple(d.TABLES[""]))
        namespace = Fields(self.problems, "defaults", defaults, d.DEFAULTS_ONLY).get(
            "namespace", lambda v: f.matches(v, f.NAMESPACE, "namespace ([A-Za-z0-9_-])"))
        defaults.pop("namespace", None)
        if "adopts" in defaults:  # each job adopts its own original, never all one
            self.problems.add("defaults.adopts", "belongs to one job: move it into its [jobs.NAME]")
            defaults.pop("adopts")
        self.inherited = {**{k: v.resolve() for k, v in _JOB_TABLE.items()}, **defaults}
        jobs_raw = top.get("jobs", {})
        if not isinstance(jobs_raw, dict):
            self.problems.add("jobs", f"expected tables [jobs.<name>], got {f.type_name(jobs_raw)}")
            jobs_raw = {}
        if not jobs_raw:
            self.problems.add("jobs", "no jobs defined; add a [jobs.<name>] table")
        jobs = []
        for name, raw in jobs_raw.items():
            job = self.job(name, raw, defaults)
            if job is not None:
                jobs.append(job)
        adopted: dict[tuple[str, str], str] = {}
        for j in jobs:  # one original, one job: else apply could not say whose it is
            if j.adopts is not None and adopted.setdefault(j.adopts, j.name) != j.name:
                self.problems.add(f"jobs.{j.name}.adopts", f"job {adopted[j.adopts]} adopts "
                                                           "the same; give it to one job")
        for name in registry.names():  # checks across the jobs, by the targets they use
            if any(name in j.targets for j in jobs):
                for where, message in registry.get(name).config_refusals(namespace, jobs):
                    self.problems.add(where, message)
        return Config(path=path.resolve(), namespace=namespace, jobs=tuple(jobs))

    def job(self, name: str, raw: Any, defaults: dict[str, Any]) -> Job | None:
        # A name that is no bare TOML key (a.b, .., spaces) is shown quoted, as written.
        w = f"jobs.{name}" if _BARE_KEY.fullmatch(name) else f"jobs.{json.dumps(name)}"
        start = len(self.problems.found)
        if not f.JOB_NAME.fullmatch(name):
            self.problems.add(w, "invalid job name: use a-z, 0-9, '_' and '-', starting with a "
                                 "letter or digit, at most 64 characters")
        own = self.problems.table(w, raw, (*d.SHARED_KEYS, *d.JOB_KEYS))
        merged = {**self.inherited, **own}
        for sub in ("lock", "queue", "logs", d.KUBERNETES, "notify"):
            if isinstance(defaults.get(sub), dict) and isinstance(own.get(sub), dict):
                merged[sub] = {**defaults[sub], **own[sub]}
        v = Fields(self.problems, w, merged, _JOB_TABLE, self.shared, own)
        scope, user = self.scope(w, v, merged, own, defaults)
        has_queue = merged.get("queue") is not None
        targets = v.get("targets", f.targets, True)
        schedule = v.get("schedule", parse_schedule, True)
        if merged.get("timezone") is not None and schedule:
            for message in conflicts(schedule, merged.get("run_at_load") is True, targets or ()):
                self.problems.add(f"{w}.timezone", message)
        no_catch_up = False
        if merged.get("catch_up") == "once" and schedule:
            found = catch_up_conflicts(schedule, merged.get("run_at_load") is True, targets or ())
            # "once" from [defaults] is for the jobs it can mean something for.
            no_catch_up = bool(found) and "catch_up" not in own
            for message in [] if no_catch_up else found:
                self.problems.add(f"{w}.catch_up", message)
        to_kube = d.KUBERNETES in (targets or ())
        job = Job(
            name=name,
            description=v.get("description", f.one_line, True),
            command=v.get("command", lambda x: f.command(x, has_queue)),
            schedule=schedule,
            working_dir=v.optional("working_dir", self.path, True),
            env=v.get("env", f.env, True),
            env_file=v.optional("env_file", self.path, True),
            timeout=v.optional("timeout", _positive_duration, True),
            smoke=v.optional("smoke", lambda x: f.command(x, has_queue)),
            throttle_interval=v.optional("throttle_interval", _natural, True),
            run_at_load=v.get("run_at_load", f.boolean, True),
            enabled=v.get("enabled", f.boolean, True),
            lock=lock(self.problems, w, v.get("lock", lambda x: x), name,
                      self.sub_shared.setdefault("lock", {})),
            queue=queue(self.problems, w, merged["queue"], self.path) if has_queue else None,
            logs=logs(self.problems, w, v.get("logs", lambda x: x),
                      self.sub_shared.setdefault("logs", {})),
            targets=targets,
            path=v.get("path", f.path_list, True),
            log_root=v.get("log_root", self.path, True),
            lock_dir=v.get("lock_dir", self.path, True),
            wrapper_dir=v.get("wrapper_dir", self.path, True),
            metrics_dir=v.optional("metrics_dir", self.path, True),
            label_prefix=v.get("label_prefix", _label_prefix, True),
            kubernetes=self.kubernetes(w, merged[d.KUBERNETES], to_kube)
            if merged.get(d.KUBERNETES) is not None else None,
            timezone=v.optional("timezone", zone_name, True),
            notify=notify(self.problems, w, merged["notify"])
            if merged.get("notify") is not None else None,
            adopts=v.optional("adopts", f.adopts),
            catch_up="none" if no_catch_up else v.get("catch_up", _catch_up, True),
            max_lateness=v.get("max_lateness", _positive_duration, True),
            random_delay=v.get("random_delay", f.duration, True),
            random_delay_stable=v.get("random_delay_stable", f.boolean, True),
            retries=v.get("retries", _retries, True),
            retry_delay=v.get("retry_delay", f.duration, True),
            backoff=v.get("backoff", _backoff, True),
            scope=scope,
            user=user,
            hosts=v.optional("hosts", f.hosts, True),
        )
        if job.random_delay and job.random_delay >= job.max_lateness:
            self.problems.add(f"{w}.random_delay", "must be shorter than max_lateness "
                                                   f"({job.max_lateness} s): a delayed start is a late one")
        if has_queue and "retries" in own and own["retries"] != 0:
            self.problems.add(f"{w}.retries", "a queue's items are tried again on later runs, "
                                              "counted by queue.max_attempts; a queue job has "
                                              "no retries")
        # What each of its targets refuses of it (render --target asks the same).
        for t in targets or ():
            for r in registry.get(t).refusals(job, w):
                self.problems.add(r.where, r.message)
        # Any problem drops the job, so a value that failed to parse never reaches the model.
        return None if len(self.problems.found) > start else job

    def scope(self, w: str, v: Fields, merged: dict[str, Any], own: dict[str, Any],
              defaults: dict[str, Any]) -> tuple[str, str | None]:
        """The job's scope and user; a system job's folders not given are the machine's
        (`merged` and what `v` takes as the job's own are changed to say so)."""
        scope = v.get("scope", lambda x: f.one_of(x, paths.SCOPES, "scope"), True) or "user"
        user = v.optional("user", lambda x: f.matches(x, f.USER_NAME, "user name"), True)
        if scope != paths.SYSTEM:
            if user is not None:
                self.problems.add(f"{w}.user", 'only for scope = "system" (a user-scope job '
                                               "runs as the user who applies it)")
            return scope, None
        if user is None:
            if v._raw("user") is None:  # an invalid one was said already
                self.problems.add(f"{w}.user", 'missing (required with scope = "system": the '
                                               "account the job runs as)")
            return scope, None
        given = set(own) | set(defaults)
        folders = {"log_root": paths.system_log_root(), "wrapper_dir": paths.system_wrapper_dir(),
                   "lock_dir": paths.system_lock_dir(user)}
        for key, folder in folders.items():
            if key not in given:
                merged[key] = str(folder)
        v.own = given | set(folders)  # parsed for this job, not shared with user-scope jobs
        return scope, user

    def kubernetes(self, w: str, raw: Any, to_kube: bool) -> Kubernetes | None:
        from schedgen.config import kubernetes as kube_config

        return kube_config.parse(self.problems, w, raw, to_kube)


_JOB_TABLE = {**d.SHARED, **d.JOB}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _positive_duration(value: Any) -> int:
    return f.duration(value, positive=True)


CATCH_UP = ("none", "once")


def catch_up_conflicts(schedule: tuple[object, ...], run_at_load: bool,
                       targets: tuple[str, ...]) -> list[str]:
    """What a job that catches up cannot have: its gate tests calendar times."""
    out = []
    if any(isinstance(e, (Every, Reboot)) for e in schedule):
        out.append('"once" catches up calendar firings: @every and @reboot have none; give '
                   "them a job of their own")
    if run_at_load and any(registry.get(t).on_load for t in targets):
        out.append('"once" starts the job at load only for a missed firing, run_at_load at '
                   "every load; drop one of the two")
    return out


def _catch_up(value: Any) -> str:
    if value not in CATCH_UP:
        raise ValueError(f"expected one of {', '.join(map(repr, CATCH_UP))}, got {value!r}")
    return str(value)


def _natural(value: Any) -> int:
    return f.integer(value, 0)


def _positive(value: Any) -> int:
    return f.integer(value, 1)


def _retries(value: Any) -> int:
    return f.integer(value, 0, 100)


def _backoff(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 10:
        raise ValueError(f"expected a number from 1 to 10, got {value!r}")
    return float(value)


def _on_busy(value: Any) -> str:
    if value not in d.ON_BUSY:
        raise ValueError(f"expected one of {', '.join(map(repr, d.ON_BUSY))}, got {value!r}")
    return str(value)


def _label_prefix(value: Any) -> str:
    return f.matches(value, f.LABEL_PREFIX, "label prefix")


def lock(problems: Problems, w: str, value: Any, job: str,
         shared: dict[str, tuple[Any, str | None]] | None = None) -> Lock | None:
    if value is False:
        return None
    raw = {} if value is True else problems.table(f"{w}.lock", value, d.LOCK_KEYS)
    # DEPENDS: the job's name; one that is no name is reported once, as the job's, not
    # again as a lock name the user never wrote.
    default = job if f.LOCK_NAME.fullmatch(job) else "invalid-job-name"
    v = Fields(problems, f"{w}.lock", {"name": default, **raw}, d.LOCK, shared, raw)
    wait = v.get("wait", f.duration, True)
    # DEPENDS: a lock with a wait waits, as before on_busy was there to say so.
    given = raw.get("on_busy", "wait" if isinstance(wait, int) and wait > 0 else "skip")
    found = Lock(name=v.get("name", lambda x: f.matches(x, f.LOCK_NAME, "lock name ([A-Za-z0-9._-])")),
                 wait=wait, busy_exit=v.get("busy_exit", f.exit_status, True),
                 on_busy=problems.parse(f"{w}.lock.on_busy", given, _on_busy) or "skip")
    if isinstance(found.wait, int) and found.on_busy == "skip" and found.wait > 0:
        problems.add(f"{w}.lock.on_busy", '"skip" gives up at once, and lock.wait says to '
                                          'wait: drop one of them')
    if isinstance(found.wait, int) and found.on_busy == "wait" and found.wait == 0:
        problems.add(f"{w}.lock.wait", 'on_busy = "wait" needs how long: give lock.wait '
                                       '(e.g. "10m")')
    return found


def queue(problems: Problems, w: str, value: Any, path: Any) -> Queue | None:
    raw = problems.table(f"{w}.queue", value, d.QUEUE_KEYS)
    v = Fields(problems, f"{w}.queue", raw, d.QUEUE)
    inbox: Path | None = v.get("inbox", path)
    base = inbox.parent if inbox else Path("/")
    # DEPENDS: each folder defaults to a sibling of the inbox, on the same filesystem.
    dirs = {k: (v.get(k, path) if k in raw else base / k) for k in ("processing", "processed", "failed")}
    seen: dict[Any, str] = {inbox: "inbox"}
    for k, folder in dirs.items():
        if folder is not None and folder in seen:
            problems.add(f"{w}.queue.{k}", f"is the same folder as {seen[folder]}")
        seen[folder] = k
    pattern = v.get("pattern", f.string)
    if inbox is None:
        return None
    if pattern is not None and ("/" in pattern or not pattern or pattern.startswith(".")):
        problems.add(f"{w}.queue.pattern", f"{pattern!r} must be a file-name glob without '/' "
                                           "(hidden files are never claimed)")
    return Queue(
        inbox=inbox, processing=dirs["processing"], processed=dirs["processed"],
        failed=dirs["failed"], pattern=pattern,
        batch=v.get("batch", lambda x: f.integer(x, 0)),
        stale_after=v.get("stale_after", lambda x: f.duration(x, positive=True)),
        max_attempts=v.get("max_attempts", lambda x: f.integer(x, 1)),
        stop_on_failure=v.get("stop_on_failure", f.boolean),
    )


def logs(problems: Problems, w: str, value: Any,
         shared: dict[str, tuple[Any, str | None]] | None = None) -> Logs:
    raw = problems.table(f"{w}.logs", value, d.LOGS_KEYS)
    v = Fields(problems, f"{w}.logs", raw, d.LOGS, shared, raw)
    return Logs(max_size=v.get("max_size", f.size, True), keep=v.get("keep", _natural, True),
                keep_runs=v.get("keep_runs", _positive, True))


def notify(problems: Problems, w: str, value: Any) -> Notify | None:
    raw = problems.table(f"{w}.notify", value, NOTIFY_KEYS)
    return notify_parse(raw, f"{w}.notify", problems.parse, problems.add) \
        if isinstance(value, dict) else None
