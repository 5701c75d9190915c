"""Collecting every problem of a config at once, each with where it is (key and line)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Container
from typing import Any, TypeVar, cast

from schedgen.config import values as f
from schedgen.config.defaults import REQUIRED, Default
from schedgen.errors import Problem

T = TypeVar("T")
_HEADER = re.compile(r"\s*\[([^\[\]]*)\]")


def _squeeze(name: str) -> str:
    """A header's dotted name without the blanks TOML allows around its dots."""
    return re.sub(r"\s*\.\s*", ".", name.strip())


class Problems:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.found: list[Problem] = []
        self._headers: dict[str, int] | None = None  # a table header -> its first line

    def add(self, where: str, message: str) -> None:
        self.found.append(Problem(where, message, self.line(where)))

    def line(self, where: str) -> int | None:
        """Best-effort TOML line for a dotted key: its table header, then the key.

        The headers are indexed once, on the first problem: a config with a problem in
        each of its jobs does not read the whole document once per problem."""
        if self._headers is None:
            self._headers = {}
            for i, line in enumerate(self.lines):
                m = _HEADER.match(line)
                if m:
                    self._headers.setdefault(_squeeze(m.group(1)), i)
        parts = where.split(".")
        for depth in range(len(parts), 0, -1):
            table, key = parts[:depth], parts[depth:]
            found = self._header(table)
            if found is None:
                continue
            i = found
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

    def _header(self, table: list[str]) -> int | None:
        """The first line of [a.b] (each name bare or quoted, spaces around the dots)."""
        assert self._headers is not None
        found = None
        for quoted in itertools.product((False, True), repeat=len(table)):
            name = ".".join(f'"{p}"' if q else p for p, q in zip(table, quoted, strict=True))
            i = self._headers.get(_squeeze(name))
            if i is not None and (found is None or i < found):
                found = i
        return found

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
                import difflib  # only for a key that is wrong (start-up time)

                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"expected one of: {', '.join(allowed)}"
                self.add(f"{where}.{key}" if where else key, f"unknown key; {hint}")
        return {k: v for k, v in value.items() if k in allowed}


class Fields:
    """The keys of one table, each given or defaulted (config.defaults), then parsed.

    A key that fails to parse is recorded as a problem and its value is a placeholder;
    the loader drops a job with any problem, so no placeholder reaches the model.

    `shared`: for keys the table does not give itself (they come from [defaults] or the
    built-in default, the same value for every job), each parse's outcome, value or
    problem, kept for the next job that inherits it: a default is parsed once per
    config, not once per job. Only for `get(..., inherit=True)`, whose parse depends on
    the value alone.
    """

    def __init__(self, problems: Problems, where: str, raw: dict[str, Any],
                 table: dict[str, Default], shared: dict[str, tuple[Any, str | None]] | None
                 = None, own: Container[str] = ()) -> None:
        self.problems, self.where, self.raw, self.table = problems, where, raw, table
        self.shared, self.own = shared, own

    def _raw(self, key: str) -> Any:
        return self.raw[key] if key in self.raw else self.table[key].resolve()

    def get(self, key: str, parse: Callable[[Any], T], inherit: bool = False) -> T:
        """The key's value, or (with the problem recorded) a placeholder of no use."""
        if inherit and self.shared is not None and key not in self.own:
            hit = self.shared.get(key)  # parsed for an earlier job: the same raw value
            if hit is not None:
                if hit[1] is not None:
                    self.problems.add(f"{self.where}.{key}", hit[1])
                return hit[0]  # type: ignore[no-any-return]  # (cast is a call: 20,000 jobs)
        raw = self._raw(key)
        if raw is REQUIRED:
            self.problems.add(f"{self.where}.{key}", "missing (required)")
            return cast(T, _INVALID)
        if inherit and self.shared is not None and key not in self.own:
            if key not in self.shared:
                try:
                    self.shared[key] = (parse(raw), None)
                except ValueError as exc:
                    self.shared[key] = (_INVALID, str(exc))
            value, message = self.shared[key]
            if message is not None:
                self.problems.add(f"{self.where}.{key}", message)
            return cast(T, value)
        value = self.problems.parse(f"{self.where}.{key}", raw, parse)
        return value if value is not None else cast(T, _INVALID)

    def optional(self, key: str, parse: Callable[[Any], T], inherit: bool = False) -> T | None:
        raw = self._raw(key)
        return None if raw is None else self.get(key, parse, inherit)


# Stands in for a value that failed to parse; the job it is in is dropped, so it never
# reaches a model.
_INVALID = None
