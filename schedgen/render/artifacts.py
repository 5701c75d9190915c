"""The desired state: what schedgen wants on disk for a config, per target."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import NamedTuple

import jinja2

from schedgen import __version__, paths  # __version__: the template cache folder only
from schedgen.config.model import PLACEHOLDERS, Command, Config, Job
from schedgen.render import shipped, wordcache
from schedgen.schedule.describe import describe_zoned
from schedgen.schedule.expressions import Cron, Every, Reboot, every_as_cron
from schedgen.schedule.to_calendar import union_dicts

MARKER = "schedgen-managed"  # in every generated file, so schedgen can recognise its own
# (a fixed marker, no version: an upgrade that changes no behaviour changes no file)
RUNTIME = "runtime.bash"  # the shared wrapper runtime in templates/, plain bash
# Appended to the runtime (after its queue-only part: only queue jobs read it).
RUNTIME_PARTS = ("fscheck.sh",)
NOTIFY = "notify.sh"  # installed beside the runtime; sourced by jobs with notify settings
NOTIFY_EVENTS = ("failure", "recovery")  # the events a run sends ("missed" is check's)
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


class Artifact(NamedTuple):  # a NamedTuple: far cheaper to define than a frozen dataclass
    kind: str  # "runtime" | "wrapper" | "plist" | "cron" | "service" | "timer" | "cronjob"
    job: str | None  # None for the cron block, which holds every cron job
    rel: str  # where `render --out DIR` puts it
    path: Path | None  # where `apply` installs it (None: inside the crontab)
    content: str
    mode: int = 0o644


# Whether compiled templates may be stored: only inside `storing_compiled_templates()`.
_STORE: ContextVar[bool] = ContextVar("schedgen_store_compiled", default=False)


def _env() -> jinja2.Environment:
    return _environment(_STORE.get(), paths.cache_dir() / f"jinja-{__version__}")


@cache
def _environment(store: bool, folder: Path) -> jinja2.Environment:
    wordcache.load(folder.parent)  # the schedules in words, kept like the templates
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(shipped.text), bytecode_cache=_TemplateCache(folder, store),
        autoescape=jinja2.select_autoescape(enabled_extensions=("plist.j2",), default=False),
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["q"] = lambda s: shlex.quote(str(s))
    env.filters["word"] = bash_word
    env.filters["cron_escape"] = cron_escape
    env.filters["xml_comment"] = xml_comment
    # The schedule in words; never depends on the clock.
    env.filters["describe"] = lambda job: describe_zoned(job.schedule, job.timezone)
    env.filters["cron_command"] = cron_command
    return env


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs: compiling them was most of a `diff`.

    Read by every command; written only by those that write anyway (`render`, `apply`),
    so `diff`, `status` and dry runs leave the disk alone. Keyed by each template's
    checksum (and the Python version, by jinja2); the folder is per schedgen version
    because the lexer options live in code, not in the templates.
    """

    def __init__(self, folder: Path, writable: bool) -> None:
        self.writable = writable
        self.folder = folder
        super().__init__(str(folder))

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            pass  # unreadable (say, the cache folder is a file): compile instead

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if not self.writable:
            return
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass  # a cache that cannot be written only costs time


@contextmanager
def storing_compiled_templates() -> Iterator[None]:
    """Within this block, templates compiled for rendering are stored (commands that write),
    and at its end the schedules put in words (render/wordcache.py)."""
    token = _STORE.set(True)
    try:
        yield
        wordcache.store(paths.cache_dir())
    finally:
        _STORE.reset(token)


def bash_word(arg: str) -> str:
    """One argv element as a bash word; placeholders become quoted variable expansions."""
    out, pos = [], 0
    for m in _PLACEHOLDER.finditer(arg):
        if m.start() > pos:
            out.append(shlex.quote(arg[pos:m.start()]))
        out.append(f'"${{SCHEDGEN_{m.group(1).upper()}}}"')
        pos = m.end()
    if pos < len(arg) or not out:
        out.append(shlex.quote(arg[pos:]))
    return "".join(out)


def xml_comment(text: object) -> str:
    """Text safe inside <!-- -->: XML forbids "--" there, and a comment ending in "-"."""
    out = re.sub("-(?=-)", "- ", str(text))
    return out + " " if out.endswith("-") else out


