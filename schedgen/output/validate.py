"""How `validate` reads: one line for people, one object (with every problem) for --json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedgen.config.model import Config
from schedgen.config.select import unmatched
from schedgen.errors import ConfigError


def valid_json(path: Path, config: Config) -> dict[str, Any]:
    return {"valid": True, "config": str(path), "namespace": config.namespace,
            "jobs": [j.name for j in config.jobs],
            "warnings": [{"where": w, "message": m} for w, m in unmatched(config)]}


def invalid_json(path: Path, exc: ConfigError) -> dict[str, Any]:
    return {"valid": False, "config": str(path), "problems": [
        {"where": p.where, "message": p.message, "line": p.line} for p in exc.problems]}


def valid_text(path: Path, config: Config) -> str:
    n = len(config.jobs)
    warnings = "".join(f"\nwarning: {w}: {m}" for w, m in unmatched(config))
    return (f"{path}: valid, {n} job{'s' if n != 1 else ''} in namespace "
            f"{config.namespace!r}{warnings}")
