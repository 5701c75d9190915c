"""The immutable config model: validated once in config.py, trusted everywhere else.

NamedTuples rather than frozen dataclasses: as immutable, and far cheaper to define,
which every command pays for at start-up.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

from pathlib import Path
from typing import NamedTuple

from schedgen.schedule.expressions import Entry

PLACEHOLDERS = ("item", "run_id", "artifact_dir", "job")


class Lock(NamedTuple):
    name: str
    wait: int  # seconds; 0 = give up at once
    busy_exit: int
    on_busy: str = "skip"  # skip | wait | replace (config.defaults.ON_BUSY)


class Queue(NamedTuple):
    inbox: Path
    processing: Path
    processed: Path
    failed: Path
    pattern: str
    batch: int  # 0 = until the inbox is empty
    stale_after: int
    max_attempts: int
    stop_on_failure: bool = False  # batch = 0: stop at the first failing item


class Logs(NamedTuple):
    max_size: int
    keep: int
    keep_runs: int


class Kubernetes(NamedTuple):
    """[jobs.x.kubernetes]: where and how the job's CronJob runs (target "kubernetes")."""

    image: str
    namespace: str
    env_secret: str | None  # a Secret whose keys become the container's environment
    service_account: str | None
    resources: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (("limits", (("cpu", "1"),)),)
    working_dir: str | None  # a path inside the image; the job's own working_dir is local


# An argv (tuple) run without a shell, or a string run by ``bash -c``.
Command = tuple[str, ...] | str


class Notify(NamedTuple):
    on: tuple[str, ...]  # failure, recovery, missed
    command: Command | None
    ping_url: str | None
    mail: tuple[str, ...] = ()  # addresses, through the local sendmail
    webhook: str | None = None  # URL a JSON body is POSTed to
    webhook_format: str = "json"  # json, slack, discord, teams
    after: int = 1  # failure alerts from the Nth failed run in a row on
    sendmail: str | None = None  # the sendmail program (None: found at run time)

    def channels(self) -> tuple[str, ...]:
        """What an alert goes out through: command, mail, webhook (in that order)."""
        return tuple(c for c, on in (("command", self.command is not None),
                                     ("mail", bool(self.mail)),
                                     ("webhook", self.webhook is not None)) if on)


class Job(NamedTuple):
    name: str
    description: str
    command: Command
    schedule: tuple[Entry, ...]
    working_dir: Path | None
    env: tuple[tuple[str, str], ...]
    env_file: Path | None
    timeout: int | None
    smoke: Command | None
    throttle_interval: int | None
    run_at_load: bool
    enabled: bool
    lock: Lock | None
    queue: Queue | None
    logs: Logs
    targets: tuple[str, ...]
    path: tuple[str, ...]
    log_root: Path
    lock_dir: Path
    wrapper_dir: Path
    label_prefix: str
    kubernetes: Kubernetes | None = None
    timezone: str | None = None  # IANA zone the schedule is read in; None: the host's
    notify: Notify | None = None
    metrics_dir: Path | None = None  # the job's .prom file goes here (None: none written)
    # What `import` found this job in, still installed outside schedgen: (target, its
    # identity there: the crontab line as written, a plist label, a unit name).
    adopts: tuple[str, str] | None = None
    # Run policies (docs/policies.md): a missed firing run once at boot or load ("once")
    # or not ("none"); no start more than max_lateness seconds after its firing; each
    # start delayed by up to random_delay seconds, by one offset per job and host (stable)
    # or a fresh one each run.
    catch_up: str = "none"
    max_lateness: int = 3600
    random_delay: int = 0
    random_delay_stable: bool = True
    retries: int = 0  # attempts after the first, within the same run and lock
    retry_delay: int = 30  # seconds before the first retry
    backoff: float = 2.0  # each delay this many times the one before (RETRY_DELAY_CAP)
    scope: str = "user"  # "system": installed for the machine, run as `user`
    user: str | None = None  # the account a system-scope job runs as
    # Host name patterns (config/select.py): "web-*", "!name" excludes; None: every host.
    hosts: tuple[str, ...] | None = None

    @property
    def label(self) -> str:
        return f"{self.label_prefix}.{self.name}"

    @property
    def log_dir(self) -> Path:
        return self.log_root / self.name

    @property
    def wrapper_path(self) -> Path:
        return self.wrapper_dir / f"{self.name}.sh"

    @property
    def schedule_text(self) -> tuple[str, ...]:
        return tuple(e.text for e in self.schedule)


class Skipped(NamedTuple):
    """A job of the file that is not for the machine a command acts for, and why."""

    job: str
    field: str  # the key that leaves it out ("hosts")
    why: str


class Config(NamedTuple):
    path: Path
    namespace: str
    jobs: tuple[Job, ...]
    # scoped(): the config's jobs in its other scope (their files here go, not as orphans)
    elsewhere: tuple[str, ...] = ()
    # Set by config/select.py: the machine the jobs were chosen for, and the jobs of the
    # file left out for it (a plain load keeps every job: host None, nothing skipped).
    host: str | None = None
    skipped: tuple[Skipped, ...] = ()

    def job(self, name: str) -> Job | None:
        return next((j for j in self.jobs if j.name == name), None)

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes its jobs are in, user first."""
        found = {j.scope for j in self.jobs}
        return tuple(s for s in ("user", "system") if s in found)

    def scoped(self, scope: str) -> "Config":
        """Its jobs of one scope: each scope is installed, recorded and read on its own."""
        return self._replace(jobs=tuple(j for j in self.jobs if j.scope == scope),
                             elsewhere=tuple(j.name for j in self.jobs if j.scope != scope))

    def for_target(self, target: str) -> tuple[Job, ...]:
        return tuple(j for j in self.jobs if j.enabled and target in j.targets)
