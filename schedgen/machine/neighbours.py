"""Other namespaces on this machine: which of them installed a given file.

Two namespaces (two jobs.toml files) that both have a job `backup` with the default
wrapper_dir would share `wrappers/backup.sh`, and the second apply would make the
first namespace's cron line run the other command. A file's owner is read from the
header schedgen writes into it (`(namespace NS)`), and, for files whose header says
nothing, from the other namespaces' ownership records in the same state dir.
"""

from __future__ import annotations

import re

from schedgen import paths
from schedgen.errors import SchedgenError
from schedgen.machine import ownership as state

# The header line of a wrapper or plist: "... from CONFIG (namespace NS)". The last match
# on the line counts: a config path may itself contain "(namespace x)".
_HEADER = re.compile(r"\(namespace ([A-Za-z0-9_ -]+)\)")


def header_namespace(text: str | None) -> str | None:
    """The namespace a schedgen file says it belongs to, or None."""
    if not text:
        return None
    for line in text[:2000].split("\n")[:6]:
        found = _HEADER.findall(line)
        if found:
            # plist comments spell "--" as "- -" (XML forbids "--" there); namespaces
            # hold no spaces, so the spelling undoes exactly
            return re.sub(r"- (?=-)", "-", found[-1]).strip()
    return None


def recorded_elsewhere(namespace: str) -> dict[str, str]:
    """Artifact key -> the other namespace whose record lists it (same state dir)."""
    out: dict[str, str] = {}
    for record in other_records(namespace):
        for k in record.entries:
            out.setdefault(k, record.namespace)
    return out


def other_records(namespace: str) -> list[state.Record]:
    """The other namespaces' ownership records in the same state dir, by name."""
    folder = paths.state_dir() / "installed"
    try:
        names = sorted(p.stem for p in folder.glob("*.json"))
    except OSError:
        return []
    out = []
    for ns in names:
        if ns == namespace:
            continue
        try:
            out.append(state.load(ns))
        except SchedgenError:
            continue  # an unreadable record is its own command's problem
    return out
