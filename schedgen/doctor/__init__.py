"""`schedgen doctor`: what would make a job fail silently on this host, each found by
one check function that returns a `Check` (its verdict, what it saw, what to do).

Checks every target shares live in `shared`; a target's own live in its folder
(`schedgen/targets/<name>/doctor.py`), reached through its `doctor` member.
"""

from __future__ import annotations

from typing import NamedTuple

OK = "ok"
PROBLEM = "problem"  # the job will fail, or not run at all
WARNING = "warning"  # it may: worth a look
SKIPPED = "skipped"  # could not be checked here (said why)


class Check(NamedTuple):
    name: str  # short, stable: "program on PATH", "launchd domain"
    verdict: str  # OK, PROBLEM, WARNING, SKIPPED
    detail: str  # what was seen
    remedy: str = ""  # what to do (empty when nothing is to be done)
    job: str | None = None  # None: the host, for every job

    def of(self, job: str | None) -> Check:
        return self._replace(job=job)


def ok(name: str, detail: str) -> Check:
    return Check(name, OK, detail)


def problem(name: str, detail: str, remedy: str) -> Check:
    return Check(name, PROBLEM, detail, remedy)


def warning(name: str, detail: str, remedy: str) -> Check:
    return Check(name, WARNING, detail, remedy)


def skipped(name: str, detail: str) -> Check:
    return Check(name, SKIPPED, detail)
