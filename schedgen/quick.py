"""The entry point: `apply`, `diff` and `status` run without typer when their arguments
are plain; everything else goes to the typer app (schedgen/cli.py).

Importing typer (and the click it carries) was about a third of an `apply` or `diff` in
sync, the commands a cron job, a git hook or a CI step runs most. Their options are few:
here they are read when every argument is one this table knows, written as click reads
it (`--opt VALUE`, `--opt=VALUE`, `-c VALUE`, a flag, `--target` repeated). Anything
else (help, an option given twice, a value that starts with '-', a word left over, shell
completion) goes to the typer app, which also gives every usage error. The commands'
bodies are in verbs.py, which the typer commands call too: both paths run the same code;
tests/test_cli_quick.py holds this table to the typer commands' options and the two
paths' output to each other.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from typing import Any

from schedgen import error_handler
from schedgen.errors import EXIT_OK
from schedgen.verbs import COMMANDS

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
    """As click.echo: styles stripped unless the stream is a terminal. A terminal sees
    each line at once; a pipe or file gets them in blocks (a flush a line was 2 ms of a
    200-job apply), stdout flushed before any word on stderr, so that the two keep their
    order where they meet (2>&1)."""
    stream = sys.stderr if err else sys.stdout
    out = text + "\n" if nl else text
    tty = stream.isatty()
    if not tty:
        out = _ANSI.sub("", out)
    if err:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass  # a reader gone: the word on stderr still goes out
    stream.write(out)
    if tty or err:
        stream.flush()


def main() -> None:
    """apply, diff or status here, anything else through typer; exits (SystemExit)."""
    status = quick(sys.argv[1:])
    if status is None:
        from schedgen import cli

        cli.main()
        return
    sys.exit(status)


def entry() -> None:
    """The program's entry point (the console script, `python -m schedgen`): as main(),
    but a command run here leaves without tearing the interpreter down. Freeing every
    object and module one by one, which no one waits for, took 8-10 ms of an apply or
    diff at 200 jobs. Output is flushed first; nothing else is pending then: files are
    written whole and closed, programs waited for, and these commands start no thread
    and register nothing to run at exit."""
    status = quick(sys.argv[1:])
    if status is None:
        from schedgen import cli

        cli.main()
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120  # as Python's exit does when stdout cannot be flushed
    os._exit(status)


def quick(argv: list[str]) -> int | None:
    """Run apply, diff or status; their exit status, or None: the typer app reads argv."""
    parsed = None if _completing() or not _utf8(sys.stdout) else parse(argv)
    if parsed is None:
        return None
    command, params = parsed
    code = [EXIT_OK]
    collecting = gc.isenabled()
    # No cyclic garbage collection while the command runs: it makes few cycles (the same
    # peak memory at 2,000 jobs), and collections that walk every job, artifact and
    # change took a third of the CPU of a 2,000-job first install.
    gc.disable()

    def run() -> None:
        try:
            code[0] = COMMANDS[command](echo, **params)
            sys.stdout.flush()  # here, where a reader gone away is caught
        except BrokenPipeError:
            # The reader went away (`| head`): as click does, exit 1 without a word, and
            # no second error when Python flushes stdout at exit.
            code[0] = 1
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    try:
        return error_handler.run(run, lambda line: echo(line, err=True)) or code[0]
    finally:
        if collecting:
            gc.enable()  # the same process may go on (the test suite runs commands in it)


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
