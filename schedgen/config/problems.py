"""Collecting every problem of a config at once, each with where it is (key and line)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

from schedgen.config import values as f
from schedgen.config.defaults import REQUIRED, Default
from schedgen.errors import Problem

T = TypeVar("T")


class Problems:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.found: list[Problem] = []

    def add(self, where: str, message: str) -> None:
        self.found.append(Problem(where, message, self.line(where)))

    def line(self, where: str) -> int | None:
        """Best-effort TOML line for a dotted key: its table header, then the key."""
        parts = where.split(".")
        for depth in range(len(parts), 0, -1):
            table, key = parts[:depth], parts[depth:]
            header = re.compile(r"\s*\[\s*" + r"\s*\.\s*".join(
                rf"(?:{re.escape(p)}|\"{re.escape(p)}\")" for p in table) + r"\s*\]")
            for i, line in enumerate(self.lines):
                if header.match(line):
                    if not key:
                        return i + 1
                    keyre = re.compile(rf"\s*\"?{re.escape(key[0])}\"?\s*=")
                    for j in range(i + 1, len(self.lines)):
                        if self.lines[j].lstrip().startswith("["):
                            break
                        if keyre.match(self.lines[j]):
                            return j + 1
                    return i + 1
        return None

    def parse(self, where: str, value: Any, parse: Callable[[Any], T]) -> T | None:
        """``parse(value)``, or None with the problem recorded."""
        try:
            return parse(value)
        except ValueError as exc:
            self.add(where, str(exc))
            return None

    def table(self, where: str, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
        """The table's known keys; each unknown one is a problem with a "did you mean"."""
        if not isinstance(value, dict):
            self.add(where, f"expected a table, got {f.type_name(value)}")
            return {}
        for key in value:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
                self.add(f"{where}.{key}" if where else key, f"unknown key; {hint}")
        return {k: v for k, v in value.items() if k in allowed}


class Fields:
    """The keys of one table, each given or defaulted (config.defaults), then parsed.

    A key that fails to parse is recorded as a problem and its value is a placeholder;
    the loader drops a job with any problem, so no placeholder reaches the model.
    """

    def __init__(self, problems: Problems, where: str, raw: dict[str, Any],
                 table: dict[str, Default]) -> None:
        self.problems, self.where, self.raw, self.table = problems, where, raw, table

    def _raw(self, key: str) -> Any:
        return self.raw[key] if key in self.raw else self.table[key].resolve()

    def get(self, key: str, parse: Callable[[Any], T]) -> T:
        """The key's value, or (with the problem recorded) a placeholder of no use."""
        raw = self._raw(key)
        if raw is REQUIRED:
            self.problems.add(f"{self.where}.{key}", "missing (required)")
            return cast(T, _INVALID)
        value = self.problems.parse(f"{self.where}.{key}", raw, parse)
        return value if value is not None else cast(T, _INVALID)

    def optional(self, key: str, parse: Callable[[Any], T]) -> T | None:
        raw = self._raw(key)
        return None if raw is None else self.get(key, parse)


# Stands in for a value that failed to parse; the job it is in is dropped, so it never
# reaches a model.
_INVALID = None
