"""What the launchd target remembers between commands (the state folder's launchd.json):
the last refusal of each job's bootstrap (so `status` and `doctor` can say launchd
refused it) and whether `apply` has explained the "Background Items Added" notice."""

from __future__ import annotations

import json
from typing import Any

from schedgen import paths
from schedgen.machine.fs import atomic_write


def _file() -> Any:
    return paths.state_dir() / "launchd.json"


def _read() -> dict[str, Any]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(data: dict[str, Any]) -> None:
    atomic_write(_file(), json.dumps(data, indent=2, sort_keys=True) + "\n", 0o600)


def refusals() -> dict[str, str]:
    r = _read().get("refused", {})
    return {str(k): str(v) for k, v in r.items()} if isinstance(r, dict) else {}


def refused(label: str, message: str) -> None:
    data = _read()
    data.setdefault("refused", {})[label] = message
    _write(data)


def loaded(label: str) -> None:
    data = _read()
    if label in data.get("refused", {}):
        del data["refused"][label]
        _write(data)


def first_notice(key: str) -> bool:
    """True the first time `key` is asked (and remembers it)."""
    data = _read()
    seen = data.setdefault("notices", [])
    if key in seen:
        return False
    seen.append(key)
    _write(data)
    return True
