"""The work behind `validate` and `render`: typed arguments in, result out."""

from __future__ import annotations

from pathlib import Path

from schedgen import config as cfg
from schedgen.errors import SystemOpError
from schedgen.fsutil import atomic_write
from schedgen.model import Config


def validate(config_path: Path) -> Config:
    return cfg.load(config_path)


def render(config_path: Path, out: Path, targets: tuple[str, ...] | None,
           standalone: bool = False) -> list[Path]:
    # Imported here so `validate` never pays for jinja2.
    from schedgen.render import desired, keep_compiled_templates

    config = cfg.load(config_path)
    keep_compiled_templates()
    artifacts = desired(config, targets, standalone)
    written = []
    for a in artifacts:
        dest = out / a.rel
        try:
            atomic_write(dest, a.content, a.mode)
        except OSError as exc:
            raise SystemOpError(f"cannot write {dest}: {exc.strerror}") from None
        written.append(dest)
    return written
