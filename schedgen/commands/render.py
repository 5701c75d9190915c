"""`render --out DIR`: the desired state written as files, for review or another host."""

from __future__ import annotations

from pathlib import Path

from schedgen.config import load as cfg
from schedgen.errors import SystemOpError, UsageError
from schedgen.machine.fs import atomic_write
from schedgen.render.artifacts import storing_compiled_templates
from schedgen.render.desired import desired


def render(config_path: Path, out: Path, targets: tuple[str, ...] | None) -> list[Path]:
    config = cfg.load(config_path)
    for t in targets or ():
        if not any(t in j.targets for j in config.jobs):
            raise UsageError(f"--target {t}: no job in {config_path} has {t} in its targets")
    with storing_compiled_templates():
        artifacts = desired(config, targets)
    written = []
    for a in artifacts:
        dest = out / a.rel
        try:
            atomic_write(dest, a.content, a.mode)
        except OSError as exc:
            raise SystemOpError(f"cannot write {dest}: {exc.strerror}") from None
        written.append(dest)
    return written
