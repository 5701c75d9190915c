"""The in-process fakes look like processes to their callers (tests/fakeserve.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fakeserve import client
from tests.helpers import write_executable

ECHO = r'''
import os, sys
print("argv", sys.argv[1:], "cwd", os.getcwd(), "var", os.environ.get("FAKE_VAR"))
if "--stdin" in sys.argv:
    sys.stdout.write(sys.stdin.read().upper())
sys.stderr.write("to stderr\n")
if "--raise" in sys.argv:
    raise ValueError("boom")
sys.exit(int(os.environ.get("FAKE_CODE", "0")))
'''


def test_a_fake_gets_its_callers_argv_env_cwd_stdin_and_gives_its_output_and_status(
        tmp_path: Path) -> None:
    exe = write_executable(tmp_path / "fake", client("echo", ECHO))
    r = subprocess.run([str(exe), "a b", "", "--stdin"], cwd=tmp_path, input="line one\nlast",
                       env={"FAKE_VAR": "x y", "FAKE_CODE": "3"}, capture_output=True, text=True)
    assert r.returncode == 3
    assert r.stdout == f"argv ['a b', '', '--stdin'] cwd {tmp_path} var x y\nLINE ONE\nLAST"
    assert r.stderr == "to stderr\n"


def test_a_fake_that_never_reads_stdin_does_not_wait_for_it(tmp_path: Path) -> None:
    exe = write_executable(tmp_path / "fake", client("echo", ECHO))
    with subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as p:   # stdin left open
        assert p.wait(timeout=20) == 0
        assert p.stdout is not None and p.stdout.read().startswith("argv []")


def test_an_exception_is_a_traceback_and_status_1_as_python_gives(tmp_path: Path) -> None:
    exe = write_executable(tmp_path / "fake", client("echo", ECHO))
    r = subprocess.run([str(exe), "--raise"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "Traceback" in r.stderr and r.stderr.rstrip().endswith("ValueError: boom")


def test_output_to_a_file_comes_after_what_the_caller_wrote_before(tmp_path: Path) -> None:
    # (Not after it: the caller's offset stays where it was, see _Stream.)
    exe = write_executable(tmp_path / "fake", client("echo", ECHO))
    out = tmp_path / "out.txt"
    subprocess.run(["bash", "-c", f'echo first; "{exe}"'], stdout=out.open("w"),
                   stderr=subprocess.DEVNULL, check=True)
    assert out.read_text().startswith("first\nargv []")
