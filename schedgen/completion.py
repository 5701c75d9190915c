"""Shell completion of values: job names, run IDs, --target names.

Called by the shell's completion script (`schedgen --install-completion`) while the user
types, so each stays quiet and quick: any problem (no config, a bad one) completes
nothing rather than printing an error into the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedgen.errors import SchedgenError


def _config(params: dict[str, Any]) -> Any:
    from schedgen.config import load as cfg
    from schedgen.config.discover import config_path

    return cfg.load(config_path(params.get("config"), say=False))


def targets(incomplete: str) -> list[str]:
    from schedgen.targets import registry

    return [n for n in registry.names() if n.startswith(incomplete)]


def jobs(ctx: Any, incomplete: str) -> list[str]:
    """The config's job names (the config from -c, $SCHEDGEN_CONFIG, ./jobs.toml...)."""
    try:
        names = [j.name for j in _config(ctx.params).jobs]
    except (SchedgenError, OSError, ValueError):
        return []
    given = set(ctx.params.get("jobs") or ())
    return [n for n in names if n.startswith(incomplete) and n not in given]


def run_ids(ctx: Any, incomplete: str) -> list[str]:
    """The job's run IDs, newest first."""
    try:
        job = _config(ctx.params).job(ctx.params.get("job") or "")
    except (SchedgenError, OSError, ValueError):
        return []
    if job is None:
        return []
    try:
        found = [d.name for d in Path(job.log_dir, "runs").iterdir() if d.is_dir()]
    except OSError:
        return []
    return sorted((i for i in found if i.startswith(incomplete)), reverse=True)
