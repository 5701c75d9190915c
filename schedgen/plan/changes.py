"""The change records: what apply will do with each artifact, and the plan they make up.

`diff`, `apply --dry-run`, `apply`, `status` and `uninstall` all start from one plan
(schedgen.plan.build), so they agree by construction about what would change.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from schedgen.sha import sha256

# What apply will do with an artifact.
CREATE, UPDATE, DELETE, UNCHANGED = "create", "update", "delete", "unchanged"
# What apply will not do, and says why.
ORPHAN = "orphan"  # owned, its job is gone from jobs.toml; apply --prune removes it
KEPT = "kept"  # owned but hand-edited, no longer wanted; --force removes it
CONFLICT = "conflict"  # a file schedgen did not write sits where it wants to write
FORGET = "forget"  # recorded but already gone from the disk: only the record changes
DISOWN = "disown"  # recorded, but the file lost schedgen's marker: it is the user's now

ACTIONS = (CREATE, UPDATE, DELETE, UNCHANGED, ORPHAN, KEPT, CONFLICT, FORGET, DISOWN)


@lru_cache(maxsize=4096)
def digest(text: str) -> str:
    """Kept per text: a file proven in sync is hashed by its plan and again by its apply
    (the lookup costs nothing: a str keeps its hash, and it is the same object)."""
    return sha256(text.encode("utf-8", "surrogateescape")).hexdigest()



def table_lines(text: str) -> list[str]:
    """The lines, each with its newline. Only "\n" ends a line for cron: a form feed
    or U+2028 inside a user's line is part of it (str.splitlines would split there)."""
    out = text.split("\n")
    last = out.pop()
    return [line + "\n" for line in out] + ([last] if last else [])


class Change(NamedTuple):
    target: str  # the target that carries it out (its registry name), or "wrappers"
    kind: str  # "runtime" | "wrapper", or one of its target's kinds
    key: str  # its key in the ownership record
    action: str
    path: Path | None  # None: the crontab block
    before: str | None  # installed content (None: absent)
    after: str | None  # desired content (None: not wanted)
    job: str | None = None
    jobs: tuple[str, ...] = ()  # for the crontab block: the jobs it holds
    targets: tuple[str, ...] = ()  # the targets this artifact serves
    mode: int = 0o644
    note: str = ""  # why, in words, when the action alone does not say it
    edited: bool = False  # owned, but the disk no longer matches what schedgen wrote
    reload: bool = False  # the scheduler reads it again after the write (or a reload is due)
    deferred: str = ""  # non-empty: left alone, and why (the job is running)
    ref: str | None = None  # where it is when it is no file (a cluster's "namespace/name")
    # What its target knows of it, of the target's own type: it alone reads and formats
    # them (Target.change_json, status facts).
    details: Any = None
    # Its scheduler could not be read (program missing or failing, review only): whether
    # it is installed is unknown, so it is no drift either way (Plan.unknown says why).
    unknown: bool = False
    # A digest of what `after` is made from (render/source.py), recorded with it.
    source: str | None = None

    @property
    def where(self) -> str:
        if self.ref is not None:
            return self.ref
        return str(self.path) if self.path is not None else "crontab block"

    @property
    def pending(self) -> bool:
        """Does this change make the machine differ from the config?"""
        return self.action not in (UNCHANGED, FORGET) or bool(self.deferred)

    def unified_diff(self) -> str:
        import difflib  # only a review that shows a file's diff needs it (start-up time)

        a = table_lines(self.before or "")
        b = table_lines(self.after or "")
        if self.action == DELETE or self.after is None:
            b = []
        lines = difflib.unified_diff(
            a, b, fromfile=f"installed: {self.where}" if self.before is not None else "/dev/null",
            tofile=f"desired: {self.where}" if self.after is not None else "/dev/null")
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


class Plan(NamedTuple):
    namespace: str
    changes: tuple[Change, ...]
    warnings: tuple[str, ...] = ()
    unknown: tuple[tuple[str, str], ...] = ()  # (target, why its state is unknown)

    @property
    def in_sync(self) -> bool:
        return not any(c.pending for c in self.changes)

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    def summary(self, done: bool = False) -> str:
        """`2 to add, 1 to change, 0 to remove, 3 unchanged` (after apply: `2 added, ...`)."""
        def n(action: str) -> int:
            return sum(1 for c in self.changes if c.action == action
                       and not (done and c.deferred))
        if done:
            text = (f"{n(CREATE)} added, {n(UPDATE)} changed, {n(DELETE)} removed, "
                    f"{n(UNCHANGED)} unchanged")
        else:
            text = (f"{n(CREATE)} to add, {n(UPDATE)} to change, {n(DELETE)} to remove, "
                    f"{n(UNCHANGED)} unchanged")
        extra = []
        if n(ORPHAN):
            extra.append(f"{n(ORPHAN)} orphaned (owned but no longer in the config; "
                         "apply --prune removes)")
        if n(KEPT):
            extra.append(f"{n(KEPT)} kept (hand-edited; --force removes)")
        if n(CONFLICT):
            extra.append(f"{n(CONFLICT)} in conflict (not written by schedgen; --force "
                         "overwrites)")
        deferred = len({c.job or c.key for c in self.changes if c.deferred})
        if deferred:
            extra.append(f"{deferred} deferred (running; --force reloads or unloads)")
        return "; ".join([text, *extra])

    def for_job(self, job: str) -> list[Change]:
        return [c for c in self.changes if c.job == job or job in c.jobs]

