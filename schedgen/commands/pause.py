"""`pause` and `resume`: a job stays installed, with its state, and its firings are skipped.

The pause is a file in schedgen's state folder (schedgen/machine/pause.py) that the
wrapper checks at each firing; a target that runs no wrapper here is applied again, and
its object says so (a CronJob is suspended while the job is paused).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from schedgen.commands import apply
from schedgen.config import load as cfg
from schedgen.config.model import Config
from schedgen.errors import UsageError
from schedgen.machine import pause as pause_state
from schedgen.targets import registry

Say = Callable[[str], None]


def parse_until(text: str, now: datetime | None = None) -> datetime:
    """An ISO 8601 time (2026-12-24T08:00; without an offset: the host's local time)."""
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"--until {text!r}: expected a time like 2026-12-24T08:00") from None
    if at.tzinfo is None:  # the host's local time
        first, second = (at.replace(fold=f).astimezone() for f in (0, 1))
        # A time in a spring-forward gap ends the pause as the clock passes it (after the
        # gap), never an hour before it; a repeated hour's time is its first one.
        gap = first.replace(tzinfo=None) != at
        at = max(first, second) if gap else first
    if at <= (now or datetime.now(UTC)):
        raise UsageError(f"--until {text}: that time has passed")
    return at.astimezone(UTC)


def _jobs(config: Config, names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if config.job(n) is None]
    if unknown:
        raise UsageError(f"no job named {', '.join(unknown)} in {config.path} "
                         f"(jobs: {', '.join(j.name for j in config.jobs)})")
    return list(dict.fromkeys(names))


def _remote(config_path: Path, config: Config, names: list[str], say: Say) -> None:
    """Targets whose jobs run from no job file here (a CronJob) learn of a pause from
    their object (suspended): those targets are applied again."""
    remote = tuple(dict.fromkeys(t for j in config.jobs if j.name in names for t in j.targets
                                 if not registry.get(t).local))
    if remote:
        apply.apply(config_path, remote, say=say)


def pause(config_path: Path, names: Sequence[str], until: str | None, say: Say = print) -> int:
    config = cfg.load(config_path)
    jobs = _jobs(config, names)
    end = parse_until(until) if until else None
    for name in jobs:
        p = pause_state.pause(config.namespace, name, end)
        say(f"{name}: {p.text()}; its firings are skipped (schedgen resume {name})")
    _remote(config_path, config, jobs, say)
    return 0


def resume(config_path: Path, names: Sequence[str], say: Say = print) -> int:
    config = cfg.load(config_path)
    jobs = _jobs(config, names)
    for name in jobs:
        was = pause_state.resume(config.namespace, name)
        say(f"{name}: resumed" if was else f"{name}: was not paused")
    _remote(config_path, config, jobs, say)
    return 0
