"""Durations and sizes as jobs.toml spells them."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+)([smhd])")
_DURATION_FULL = re.compile(r"(?:\d+[smhd])+")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_SIZE = re.compile(r"(\d+)\s*(B|KB|MB|GB|KiB|MiB|GiB)?", re.IGNORECASE)
_BYTES = {
    "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3,
}


def parse_duration(value: object) -> int:
    """Seconds from an int or a string like ``"90s"`` or ``"1h30m"``."""
    if isinstance(value, bool):
        raise ValueError("expected a duration like 90, \"90s\" or \"1h30m\", got a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a duration cannot be negative ({value})")
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a duration like \"90s\" or \"1h30m\", got {type(value).__name__}")
    text = value.strip().replace(" ", "")
    if text.isdigit():
        return int(text)
    if not _DURATION_FULL.fullmatch(text):
        raise ValueError(f"{value!r} is not a duration: use <n>s, <n>m, <n>h, <n>d parts, like \"1h30m\"")
    return sum(int(n) * _SECONDS[u] for n, u in _DURATION_PART.findall(text))


def parse_size(value: object) -> int:
    """Bytes from an int or a string like ``"10MB"``."""
    if isinstance(value, bool):
        raise ValueError("expected a size like \"10MB\", got a boolean")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative ({value})")
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a size like \"10MB\", got {type(value).__name__}")
    m = _SIZE.fullmatch(value.strip())
    if not m:
        raise ValueError(f"{value!r} is not a size: use <n>KB, <n>MB or <n>GB, like \"10MB\"")
    return int(m.group(1)) * _BYTES[(m.group(2) or "b").lower()]


def format_duration(seconds: int) -> str:
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
