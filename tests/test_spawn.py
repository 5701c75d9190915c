"""The program runner (schedgen/machine/spawn.py) against real programs: posix_spawn and the
subprocess fallback (where posix_spawn is missing) give the same answers."""

from __future__ import annotations

import os
import sys

import pytest

from schedgen.machine import spawn


@pytest.fixture(params=["posix_spawn", "subprocess"])
def run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    if request.param == "subprocess":
        monkeypatch.delattr(os, "posix_spawn")

    def go(*argv: str, input: bytes | None = None, timeout: float = 60,
           new_session: bool = False) -> spawn.Finished:
        path = argv[0] if argv[0].startswith("/") else f"/bin/{argv[0]}"
        return spawn.run(path, [path, *argv[1:]], input, timeout, new_session)
    return go


def test_big_input_and_both_outputs_at_once_never_stall(run) -> None:  # type: ignore[no-untyped-def]
    data = bytes(range(256)) * 2048  # 512 kB, more than any pipe holds
    script = "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d); " \
             "sys.stderr.buffer.write(d[::-1]); sys.exit(7)"
    done = run(sys.executable, "-c", script, input=data)
    assert (done.returncode, done.stdout, done.stderr) == (7, data, data[::-1])


def test_a_program_that_stops_reading_its_input_still_gives_its_answer(run) -> None:  # type: ignore[no-untyped-def]
    done = run("sh", "-c", "head -c 3; echo; exit 4", input=b"x" * 1_000_000)
    assert (done.returncode, done.stdout) == (4, b"xxx\n")


def test_sigpipe_is_the_programs_default_again(run) -> None:  # type: ignore[no-untyped-def]
    # With SIGPIPE ignored (Python's own setting), `yes` would end with a write error.
    done = run("sh", "-c", "yes | head -n 1")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"y\n", b"")


def test_no_descriptor_of_schedgens_reaches_the_program(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with open(tmp_path / "held", "w") as held:
        os.set_inheritable(held.fileno(), True)  # as one schedgen's own parent gave it
        done = run(sys.executable, "-c", "import os; print(*os.listdir('/proc/self/fd'))")
    # stdin, stdout, stderr and the listing's own: none of the test's nor its parents'
    assert set(done.stdout.split()) <= {b"0", b"1", b"2", b"3"}, done


def test_a_session_of_its_own_on_request(run) -> None:  # type: ignore[no-untyped-def]
    ask = "import os; print(os.getsid(0) == os.getpid())"
    assert run(sys.executable, "-c", ask, new_session=True).stdout == b"True\n"
    assert run(sys.executable, "-c", ask).stdout == b"False\n"


def test_a_program_that_closes_its_output_is_waited_for(run) -> None:  # type: ignore[no-untyped-def]
    done = run("sh", "-c", "exec >&- 2>&-; sleep 0.3; exit 5")
    assert done.returncode == 5


def test_a_program_killed_by_a_signal_says_which(run) -> None:  # type: ignore[no-untyped-def]
    assert run("sh", "-c", "kill -TERM $$").returncode == -15


def test_one_that_does_not_finish_in_time_is_killed_and_reaped(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    pidfile = tmp_path / "pid"
    with pytest.raises(spawn.Timeout):
        run("sh", "-c", f"echo $$ > {pidfile}; exec sleep 30", timeout=0.5)
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, and no zombie left: nothing by that pid


def test_one_that_keeps_its_output_open_past_the_time_is_killed(run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(spawn.Timeout):
        run("sh", "-c", "exec >&- 2>&-; exec sleep 30", timeout=0.5)


def test_a_missing_program_is_an_oserror(run) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FileNotFoundError):
        run("/nonexistent/program")


_INTERRUPTED = """
import os, signal, sys
from schedgen.machine import spawn
if sys.argv[1] == "subprocess":
    del os.posix_spawn
def interrupt(*_):
    raise KeyboardInterrupt  # a ^C that reached schedgen alone (kill -INT PID)
signal.signal(signal.SIGALRM, interrupt)
signal.setitimer(signal.ITIMER_REAL, 0.3)
try:
    spawn.run("/bin/sh", ["sh", "-c", "echo $$ > " + sys.argv[2] + "; exec sleep 600"], None, 1)
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("how", ["posix_spawn", "subprocess"])
def test_an_interrupt_never_waits_past_the_programs_time(how: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Interrupted while the program runs, the run waits for it no longer than its time
    (a change it makes is not cut short); it was waited for without end, so a program
    that never ends held schedgen past the time it would have had without the ^C."""
    import subprocess

    pidfile = tmp_path / "pid"
    try:
        done = subprocess.run([sys.executable, "-c", _INTERRUPTED, how, str(pidfile)],
                              capture_output=True, text=True, timeout=30)
    finally:
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), 9)
            except ProcessLookupError:
                pass
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr


_ODD_ENVIRONMENT = """
import os, sys
from schedgen.machine import spawn
done = spawn.run("/bin/sh", ["sh", "-c", "echo ran; exit 3"], b"", 10)
quiet = spawn.start_quiet("/bin/true", ["true"])  # None: not started, the flush comes later
print(done.returncode, done.stdout.decode().strip(), quiet is None or spawn.status(quiet) == 0)
"""


def test_an_environment_entry_of_no_name_does_not_stop_a_program_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An entry "=x" (no name; exec takes it, os.posix_spawn refuses it with a ValueError,
    which was a bug report for every crontab call) is run as subprocess runs it."""
    import subprocess

    done = subprocess.run(["/usr/bin/env", "=x", sys.executable, "-c", _ODD_ENVIRONMENT],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "3 ran True\n"), done.stderr


_REAPED_BY_THE_KERNEL = """
import os, sys
from schedgen.machine import spawn
if sys.argv[1] == "subprocess":
    del os.posix_spawn
done = spawn.run("/bin/sh", ["sh", "-c", "echo ran; exit 3"], None, 10)
print(done.returncode, done.stdout.decode().strip())
"""


@pytest.mark.parametrize("how", ["posix_spawn", "subprocess"])
def test_sigchld_ignored_by_a_parent_still_gives_the_programs_status(how: str) -> None:
    """A parent that ignores SIGCHLD passes that on through exec: the kernel then reaps
    the programs at once. Their status is read all the same (waitpid failed, and every
    program run was an error; subprocess said 0, whatever the program said)."""
    import signal
    import subprocess

    done = subprocess.run([sys.executable, "-c", _REAPED_BY_THE_KERNEL, how],
                          capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
    assert (done.returncode, done.stdout) == (0, "3 ran\n"), done.stderr
