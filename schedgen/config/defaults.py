"""What jobs.toml means when it says nothing: the one table the loader, the schema
(its `default`s) and the docs (docs/defaults.md) read.

Values are spelled as jobs.toml spells them ("10MB", "1h") and the loader parses a
default exactly like a value the user wrote, so a default cannot drift from its
meaning. A callable is computed on the host that loads the config (paths, targets);
``DEPENDS`` means the loader derives it from another value, as the doc says.
"""

from __future__ import annotations

from typing import NamedTuple

from schedgen import paths

FORMAT = 1  # the jobs.toml format this schedgen reads
# The table a job gives for the target of the same name (where its CronJob runs).
KUBERNETES = "kubernetes"


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


REQUIRED = _Marker("REQUIRED")  # no default: the key must be given (in the job or [defaults])
DEPENDS = _Marker("DEPENDS")  # derived by the loader from another value

Value = object  # a value, a Callable[[], object], None, REQUIRED or DEPENDS


class Default(NamedTuple):
    value: Value  # as jobs.toml spells it; None: unset
    doc: str  # the default in words, for docs/defaults.md

    def resolve(self) -> object:
        """The value on this host (a callable is called); None when unset."""
        return self.value() if callable(self.value) else self.value


def _host_targets() -> list[str]:
    return list(paths.default_targets())


def _host_path() -> list[str]:
    """Homebrew's folder only where Homebrew puts it (macOS)."""
    base = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]
    return ["/opt/homebrew/bin", *base] if paths.is_macos() else base


# Keys a job may give, or [defaults] for every job.
JOB: dict[str, Default] = {
    "description": Default("", "empty"),
    "command": Default(REQUIRED, "required"),
    "schedule": Default(REQUIRED, "required"),
    "working_dir": Default(None, "not set: the directory cron or launchd starts it in"),
    "env": Default({}, "nothing beyond what the wrapper sets"),
    "env_file": Default(None, "none"),
    "timeout": Default(None, "none: the command may run for ever"),
    "smoke": Default(None, "none: a smoke run only checks the preconditions"),
    "throttle_interval": Default(None, "launchd's own (10 seconds)"),
    "run_at_load": Default(False, "false"),
    "enabled": Default(True, "true"),
    "lock": Default(True, "a lock named after the job (the [lock] defaults below)"),
    "queue": Default(None, "none"),
    "logs": Default({}, "the [logs] defaults below"),
    "timezone": Default(None, "none: the host's local time"),
    KUBERNETES: Default(None, "none (required for target kubernetes: at least `image`)"),
    "notify": Default(None, "none: nobody is told"),
    "adopts": Default(None, "none: the job replaces nothing installed by hand"),
    # Run policies (docs/policies.md).
    "catch_up": Default("none", '"none": a firing missed while the machine was off is not run'),
    "max_lateness": Default("1h", '"1h": a start later than that after its firing is dropped'),
    "random_delay": Default(0, "0: every run starts on its firing"),
    "random_delay_stable": Default(True, "true: the same offset in every run"),
    "hosts": Default(None, "none: every host"),
}
# Keys that describe where and how jobs are installed: also given per job or in [defaults].
SHARED: dict[str, Default] = {
    "label_prefix": Default("local.schedgen", '"local.schedgen"'),
    "targets": Default(_host_targets, '["launchd"] on macOS, ["cron"] elsewhere'),
    "path": Default(_host_path, "/usr/local/bin, /usr/bin, /bin, /usr/sbin, /sbin; on macOS "
                                "/opt/homebrew/bin first"),
    "log_root": Default(lambda: str(paths.default_log_root()),
                        "macOS ~/Library/Logs/schedgen, else ~/.local/state/schedgen/logs; "
                        "scope system: /var/log/schedgen"),
    "lock_dir": Default(lambda: str(paths.default_lock_dir()),
                        "<state dir>/locks (created 0700); scope system: "
                        "/var/lib/schedgen/locks/<user>"),
    "wrapper_dir": Default(lambda: str(paths.default_wrapper_dir()), "<data dir>/wrappers; "
                           "scope system: /usr/local/libexec/schedgen"),
    "metrics_dir": Default(None, "none: no metrics file is written"),
    "scope": Default("user", '"user": installed for the user running schedgen'),
    "user": Default(None, 'none (required with scope = "system": the account the job runs as)'),
}
# Only in [defaults].
DEFAULTS_ONLY: dict[str, Default] = {
    "namespace": Default("default", '"default"'),
}
LOCK: dict[str, Default] = {
    "name": Default(DEPENDS, "the job's name"),
    "wait": Default(0, "0: give up at once"),
    "busy_exit": Default(75, "75 (EX_TEMPFAIL)"),
}
QUEUE: dict[str, Default] = {
    "inbox": Default(REQUIRED, "required"),
    "processing": Default(DEPENDS, "processing/ beside the inbox"),
    "processed": Default(DEPENDS, "processed/ beside the inbox"),
    "failed": Default(DEPENDS, "failed/ beside the inbox"),
    "pattern": Default("*", '"*" (hidden files never match)'),
    "batch": Default(1, "1"),
    "stale_after": Default("1h", '"1h"'),
    "max_attempts": Default(3, "3"),
}
LOGS: dict[str, Default] = {
    "max_size": Default("10MB", '"10MB"'),
    "keep": Default(5, "5"),
    "keep_runs": Default(50, "50"),
}

JOB_KEYS = tuple(JOB)
SHARED_KEYS = tuple(SHARED)
LOCK_KEYS = tuple(LOCK)
QUEUE_KEYS = tuple(QUEUE)
LOGS_KEYS = tuple(LOGS)
REQUIRED_KEYS = tuple(k for k, d in JOB.items() if d.value is REQUIRED)
TABLES = {"": {**DEFAULTS_ONLY, **SHARED, **JOB}, "lock": LOCK, "queue": QUEUE, "logs": LOGS}


def static(d: Default) -> bool:
    """Is the default one value on every host (so the schema can state it)?"""
    return d.value is not None and not isinstance(d.value, _Marker) and not callable(d.value)


def docs_markdown() -> str:
    """docs/defaults.md: every key's default, from this table."""
    lines = ["# jobs.toml defaults", "",
             "Generated from `schedgen/config/defaults.py` (a test checks it is current).",
             "Any key of a job may also be given once in `[defaults]`; tables there",
             "(`lock`, `queue`, `logs`) are merged key by key into each job's.", ""]
    for title, table in (("job and `[defaults]`", {**DEFAULTS_ONLY, **SHARED, **JOB}),
                         ("`[jobs.NAME.lock]`", LOCK), ("`[jobs.NAME.queue]`", QUEUE),
                         ("`[jobs.NAME.logs]`", LOGS)):
        lines += [f"## {title}", "", "| key | default |", "|---|---|"]
        lines += [f"| `{k}` | {d.doc} |" for k, d in table.items()]
        lines.append("")
    lines.append("`namespace` is only read from `[defaults]`.")
    return "\n".join(lines) + "\n"
