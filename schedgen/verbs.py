"""The bodies of apply, diff and status (and reconcile), each returning its exit
status: run by the typer commands (cli.py) and, without typer, by the entry point
(quick.py), so both paths run the same code."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from schedgen.config.discover import config_path
from schedgen.errors import EXIT_CHANGES, EXIT_OK, EXIT_UNKNOWN, UsageError

Echo = Callable[..., None]  # echo(text, nl=True, err=False), as typer.echo


def targets(values: list[str] | None) -> tuple[str, ...] | None:
    from schedgen.targets import registry

    if not values:
        return None
    for v in values:
        if v not in registry.names():
            raise UsageError(f"--target {v!r}: expected one of {', '.join(registry.names())}")
    return tuple(dict.fromkeys(values))


def diff(echo: Echo, config: str | None = None, target: list[str] | None = None,
         prune: bool = False, force: bool = False, as_json: bool = False, stat: bool = False,
         full: bool = False, host: str | None = None) -> int:
    from schedgen.commands.diff import review_diff
    from schedgen.output import plan as report
    from schedgen.output import review

    r = review_diff(config_path(config), targets(target), prune=prune, force=force, host=host)
    if as_json:
        echo(json.dumps(review.as_json(r, stat), indent=2))
    else:
        echo(review.text(r, report.use_color(sys.stdout), stat, full), nl=False)
    return EXIT_OK if r.in_sync else EXIT_CHANGES


def apply(echo: Echo, config: str | None = None, target: list[str] | None = None,
          dry_run: bool = False, prune: bool = False, force: bool = False,
          as_json: bool = False) -> int:
    from schedgen.commands import apply

    say = Steady(echo)
    out = apply.apply(config_path(config), targets(target), dry_run=dry_run, prune=prune,
                      force=force, say=quiet if as_json else say)
    say.done()
    if as_json:
        echo(json.dumps(outcome_json(out), indent=2))
    elif dry_run:
        echo(f"dry run, nothing changed: namespace {out.plan.namespace}: "
             f"{out.plan.summary()}")
    else:
        echo(f"done: namespace {out.plan.namespace}: {out.plan.summary(done=True)}")
    return EXIT_OK


def status(echo: Echo, config: str | None = None, target: list[str] | None = None,
           as_json: bool = False, check: bool = False, host: str | None = None) -> int:
    from schedgen.commands.status import status
    from schedgen.config.select import is_elsewhere
    from schedgen.output import status as out

    if check and is_elsewhere(host):
        raise UsageError(f"--check with --host {host}: drift is read on the machine itself; "
                         f"run `schedgen status --check` on {host}")
    st = status(config_path(config), targets(target), host=host)
    echo(json.dumps(out.as_json(st), indent=2) if as_json else out.as_text(st))
    return EXIT_CHANGES if check and st.drifted else EXIT_UNKNOWN if st.unknown else EXIT_OK


COMMANDS: dict[str, Callable[..., int]] = {"apply": apply, "diff": diff, "status": status,
                                           "reconcile": status}


class Steady:
    """The steps' lines as they are done. A reader that goes away (`apply | head`) stops
    the lines, not the apply: cut short between two steps, it would leave new job files
    on the old schedule. `done` then ends the command as the lost reader would have
    (BrokenPipeError: exit 1, no word)."""

    def __init__(self, echo: Echo) -> None:
        self.echo = echo
        self.gone = False

    def __call__(self, line: str) -> None:
        if self.gone:
            return
        try:
            self.echo(line)
        except BrokenPipeError:
            self.gone = True
            try:  # what is still buffered, and any later word, go nowhere
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, sys.stdout.fileno())
                os.close(null)
            except (OSError, ValueError):
                pass

    def done(self) -> None:
        if self.gone:
            raise BrokenPipeError(32, "the reader of the output went away")


def quiet(_line: str) -> None:
    """--json: the steps go into the JSON, not onto the screen one by one."""


def outcome_json(out: Any) -> dict[str, Any]:
    """apply/uninstall --json: what was (or would be) done, and the plan behind it."""
    from schedgen.output.plan import change_json
    from schedgen.plan import changes as p

    plan = out.plan
    return {"namespace": plan.namespace, "dry_run": out.dry_run, "done": list(out.done),
            "summary": {a: plan.count(a) for a in p.ACTIONS if a != p.FORGET},
            "changes": [change_json(c, with_diff=False) for c in plan.changes
                        if c.action != p.FORGET],
            "warnings": list(plan.warnings)}
