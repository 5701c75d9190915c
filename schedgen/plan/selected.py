"""`--target T` means "for target T": a T that nothing goes to is a usage error."""

from __future__ import annotations

from schedgen.config.model import Config
from schedgen.errors import UsageError
from schedgen.machine.ownership import Record


def check(config: Config, record: Record, targets: tuple[str, ...] | None) -> None:
    """diff/apply/status --target T: exit 2 when no enabled job goes to T and nothing of
    the namespace is installed there (else an empty plan would read as "in sync")."""
    for t in targets or ():
        # Every recorded artifact names the targets it was installed for (whatever kinds
        # of artifact a target has): a unit file, a CronJob, a plist, the crontab block.
        if config.for_target(t) or any(t in e.targets for e in record.entries.values()):
            continue
        named = sorted({x for j in config.jobs if j.enabled for x in j.targets})
        away = (f"; {len(config.skipped)} of its jobs are not for host {config.host}"
                if config.skipped else "")
        raise UsageError(
            f"--target {t}: no enabled job of namespace {config.namespace} goes to {t} "
            f"(they go to: {', '.join(named) or 'nothing'}{away}) and nothing is installed "
            "there. "
            f"`schedgen render --target {t} --out DIR` shows what every job would be for {t}.")
