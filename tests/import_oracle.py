"""What an imported job really runs, read from its rendered job file, against what cron ran.

`job_argv` renders the job's wrapper and runs its command function with bash, `exec`
replaced by a function that prints its arguments: the argv the job file would exec,
placeholders and quoting included, without running anything. `same_as_cron` says
whether that argv does what cron's ``$SHELL -c COMMAND`` did.
"""

from __future__ import annotations

import re
import subprocess

from schedgen.config.model import Config, Job
from schedgen.render.artifacts import wrapper

_FUNCTION = re.compile(r"^sg_command\(\) \{\n.*?^\}\n", re.DOTALL | re.MULTILINE)
_BASH = {"/bin/bash", "/usr/bin/bash"}
# Characters sh gives a meaning to; a command free of them is split on blanks only.
_SH_SPECIAL = re.compile(r"[$`\\\"'*?\[\]{}#&|;<>()!]")


# The function runs under a DEBUG trap (extdebug: a trap that fails skips the command, in
# functions and command substitutions too) that lets through only the hand-over of the
# argv to `exec` (or to `${sg_exec-}`, as the job file may write it) and refuses, without
# running it, anything else the job file might do.
_SANDBOX = r"""shopt -s extdebug
sg_print() { printf '%s\0' "$@"; }
exec() { sg_print "$@"; }
sg_exec=sg_print
sg_smoke=
trap 'case $BASH_COMMAND in "exec "*|"sg_print "*|"printf "*|"\${sg_exec-} "*|sg_command|"[ \"\$sg_smoke\" != 1 ]") ;; *) printf "refused: %s\n" "$BASH_COMMAND" >&2; false ;; esac' DEBUG
"""


def job_argv(job: Job, config: Config) -> list[str]:
    found = _FUNCTION.search(wrapper(job, config))
    assert found, "no sg_command function in the job file"
    return function_argv(found.group(0), job.name)


def function_argv(function: str, job: str) -> list[str]:
    """The argv a job file's ``sg_command() { ... }`` hands over, run in the sandbox."""
    out = subprocess.run(["bash", "-c", _SANDBOX + function + "sg_command\n"],
                         capture_output=True, env={"PATH": "/usr/bin:/bin", "SCHEDGEN_JOB": job})
    assert out.returncode == 0 and not out.stderr, (out.stderr.decode(), function)
    return out.stdout.decode().split("\0")[:-1]


def same_as_cron(shell: str, command: str, argv: list[str], home: str) -> bool:
    """Does ``argv`` (what the job file execs) do what ``shell -c command`` did under cron?

    ``home``: cron's HOME for the line. A script that starts with ~/ may arrive with it
    expanded (schedgen expands a leading ~/ in every argument): the shell would have
    expanded it to the same HOME.
    """
    scripts = {command, home + command[1:]} if command.startswith("~/") else {command}
    if len(argv) == 3 and argv[:2] == [shell, "-c"] and argv[2] in scripts:
        return True
    if len(argv) == 4 and argv[:2] == ["bash", "-c"] and argv[2] in scripts and shell in _BASH:
        return True  # schedgen's own `bash -c CMD JOB`: $0 is the job name
    words = command.split()
    if not words or _SH_SPECIAL.search(command) or "=" in words[0]:
        return False
    # Plain words: the shell would only split them (and expand a leading ~/).
    expanded = [home + w[1:] if w == "~" or w.startswith("~/") else w for w in words]
    return argv == expanded
