"""Which jobs.toml a command reads: -c, then $SCHEDGEN_CONFIG, then ./jobs.toml, then the
config the last `apply` recorded (so `status` works from any folder).

Each `apply` keeps the config's absolute path in its namespace's ownership record (the
crontab block's header says it too). When no other source gives a config and exactly
one namespace recorded one, that is used, and said; when several did, the user picks.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from schedgen.errors import UsageError
from schedgen.paths import state_dir

DEFAULT = "jobs.toml"


def recorded() -> dict[str, Path]:
    """namespace -> the config its last apply recorded (those still on disk)."""
    out: dict[str, Path] = {}
    folder = state_dir() / "installed"  # where machine/ownership.py keeps the records
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        return out
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged record says so when its namespace is used
        config = data.get("config") if isinstance(data, dict) else None
        if isinstance(config, str) and config and Path(config).is_file():
            out[str(data.get("namespace") or f.stem)] = Path(config)
    return out


def config_path(given: str | None, say: bool = True) -> Path:
    """The config to read; `say`: tell stderr when it comes from a record."""
    if given:
        return Path(given)
    env = os.environ.get("SCHEDGEN_CONFIG")
    if env:
        return Path(env)
    if Path(DEFAULT).exists():
        return Path(DEFAULT)
    found = recorded()
    if len(set(found.values())) == 1:
        ns, path = next(iter(found.items()))
        if say:
            print(f"using {path} (recorded by the last apply of namespace {ns})",
                  file=sys.stderr)
        return path
    if found:
        listed = "; ".join(f"namespace {ns}: {p}" for ns, p in sorted(found.items()))
        raise UsageError(f"no {DEFAULT} here, and the last applies of several namespaces "
                         f"recorded their configs ({listed}); give one with -c/--config")
    return Path(DEFAULT)  # loading it says that there is none
