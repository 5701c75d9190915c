"""Which jobs of a jobs.toml belong to the machine a command acts for: the one place
that decides it (today by `hosts`), so every command agrees on it.

A plain load keeps every job (validate, import, the schema see the whole file); the
commands that act for a machine (render, diff, apply, status, next, check, ...) take
`here(config, host)`: the jobs for that host, and the others as `Config.skipped`, each
with the key that leaves it out and why, so a plan removes what a job left behind when
it stopped matching, and `diff` can say what it skips.
"""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from pathlib import Path

from schedgen.config import load as cfg
from schedgen.config.model import Config, Job, Skipped
from schedgen.errors import UsageError

# The name this machine goes by for `hosts` (default: the host name up to its first
# dot). One seam for users (a laptop whose name changes with the network) and tests.
HOST_ENV = "SCHEDGEN_HOST"


def short(name: str) -> str:
    """A host name as `hosts` sees it: up to the first dot, lower case."""
    return name.split(".", 1)[0].lower()


def this_host() -> str:
    # uname's node name is gethostname(2), without importing socket at start-up
    return short(os.environ.get(HOST_ENV) or os.uname().nodename)


def matches(patterns: tuple[str, ...], host: str) -> bool:
    """On `host` when one pattern names it (or none includes: "every host but") and no
    `!pattern` does; the order of the list does not matter."""
    name = short(host)
    include = [p.lower() for p in patterns if not p.startswith("!")]
    if any(fnmatchcase(name, p[1:].lower()) for p in patterns if p.startswith("!")):
        return False
    return not include or any(fnmatchcase(name, p) for p in include)


def _by_hosts(job: Job, host: str) -> Skipped | None:
    if job.hosts is None or matches(job.hosts, host):
        return None
    listed = ", ".join(f'"{p}"' for p in job.hosts)
    return Skipped(job.name, "hosts", f"hosts = [{listed}] does not match host {short(host)}")


# Each key that can leave a job out of a machine: (job, host) -> None, or why not. A new
# one (a scope, say) is one more function here; every command then agrees on it.
_FILTERS = (_by_hosts,)


def why_not(job: Job, host: str) -> Skipped | None:
    """None if `job` is for `host`; else the first key that leaves it out, and why."""
    for keep in _FILTERS:
        why = keep(job, host)
        if why is not None:
            return why
    return None


def here(config: Config, host: str | None = None) -> Config:
    """The config's jobs for `host` (default: this machine), the rest in `skipped`."""
    name = short(host) if host is not None else this_host()
    # The kernel's name is only judged when a job asks for hosts: a machine named
    # "(none)" still runs a file that never says `hosts`.
    told = host is not None or bool(os.environ.get(HOST_ENV))
    if not re.fullmatch(r"[a-z0-9_-]+", name) and (
            told or any(j.hosts is not None for j in config.jobs)):
        seam = "" if told else (f"; this machine's name is {os.uname().nodename!r}: set "
                                f"${HOST_ENV} to the name jobs.toml's `hosts` use for it")
        raise UsageError(f"host name {host if host is not None else name!r}: expected letters, "
                         "digits, '-' and '_' (the short host name, up to the first dot)"
                         + seam)
    jobs, skipped = [], []
    for job in config.jobs:
        why = why_not(job, name)
        if why is None:
            jobs.append(job)
        else:
            skipped.append(why)
    return config._replace(jobs=tuple(jobs), host=name, skipped=tuple(skipped))


def load_here(path: Path, host: str | None = None) -> Config:
    return here(cfg.load(path), host)


def is_elsewhere(host: str | None) -> bool:
    """Does `--host NAME` name another machine than this one?"""
    return host is not None and short(host) != this_host()


def _literal(pattern: str) -> bool:
    return not any(c in pattern for c in "*?[")


def _typo_of(name: str, others: list[str]) -> str | None:
    """A host named elsewhere that `name` looks like a slip of (not a numbered sibling:
    web-1 beside web-2 is a fleet, not a typo)."""
    import difflib  # only when a file's hosts look wrong

    digitless = re.sub(r"[0-9]+", "#", name)
    close = [o for o in difflib.get_close_matches(name, others, n=3, cutoff=0.75)
             if re.sub(r"[0-9]+", "#", o) != digitless]
    return close[0] if close else None


def unmatched(config: Config) -> list[tuple[str, str]]:
    """(where, message) for each job whose `hosts` match none of the hosts named
    literally elsewhere in the file and look like a typo: a name close to one named
    elsewhere, or only globs. validate warns; it does not refuse. Quiet for a name no
    other is close to (a machine only that job names), for exclusions only (every host
    but those) and when the file names no other host."""
    named: dict[str, set[str]] = {}  # host -> the jobs that name it
    for job in config.jobs:
        for p in job.hosts or ():
            bare = p.lstrip("!")
            if _literal(bare):
                named.setdefault(bare.lower(), set()).add(job.name)
    out = []
    for job in config.jobs:
        if job.hosts is not None and any(p.startswith("!") and set(p[1:]) == {"*"}
                                         for p in job.hosts):
            listed = ", ".join(f'"{p}"' for p in job.hosts)
            out.append((f"jobs.{job.name}.hosts",
                        f"[{listed}] excludes every host: the job runs nowhere (leave it "
                        "out of `hosts`, or say so with enabled = false)"))
            continue
        if job.hosts is None or all(p.startswith("!") for p in job.hosts):
            continue
        include = [p.lower() for p in job.hosts if not p.startswith("!")]
        # A name another job names too, and not excluded here: found in one look-up each
        # (only globs, and the jobs that may warn, look at every named host).
        if any(_literal(p) and named[p] - {job.name} and matches(job.hosts, p)
               for p in include):
            continue
        others = sorted(h for h, by in named.items() if by - {job.name})
        if not others or any(matches(job.hosts, h) for h in others):
            continue
        listed = ", ".join(f'"{p}"' for p in job.hosts)
        slips = [(p, t) for p in include if _literal(p) and (t := _typo_of(p, others))]
        if slips:
            p, t = slips[0]
            out.append((f"jobs.{job.name}.hosts",
                        f"[{listed}] matches no host named elsewhere in this file; "
                        f"did you mean {t!r} (named by {', '.join(sorted(named[t]))}) "
                        f"for {p!r}?"))
        elif not any(_literal(p) for p in include):
            out.append((f"jobs.{job.name}.hosts",
                        f"[{listed}] matches none of the hosts named elsewhere in this file "
                        f"({', '.join(others)}): check the pattern"))
    return out
