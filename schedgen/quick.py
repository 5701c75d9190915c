"""The entry point: `apply`, `diff` and `status` run without typer when their arguments
are plain; everything else goes to the typer app (schedgen/cli.py).

Importing typer (and the click it carries) was about a third of an `apply` or `diff` in
sync, the commands a cron job, a git hook or a CI step runs most. Their options are few:
here they are read when every argument is one this table knows, written as click reads
it (`--opt VALUE`, `--opt=VALUE`, `-c VALUE`, a flag, `--target` repeated). Anything
else (help, an option given twice, a value that starts with '-', a word left over, shell
completion) goes to the typer app, which also gives every usage error. The commands'
bodies live here and the typer commands call them, so both paths run the same code;
tests/test_cli_quick.py holds this table to the typer commands' options and the two
paths' output to each other.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from schedgen import error_handler
from schedgen.config.discover import config_path
from schedgen.errors import EXIT_CHANGES, EXIT_OK, EXIT_UNKNOWN, UsageError

Echo = Callable[..., None]  # echo(text, nl=True, err=False), as typer.echo

# Per command: option name -> (parameter, takes a value, repeatable).
_COMMON = {"-c": ("config", True, False), "--config": ("config", True, False),
           "-t": ("target", True, True), "--target": ("target", True, True),
           "--json": ("as_json", False, False)}
OPTIONS: dict[str, dict[str, tuple[str, bool, bool]]] = {
    "apply": {**_COMMON, "--dry-run": ("dry_run", False, False), "-n": ("dry_run", False, False),
              "--prune": ("prune", False, False), "--force": ("force", False, False)},
    "diff": {**_COMMON, "--prune": ("prune", False, False), "--force": ("force", False, False),
             "--stat": ("stat", False, False), "--full": ("full", False, False),
             "-v": ("full", False, False), "--host": ("host", True, False)},
    "status": {**_COMMON, "--check": ("check", False, False), "--host": ("host", True, False)},
}
OPTIONS["reconcile"] = OPTIONS["status"]


def parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """(command, its parameters), or None: the typer app reads these arguments."""
    if not argv or argv[0] not in OPTIONS:
        return None
    table = OPTIONS[argv[0]]
    params: dict[str, Any] = {}
    rest = argv[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        name, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        spec = table.get(name)
        if spec is None:
            return None
        param, takes_value, repeatable = spec
        if param in params and not repeatable:
            return None
        if not takes_value:
            if eq:
                return None
            params[param] = True
            i += 1
            continue
        if not eq:
            if i + 1 >= len(rest):
                return None
            value = rest[i + 1]
            i += 1
        if not value or value.startswith("-"):
            return None
        if repeatable:
            params.setdefault(param, []).append(value)
        else:
            params[param] = value
        i += 1
    return argv[0], params


_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")


def echo(text: str = "", nl: bool = True, err: bool = False) -> None:
    """As click.echo: styles stripped unless the stream is a terminal, flushed."""
    stream = sys.stderr if err else sys.stdout
    out = text + "\n" if nl else text
    if not stream.isatty():
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def main() -> None:
    argv = sys.argv[1:]
    parsed = None if _completing() or not _utf8(sys.stdout) else parse(argv)
    if parsed is None:
        from schedgen import cli

        cli.main()
        return
    command, params = parsed
    code = [EXIT_OK]

    def run() -> None:
        try:
            code[0] = COMMANDS[command](echo, **params)
        except BrokenPipeError:
            # The reader went away (`| head`): as click does, exit 1 without a word, and
            # no second error when Python flushes stdout at exit.
            code[0] = 1
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    sys.exit(error_handler.run(run, lambda line: echo(line, err=True)) or code[0])


def _completing() -> bool:
    """Shell completion asks through _<PROG>_COMPLETE: the typer app answers it."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _utf8(stream: Any) -> bool:
    """click rewraps a stream of another encoding (say, ASCII); such a stream goes to it.
    A text stream of no encoding (a StringIO) takes any text."""
    import codecs

    encoding = getattr(stream, "encoding", None)
    try:
        return encoding is None or codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


# --- the commands' bodies: each returns its exit status

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
    return EXIT_OK if r.plan.in_sync else EXIT_CHANGES


def apply(echo: Echo, config: str | None = None, target: list[str] | None = None,
          dry_run: bool = False, prune: bool = False, force: bool = False,
          as_json: bool = False) -> int:
    from schedgen.commands import apply

    out = apply.apply(config_path(config), targets(target), dry_run=dry_run, prune=prune,
                      force=force, say=quiet if as_json else echo)
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