def cron_escape(text: str) -> str:
    """cron turns an unescaped % into a newline; escape every one."""
    return text.replace("%", "\\%")


def cron_command(job: Job) -> str:
    """What a crontab line runs for a job; status finds the job's lines by it."""
    return cron_escape(shlex.quote(str(job.wrapper_path))) + " --cron"


def header(config: Config) -> dict[str, str]:
    return {"config": str(config.path), "marker": MARKER, "namespace": config.namespace}


def runtime_name(namespace: str) -> str:
    """The runtime's file name beside the job files: one per namespace, so namespaces
    sharing a wrapper_dir never remove or replace each other's."""
    return f"schedgen-runtime.{namespace}.bash"


def runtime_path(job: Job, config: Config) -> Path:
    return job.wrapper_dir / runtime_name(config.namespace)


@cache
def runtime_text() -> str:
    """runtime.bash with its parts appended: one file to install, or to inline."""
    parts = [shipped.text(RUNTIME).rstrip("\n")]
    for name in RUNTIME_PARTS:
        parts.append(f"# --- {name} ---\n" + shipped.text(name).rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def notify_name(namespace: str) -> str:
    """notify.sh's file name beside the job files (one per namespace, like the runtime)."""
    return f"schedgen-notify.{namespace}.bash"


def notify_path(job: Job, config: Config) -> Path:
    return job.wrapper_dir / notify_name(config.namespace)


@cache
def notify_text() -> str:
    return shipped.text(NOTIFY)


def notify_settings(job: Job) -> dict[str, object] | None:
    """What a run of the job sends: events (with a command only), command, ping URL;
    None when a run sends nothing (the job file then does not load notify.sh)."""
    n = job.notify
    if n is None:
        return None
    on = [e for e in n.on if e in NOTIFY_EVENTS] if n.command is not None else []
    if not on and not n.ping_url:
        return None
    return {"on": " ".join(on), "command": n.command if on else None,
            "ping_url": n.ping_url or ""}


def _program(command: Command | None) -> str | None:
    """The program a command runs, for the wrapper's PATH check (None: only known at run time)."""
    if command is None:
        return None
    if isinstance(command, str):
        return "bash"
    return None if _PLACEHOLDER.search(command[0]) else command[0]


def wrapper(job: Job, config: Config, standalone: bool = False) -> str:
    """The job file; with standalone, the runtime inlined (a job that travels alone)."""
    prog, smoke_prog = _program(job.command), _program(job.smoke)
    notify = notify_settings(job)
    text = _env().get_template("job.sh.j2").render(
        job=job, h=header(config), queue=job.queue, lock=job.lock, prog=prog or "",
        smoke_prog=smoke_prog if smoke_prog and smoke_prog != prog else "",
        rotate_every=max(1, min(32, job.logs.max_size // 65536)),
        runtime=runtime_name(config.namespace),
        runtime_text=runtime_text().rstrip("\n") if standalone else "",
        notify=notify, notify_file=notify_name(config.namespace),
        notify_text=notify_text().rstrip("\n") if standalone and notify else "")
    if job.timezone:
        # The zone code only for zoned jobs (tests/test_layout.py: LAZY_EDGES).
        from schedgen.render import tzrender

        text = tzrender.gated(text, job)
    return text


def plist(job: Job, config: Config) -> str:
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    every = next((e.seconds for e in job.schedule if isinstance(e, Every)), None)
    reboot = any(isinstance(e, Reboot) for e in job.schedule)
    calendar = union_dicts(crons) if crons else None
    if crons and job.timezone:
        from schedgen.render import tzrender

        calendar = tzrender.host_calendar(job)
    return _env().get_template("launchd.plist.j2").render(
        job=job, h=header(config), calendar=calendar,
        interval=every, run_at_load=job.run_at_load or reboot,
    )


def cron_lines(job: Job) -> list[str]:
    if job.timezone:
        from schedgen.render import tzrender

        return tzrender.host_cron_lines(job)
    exprs = []
    for e in job.schedule:
        if isinstance(e, Every):
            exprs.append(every_as_cron(e.seconds) or "")
        else:
            exprs.append(e.text)
    return exprs


def cron_block(config: Config, jobs: tuple[Job, ...]) -> str:
    return _env().get_template("crontab.j2").render(
        jobs=[(j, cron_lines(j)) for j in jobs], h=header(config))
