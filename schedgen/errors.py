"""One exception base for expected failures, mapped to exit codes at the CLI.

The codes (README "Commands"): 0 ok, 1 changes pending (diff, status --check),
2 bad input (config or usage), 3 a system operation failed, 4 the installed state is
unknown (status, check, report: a scheduler program is missing or failed), 70 a bug in schedgen
(EX_SOFTWARE; the CLI writes a log with the traceback).
"""

from __future__ import annotations

from typing import NamedTuple

EXIT_OK = 0
EXIT_CHANGES = 1
EXIT_INPUT = 2
EXIT_SYSTEM = 3
EXIT_UNKNOWN = 4  # status/check/report: a scheduler could not be read, its state is unknown
EXIT_BUG = 70


class SchedgenError(Exception):
    """An expected failure: the message is for the user, no traceback."""

    exit_code = EXIT_INPUT


class UsageError(SchedgenError):
    exit_code = EXIT_INPUT


class Problem(NamedTuple):
    """One thing wrong with a config: where (``jobs.x.field``) and what."""

    where: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        at = f" (line {self.line})" if self.line else ""
        return f"{self.where}: {self.message}{at}"


class ConfigError(SchedgenError):
    """The config is invalid; carries every problem found, not just the first."""

    exit_code = EXIT_INPUT

    def __init__(self, path: str, problems: list[Problem]):
        self.path = path
        self.problems = problems
        n = len(problems)
        lines = [f"{path}: {n} problem{'s' if n != 1 else ''}"]
        lines += [f"  {p}" for p in problems]
        super().__init__("\n".join(lines))


class SystemOpError(SchedgenError):
    """A system operation (crontab, launchctl, a write) failed."""

    exit_code = EXIT_SYSTEM


class Interrupted(SystemOpError):
    """A signal (INT, TERM, HUP) stopped an apply between two steps; exit 128 + N."""

    def __init__(self, signum: int, name: str):
        super().__init__(f"interrupted by {name}; stopped after the step in progress")
        self.exit_code = 128 + signum


class RecordError(SystemOpError):
    """The ownership record cannot be used (damaged, or from a newer schedgen)."""

    exit_code = EXIT_SYSTEM
