"""Small builders shared by the tests."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

import pytest

from schedgen import quick


def build_file_tree(root: Path, tree: dict[str, str | bytes | dict]) -> None:
    """Create files and folders from a dict: {"a.txt": "x", "sub": {"b": b"y"}}."""
    for name, value in tree.items():
        p = root / name
        if isinstance(value, dict):
            p.mkdir(parents=True, exist_ok=True)
            build_file_tree(p, value)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, bytes):
                p.write_bytes(value)
            else:
                p.write_text(value)


# Cleared for every test: a real one would point schedgen at the user's own files.
CLEARED_VARS = ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "SCHEDGEN_CONFIG",
                "SCHEDGEN_SMOKE", "NO_COLOR", "SCHEDGEN_HOST")


def isolate_home(mp: pytest.MonkeyPatch, root: Path) -> Path:
    """A fresh HOME under ``root``, with XDG and schedgen variables cleared."""
    h = root / "home"
    h.mkdir()
    mp.setenv("HOME", str(h))
    # the apply lock is per user (outside HOME): each test's fake crontab gets its own
    mp.setenv("SCHEDGEN_TEST_APPLY_LOCK", str(root / "apply-lock" / "apply.lock"))
    for var in CLEARED_VARS:
        mp.delenv(var, raising=False)
    # system-scope folders (/etc/cron.d, /var/log/schedgen, ...) under the test's own root:
    # a test run as root never writes the machine's
    mp.setenv("SCHEDGEN_SYSTEM_ROOT", str(root / "sysroot"))
    return h


def write_executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def write_config(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Result(NamedTuple):
    """What a run of the CLI gave, named like subprocess.CompletedProcess."""

    returncode: int
    stdout: str
    stderr: str


def schedgen(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             input: str | None = None) -> Result:
    """Run the CLI in this process, as `schedgen ARGS...` would run (exit code, stdout,
    stderr), with ``env`` added to the environment and ``cwd`` as the working directory.

    `run` (the wrapper writes to the real stdout) and stdin input go to a subprocess.
    """
    if (args and args[0] == "run") or input is not None:
        return schedgen_process(*args, cwd=cwd, env=env, input=input)
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["schedgen", *args]
        with redirect_stdout(out), redirect_stderr(err):
            try:
                quick.main()  # the entry point: apply, diff, status without typer
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
    return Result(code, out.getvalue(), err.getvalue())


def schedgen_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                     input: str | None = None, timeout: float = 120) -> Result:
    """Run the CLI in a fresh interpreter, as a user would: keeps the exit codes honest."""
    full_env = {**os.environ, **(env or {})}
    p = subprocess.run([sys.executable, "-m", "schedgen", *args], cwd=cwd, env=full_env,
                       input=input, capture_output=True, text=True, timeout=timeout)
    return Result(p.returncode, p.stdout, p.stderr)
