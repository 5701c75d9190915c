"""systemd user units for a job: `<label>.service` (runs the wrapper once) and `<label>.timer`.

Cron expressions become OnCalendar lines (schedgen.oncalendar), `@reboot` becomes
OnStartupSec=0 (the user manager's start: boot with lingering, else the first login),
`@every` becomes OnActiveSec + OnUnitActiveSec (from the timer's start, then from
each run's start). Persistent=true (catch_up = "once") runs a calendar firing missed
while the machine was off once at boot; random_delay is RandomizedDelaySec, with
FixedRandomDelay for a stable offset (docs/policies.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from schedgen import paths
from schedgen.config.model import Config, Job
from schedgen.render import source
from schedgen.render.artifacts import Artifact, header, render_template
from schedgen.schedule.expressions import Cron, Every, Reboot
from schedgen.targets.systemd.oncalendar import on_calendar

_PLAIN = re.compile(r"[A-Za-z0-9_%$+=:,./@-]+")


def sd_escape(text: str) -> str:
    """systemd expands %-specifiers in most settings; a literal % is %%."""
    return str(text).replace("%", "%%")


def exec_word(program: str) -> str:
    """ExecStart's program, quoted if needed. Specifiers are expanded there (% is %%);
    $VARIABLES are not (they are only in the arguments), so a $ stays as it is."""
    word = sd_escape(program)
    if _PLAIN.fullmatch(word):
        return word
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


# Characters systemd refuses in an executable's name ("Executable name contains special
# characters"), though it takes them in an argument: a home like /home/o'brien.
_NOT_IN_PROGRAM = ("'", '"', "\\", "\t")


def exec_start(wrapper: str) -> str:
    """ExecStart for a job file: the file itself, or bash running it where its path holds
    a character systemd takes in no program name (the job file is bash: the same run)."""
    if any(c in wrapper for c in _NOT_IN_PROGRAM):
        escaped = sd_escape(wrapper).replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
        escaped = escaped.replace("$", "$$")  # an argument's $NAME is expanded: $$ is a $
        return f'/bin/bash "{escaped}"'
    return exec_word(wrapper)


def timespan(seconds: int) -> str:
    """A duration in systemd's notation: 90 -> '1min 30s', 5400 -> '1h 30min'."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return " ".join(parts) or "0"


def timer_settings(job: Job) -> list[tuple[str, str]]:
    """The [Timer] keys that carry the schedule, in the order they are written."""
    out: list[tuple[str, str]] = []
    crons = [e for e in job.schedule if isinstance(e, Cron)]
    # A zoned job: systemd reads the zone itself, as the last word of every line.
    out += [("OnCalendar", line) for line in on_calendar(crons, job.timezone)] if crons else []
    if any(isinstance(e, Reboot) for e in job.schedule):
        out.append(("OnStartupSec", "0"))
    for e in job.schedule:
        if isinstance(e, Every):
            out += [("OnActiveSec", timespan(e.seconds)), ("OnUnitActiveSec", timespan(e.seconds))]
    if crons and job.catch_up == "once":
        out.append(("Persistent", "true"))
    if job.random_delay:
        out.append(("RandomizedDelaySec", timespan(job.random_delay)))
        out.append(("FixedRandomDelay", "true" if job.random_delay_stable else "false"))
    return out


def service(job: Job, config: Config) -> str:
    return render_template(
        "systemd.service.j2", {"sd_escape": sd_escape},
        job=job, h=header(config), exec=exec_start(str(job.wrapper_path)),
        service=f"{job.label}.service", timer=f"{job.label}.timer")


def timer(job: Job, config: Config) -> str:
    return render_template(
        "systemd.timer.j2", {"sd_escape": sd_escape},
        job=job, h=header(config), settings=timer_settings(job))


def unit_dir() -> Path:
    """The user's units; in system scope, the machine's own (/etc/systemd/system)."""
    if paths.system():
        return paths.system_path("/etc/systemd/system")
    return paths.config_dir() / "systemd" / "user"


def artifacts(job: Job, config: Config) -> list[Artifact]:
    """The service first: apply writes it before the timer that starts it."""
    d = unit_dir()
    out = []
    for kind, render in (("service", service), ("timer", timer)):
        path = d / f"{job.label}.{kind}"
        out.append(Artifact(kind, job.name, f"systemd/{job.label}.{kind}", path,
                            lambda render=render: render(job, config),  # type: ignore[misc]
                            source=source.of(kind, path, config, (job,))))
    return out
