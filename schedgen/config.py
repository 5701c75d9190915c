"""Load jobs.toml into the immutable model, reporting every problem at once."""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedgen import fields as f
from schedgen import paths
from schedgen.calendar import NotExpressible, union_dicts
from schedgen.errors import ConfigError, Problem, SchedgenError
from schedgen.model import Config, Job, Lock, Logs, Notify, Queue
from schedgen.schedule import Cron, Every, every_as_cron, parse_schedule

FORMAT = 1
SHARED_KEYS = ("label_prefix", "targets", "path", "log_root", "lock_dir", "wrapper_dir")
JOB_KEYS = ("description", "command", "schedule", "working_dir", "env", "env_file", "timeout",
            "smoke", "throttle_interval", "run_at_load", "enabled", "lock", "queue", "logs", "notify")
REQUIRED = ("command", "schedule")
LOCK_KEYS = ("name", "wait", "busy_exit")
QUEUE_KEYS = ("inbox", "processing", "processed", "failed", "pattern", "batch",
              "stale_after", "max_attempts")
LOGS_KEYS = ("max_size", "keep", "keep_runs")
DEFAULT_PATH = ["/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]


def config_path(given: str | None) -> Path:
    return Path(given or os.environ.get("SCHEDGEN_CONFIG") or "jobs.toml")


def load(path: Path) -> Config:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchedgenError(f"{path}: no such config file (give one with -c/--config)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchedgenError(f"{path}: cannot read the config: {exc}") from None
    return loads(text, path)


def loads(text: str, path: Path) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ConfigError(str(path), [Problem("toml", f"syntax error: {exc}",
                                              int(m.group(1)) if m else None)]) from None
    checker = _Checker(text, path.resolve().parent)
    config = checker.config(data, path)
    if checker.problems:
        ordered = sorted(checker.problems, key=lambda p: p.line or 1 << 30)
        raise ConfigError(str(path), ordered)
    return config


class _Checker:
    def __init__(self, text: str, base: Path):
        self.lines = text.splitlines()
        self.base = base
        self.problems: list[Problem] = []

    # -- reporting ---------------------------------------------------------
    def problem(self, where: str, message: str) -> None:
        self.problems.append(Problem(where, message, self._line(where)))

    def _line(self, where: str) -> int | None:
        """Best-effort TOML line for a dotted key: its table header, then the key."""
        parts = where.split(".")
        for depth in range(len(parts), 0, -1):
            table, key = parts[:depth], parts[depth:]
            header = re.compile(r"\s*\[\s*" + r"\s*\.\s*".join(
                rf"(?:{re.escape(p)}|\"{re.escape(p)}\")" for p in table) + r"\s*\]")
            for i, line in enumerate(self.lines):
                if header.match(line):
                    if not key:
                        return i + 1
                    keyre = re.compile(rf"\s*\"?{re.escape(key[0])}\"?\s*=")
                    for j in range(i + 1, len(self.lines)):
                        if self.lines[j].lstrip().startswith("["):
                            break
                        if keyre.match(self.lines[j]):
                            return j + 1
                    return i + 1
        return None

    def get(self, where: str, value: Any, parse: Callable[[Any], Any]) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            self.problem(where, str(exc))
            return None

    def table(self, where: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.problem(where, f"expected a table, got {f.type_name(value)}")
            return {}
        for key in value:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
                self.problem(f"{where}.{key}" if where else key, f"unknown key; {hint}")
        return {k: v for k, v in value.items() if k in allowed}

    # -- the document --------------------------------------------------------
    def config(self, data: dict[str, Any], path: Path) -> Config:
        top = self.table("", data, ("format", "defaults", "jobs"))
        if "format" in top and top["format"] != FORMAT:
            self.problem("format", f"format {top['format']!r} is not supported (this schedgen reads format {FORMAT})")
        defaults = self.table("defaults", top.get("defaults", {}), ("namespace", *SHARED_KEYS, *JOB_KEYS))
        namespace = self.get("defaults.namespace", defaults.pop("namespace", "default"),
                             lambda v: f.matches(v, f.NAMESPACE, "namespace ([A-Za-z0-9_-])"))
        jobs_raw = top.get("jobs", {})
        if not isinstance(jobs_raw, dict):
            self.problem("jobs", f"expected tables [jobs.<name>], got {f.type_name(jobs_raw)}")
            jobs_raw = {}
        if not jobs_raw:
            self.problem("jobs", "no jobs defined; add a [jobs.<name>] table")
        jobs = []
        for name, raw in jobs_raw.items():
            job = self.job(name, raw, defaults)
            if job is not None:
                jobs.append(job)
        return Config(path=path.resolve(), namespace=namespace or "default", jobs=tuple(jobs))

    def job(self, name: str, raw: Any, defaults: dict[str, Any]) -> Job | None:
        w = f"jobs.{name}"
        start = len(self.problems)
        if not f.JOB_NAME.fullmatch(name):
            self.problem(w, "invalid job name: use a-z, 0-9, '_' and '-', starting with a letter "
                            "or digit, at most 64 characters")
        own = self.table(w, raw, (*SHARED_KEYS, *JOB_KEYS))
        merged = {**defaults, **own}
        for sub in ("lock", "queue", "logs", "notify"):
            if isinstance(defaults.get(sub), dict) and isinstance(own.get(sub), dict):
                merged[sub] = {**defaults[sub], **own[sub]}
        for key in REQUIRED:
            if key not in merged:
                self.problem(f"{w}.{key}", "missing (required)")
        g = lambda key, parse, default=None: (  # noqa: E731
            self.get(f"{w}.{key}", merged[key], parse) if key in merged else default)
        queue = self.queue(w, merged["queue"]) if "queue" in merged else None
        has_queue = "queue" in merged
        targets = g("targets", f.targets, paths.default_targets())
        schedule = g("schedule", parse_schedule, ())
        if schedule and targets:
            self.check_targets(f"{w}.schedule", schedule, targets)
        job = Job(
            name=name,
            description=g("description", f.one_line, ""),
            command=g("command", lambda v: f.command(v, has_queue)),
            schedule=schedule,
            working_dir=g("working_dir", lambda v: f.path(v, self.base)),
            env=g("env", f.env, ()),
            env_file=g("env_file", lambda v: f.path(v, self.base)),
            timeout=g("timeout", lambda v: f.duration(v, positive=True)),
            smoke=g("smoke", lambda v: f.command(v, has_queue)),
            throttle_interval=g("throttle_interval", lambda v: f.integer(v, 0)),
            run_at_load=g("run_at_load", f.boolean, False),
            enabled=g("enabled", f.boolean, True),
            lock=self.lock(w, merged.get("lock", True), name),
            queue=queue,
            logs=self.logs(w, merged.get("logs", {})),
            targets=targets or (),
            path=g("path", f.path_list, tuple(DEFAULT_PATH)),
            log_root=g("log_root", lambda v: f.path(v, self.base), paths.default_log_root()),
            lock_dir=g("lock_dir", lambda v: f.path(v, self.base), paths.default_lock_dir()),
            wrapper_dir=g("wrapper_dir", lambda v: f.path(v, self.base), paths.default_wrapper_dir()),
            label_prefix=g("label_prefix", lambda v: f.matches(v, f.LABEL_PREFIX, "label prefix"),
                           "local.schedgen"),
            notify=self.notify(w, merged["notify"]) if "notify" in merged else None,
        )
        return job if len(self.problems) == start else None

    def check_targets(self, where: str, schedule: tuple[Any, ...], targets: tuple[str, ...]) -> None:
        crons = [e for e in schedule if isinstance(e, Cron)]
        if "launchd" in targets:
            try:
                union_dicts(crons)
            except NotExpressible as exc:
                self.problem(where, f"target launchd: {exc}")
        if "cron" in targets:
            for e in schedule:
                if isinstance(e, Every) and every_as_cron(e.seconds) is None:
                    self.problem(where, f"target cron: {e.text!r} does not divide an hour or a day "
                                        "evenly, so no cron step expression fires at that rate")

    def lock(self, w: str, value: Any, job: str) -> Lock | None:
        if value is False:
            return None
        raw = {} if value is True else self.table(f"{w}.lock", value, LOCK_KEYS)
        name = self.get(f"{w}.lock.name", raw.get("name", job),
                        lambda v: f.matches(v, f.LOCK_NAME, "lock name ([A-Za-z0-9._-])"))
        wait = self.get(f"{w}.lock.wait", raw.get("wait", 0), f.duration)
        busy = self.get(f"{w}.lock.busy_exit", raw.get("busy_exit", 75), f.exit_status)
        return Lock(name=name or job, wait=wait or 0, busy_exit=75 if busy is None else busy)

    def queue(self, w: str, value: Any) -> Queue | None:
        raw = self.table(f"{w}.queue", value, QUEUE_KEYS)
        p = lambda key: self.get(f"{w}.queue.{key}", raw[key], lambda v: f.path(v, self.base))  # noqa: E731
        if "inbox" not in raw:
            self.problem(f"{w}.queue.inbox", "missing (required for a queue)")
        inbox = p("inbox") if "inbox" in raw else None
        base = inbox.parent if inbox else Path("/")
        dirs = {k: (p(k) if k in raw else base / k) for k in ("processing", "processed", "failed")}
        seen: dict[Any, str] = {inbox: "inbox"}
        for k, d in dirs.items():
            if d is not None and d in seen:
                self.problem(f"{w}.queue.{k}", f"is the same folder as {seen[d]}")
            seen[d] = k
        pattern = self.get(f"{w}.queue.pattern", raw.get("pattern", "*"), f.string)
        if pattern is not None and ("/" in pattern or not pattern or pattern.startswith(".")):
            self.problem(f"{w}.queue.pattern", f"{pattern!r} must be a file-name glob without '/' "
                                               "(hidden files are never claimed)")
        batch = self.get(f"{w}.queue.batch", raw.get("batch", 1), lambda v: f.integer(v, 0))
        stale = self.get(f"{w}.queue.stale_after", raw.get("stale_after", "1h"),
                         lambda v: f.duration(v, positive=True))
        attempts = self.get(f"{w}.queue.max_attempts", raw.get("max_attempts", 3),
                            lambda v: f.integer(v, 1))
        if inbox is None:
            return None
        return Queue(
            inbox=inbox, processing=dirs["processing"], processed=dirs["processed"],
            failed=dirs["failed"], pattern=pattern or "*",
            batch=batch or 0, stale_after=stale or 3600, max_attempts=attempts or 3,
        )

    def notify(self, w: str, value: Any) -> Notify | None:
        from schedgen.notify_settings import NOTIFY_KEYS, parse

        raw = self.table(f"{w}.notify", value, NOTIFY_KEYS)
        return parse(raw, f"{w}.notify", self.get, self.problem) if isinstance(value, dict) else None

    def logs(self, w: str, value: Any) -> Logs:
        raw = self.table(f"{w}.logs", value, LOGS_KEYS)
        size = self.get(f"{w}.logs.max_size", raw.get("max_size", "10MB"), f.size)
        keep = self.get(f"{w}.logs.keep", raw.get("keep", 5), lambda v: f.integer(v, 0))
        runs = self.get(f"{w}.logs.keep_runs", raw.get("keep_runs", 50), lambda v: f.integer(v, 1))
        return Logs(max_size=size or 10_000_000, keep=5 if keep is None else keep,
                    keep_runs=runs or 50)
