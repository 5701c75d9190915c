"""The desired state: what schedgen wants on disk for a config, per target."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import jinja2

from schedgen import __version__, paths  # __version__: the template cache folder only
from schedgen.calendar import union_dicts
from schedgen.describe import describe
from schedgen.model import PLACEHOLDERS, Command, Config, Job
from schedgen.schedule import Cron, Every, Reboot, every_as_cron

MARKER = "schedgen-managed"  # in every generated file, so schedgen can recognise its own
# (a fixed marker, no version: an upgrade that changes no behaviour changes no file)
RUNTIME = "runtime.bash"  # the shared wrapper runtime in templates/, plain bash
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class Artifact:
    kind: str  # "runtime" | "wrapper" | "plist" | "cron"
    job: str | None  # None for the cron block, which holds every cron job
    rel: str  # where `render --out DIR` puts it
    path: Path | None  # where `apply` installs it (None: inside the crontab)
    content: str
    mode: int = 0o644


@cache
def _env() -> jinja2.Environment:
    def load(name: str) -> str:
        return resources.files("schedgen.templates").joinpath(name).read_text(encoding="utf-8")

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load), bytecode_cache=_TemplateCache(),
        autoescape=jinja2.select_autoescape(enabled_extensions=("plist.j2",), default=False),
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["q"] = lambda s: shlex.quote(str(s))
    env.filters["word"] = bash_word
    env.filters["cron_escape"] = cron_escape
    # "--" may not appear inside an XML comment.
    env.filters["xml_comment"] = lambda s: str(s).replace("--", "- -")
    env.filters["describe"] = describe  # the schedule in words; never depends on the clock
    return env


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs: compiling them was most of a `diff`.

    Read by every command; written only by those that write anyway (`render`, `apply`),
    so `diff`, `status` and dry runs leave the disk alone. Keyed by each template's
    checksum (and the Python version, by jinja2); the folder is per schedgen version
    because the lexer options live in code, not in the templates.
    """

    writable = False

    def __init__(self) -> None:
        self.folder = paths.cache_dir() / f"jinja-{__version__}"
        super().__init__(str(self.folder))

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if not self.writable:
            return
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass  # a cache that cannot be written only costs time


def keep_compiled_templates() -> None:
    """Let this process store the templates it compiles (for commands that write)."""
    _TemplateCache.writable = True


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


def cron_escape(text: str) -> str:
    """cron turns an unescaped % into a newline; escape every one."""
    return text.replace("%", "\\%")


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
    return resources.files("schedgen.templates").joinpath(RUNTIME).read_text(encoding="utf-8")


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
    return _env().get_template("job.sh.j2").render(
        job=job, h=header(config), queue=job.queue, lock=job.lock, prog=prog or "",
        smoke_prog=smoke_prog if smoke_prog and smoke_prog != prog else "",
        rotate_every=max(1, min(32, job.logs.max_size // 65536)),
        runtime=runtime_name(config.namespace),
        runtime_text=runtime_text().rstrip("\n") if standalone else "")


def plist(job: Job, config: Config) -> str:
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    every = next((e.seconds for e in job.schedule if isinstance(e, Every)), None)
    reboot = any(isinstance(e, Reboot) for e in job.schedule)
    return _env().get_template("launchd.plist.j2").render(
        job=job, h=header(config), calendar=union_dicts(crons) if crons else None,
        interval=every, run_at_load=job.run_at_load or reboot,
    )


def cron_lines(job: Job) -> list[str]:
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


def desired(config: Config, targets: tuple[str, ...] | None = None,
            standalone: bool = False) -> list[Artifact]:
    """Every artifact the config wants for the given targets (default: all it names):
    the runtime once per wrapper_dir (before the job files that source it), the job
    files, plists, the crontab block. standalone: job files with the runtime inlined."""
    wanted = targets or ("launchd", "cron")
    out: list[Artifact] = []
    wrapped: set[str] = set()
    runtimes: dict[Path, Artifact] = {}
    from schedgen.paths import launch_agents_dir

    for target in ("launchd", "cron"):
        if target not in wanted:
            continue
        jobs = config.for_target(target)
        for job in jobs:
            if job.name not in wrapped:
                wrapped.add(job.name)
                rt = runtime_path(job, config)
                if rt not in runtimes and not standalone:
                    runtimes[rt] = Artifact("runtime", None, f"wrappers/{rt.name}", rt,
                                            runtime_text(), 0o644)
                out.append(Artifact("wrapper", job.name, f"wrappers/{job.name}.sh",
                                    job.wrapper_path, wrapper(job, config, standalone), 0o755))
            if target == "launchd":
                out.append(Artifact("plist", job.name, f"launchd/{job.label}.plist",
                                    launch_agents_dir() / f"{job.label}.plist", plist(job, config)))
        if target == "cron" and jobs:
            out.append(Artifact("cron", None, "cron/crontab", None, cron_block(config, jobs)))
    return [*runtimes.values(), *out]
