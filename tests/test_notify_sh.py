"""templates/notify.sh, sourced directly: heartbeat pings and the notify command of a run.

Each test writes a small bash script that sources the file, sets the settings the job
file would set, and calls the entry points the way the runtime does; pings go to a real
HTTP server on 127.0.0.1 through the real curl.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.pinghub import PingHub
from tests.test_wrapper_portability import portability_problems
from tests.wrapper_kit import BASH, kill_group, wait_for

NOTIFY_SH = Path(__file__).resolve().parent.parent / "templates" / "notify.sh"
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")

# What the job file would hold: the command as a function that records its call.
RECORDING_CMD = r"""
sg_notify_cmd() {
  {
    printf 'event=%s exit=%s outcome=%s job=%s run=%s item=%s stderr=%s\n' \
      "$SCHEDGEN_EVENT" "$SCHEDGEN_EXIT_CODE" "$SCHEDGEN_OUTCOME" "$SCHEDGEN_JOB" \
      "$SCHEDGEN_RUN_ID" "$SCHEDGEN_ITEM" "$SCHEDGEN_STDERR_LOG"
    sed 's/^/stdin: /'
    printf 'end\n'
  } >>"$CALLS"
}
"""


class Job:
    """A job's log dir and one run dir per call, as the runtime lays them out."""

    def __init__(self, root: Path):
        self.root = root
        self.log_dir = root / "logs" / "job"
        self.calls = root / "calls.txt"
        self.n = 0

    def run(self, status: int, outcome: str, *, settings: str = "", stderr: str = "",
            body: str | None = None, path: str | None = None,
            timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], Path]:
        self.n += 1
        run_id = f"20260101T000{self.n:03d}Z-42"
        run_dir = self.log_dir / "runs" / run_id
        run_dir.mkdir(parents=True)
        (run_dir / "stderr.log").write_text(stderr)
        calls = body if body is not None else (
            'sg_notify_start "$RUN_DIR"\n'
            f'sg_notify_finish {status} {outcome} "$LOG_DIR" "$RUN_DIR"\n')
        script = self.root / f"run{self.n}.sh"
        script.write_text(f"set -u\n. {NOTIFY_SH}\n{settings}\n{calls}\nexit {status}\n")
        env = {**os.environ, "CALLS": str(self.calls), "RUN_DIR": str(run_dir),
               "LOG_DIR": str(self.log_dir), "SCHEDGEN_JOB": "job", "SCHEDGEN_RUN_ID": run_id,
               "SCHEDGEN_ARTIFACT_DIR": str(run_dir), "SCHEDGEN_ITEM": "a.json"}
        if path is not None:
            env["PATH"] = path
        r = subprocess.run([BASH, str(script)], env=env, capture_output=True, text=True,
                           timeout=timeout, start_new_session=True)
        return r, run_dir

    def calls_text(self) -> str:
        return self.calls.read_text() if self.calls.exists() else ""


def notify_log(run_dir: Path) -> str:
    p = run_dir / "notify.log"
    return p.read_text() if p.exists() else ""


def wait_log(run_dir: Path, text: str) -> str:
    wait_for(lambda: text in notify_log(run_dir), what=f"{text!r} in notify.log")
    return notify_log(run_dir)


@needs_curl
def test_a_successful_run_pings_start_then_success_in_that_order(
        tmp_path: Path, pinghub: PingHub) -> None:
    # The start ping is answered slowly: the success ping must still arrive after it.
    pinghub.delay["/start"] = 0.5
    job = Job(tmp_path)
    r, run_dir = job.run(0, "ok", settings=f"sg_ping_url={pinghub.url}/abc-123")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert pinghub.wait_for(2) == ["/abc-123/start", "/abc-123"]
    log = wait_log(run_dir, "ping success: sent")
    assert "ping start: sent (HTTP 200)" in log
    assert "abc-123" not in log and "127.0.0.1" not in log  # the URL is a secret


@needs_curl
def test_a_failed_run_pings_its_exit_code_and_keeps_its_status(
        tmp_path: Path, pinghub: PingHub) -> None:
    job = Job(tmp_path)
    r, run_dir = job.run(3, "failed", settings=f"sg_ping_url={pinghub.url}/u?create=1")
    assert r.returncode == 3
    assert pinghub.wait_for(2) == ["/u/start?create=1", "/u/3?create=1"]
    wait_log(run_dir, "ping 3: sent")


@needs_curl
def test_a_refused_ping_is_recorded_as_refused(tmp_path: Path, pinghub: PingHub) -> None:
    pinghub.status["/start"] = 404
    job = Job(tmp_path)
    _, run_dir = job.run(0, "ok", settings=f"sg_ping_url={pinghub.url}/x")
    assert "ping start: refused (HTTP 404)" in wait_log(run_dir, "ping start:")


def test_a_busy_run_sends_nothing(tmp_path: Path) -> None:
    job = Job(tmp_path)
    settings = 'sg_ping_url=http://127.0.0.1:9/x\nsg_notify_on="failure recovery"\n' + RECORDING_CMD
    r, run_dir = job.run(75, "busy", settings=settings,
                         body='sg_notify_finish 75 busy "$LOG_DIR" "$RUN_DIR"')
    assert r.returncode == 75
    assert notify_log(run_dir) == "" and job.calls_text() == ""


def test_failure_then_recovery_each_reach_the_command_once(tmp_path: Path) -> None:
    job = Job(tmp_path)
    settings = 'sg_notify_on="failure recovery"\n' + RECORDING_CMD
    r, first = job.run(2, "failed", settings=settings, stderr="".join(
        f"line {i}\n" for i in range(1, 31)))
    assert r.returncode == 2
    wait_log(first, "notify failure: command exit 0")
    calls = job.calls_text()
    assert calls.startswith(f"event=failure exit=2 outcome=failed job=job run={first.name} "
                            f"item=a.json stderr={first}/stderr.log\n")
    # The tail of the run's stderr (its last 20 lines) is on the command's stdin.
    assert "stdin: line 10\n" not in calls and "stdin: line 11\n" in calls
    assert calls.endswith("stdin: line 30\nend\n")

    _, second = job.run(124, "timeout", settings=settings)  # still failing: failure again
    wait_log(second, "notify failure: command exit 0")
    _, third = job.run(0, "ok", settings=settings)
    wait_log(third, "notify recovery: command exit 0")
    _, fourth = job.run(0, "ok", settings=settings)  # still fine: nothing to say
    events = [line.split()[0] for line in job.calls_text().splitlines()
              if line.startswith("event=")]
    assert events == ["event=failure", "event=failure", "event=recovery"]
    assert notify_log(fourth) == ""
    assert not (job.log_dir / ".notify-failed").exists()


def test_on_failure_only_says_nothing_on_success_and_keeps_no_state(tmp_path: Path) -> None:
    job = Job(tmp_path)
    settings = 'sg_notify_on="failure"\n' + RECORDING_CMD
    _, first = job.run(0, "ok", settings=settings)
    _, second = job.run(1, "failed", settings=settings)
    wait_log(second, "notify failure: command exit 0")
    _, third = job.run(0, "ok", settings=settings)
    assert [line.split()[0] for line in job.calls_text().splitlines()
            if line.startswith("event=")] == ["event=failure"]
    assert notify_log(first) == "" and notify_log(third) == ""
    assert not (job.log_dir / ".notify-failed").exists()


def test_without_a_command_function_nothing_runs(tmp_path: Path) -> None:
    job = Job(tmp_path)
    r, run_dir = job.run(1, "failed", settings='sg_notify_on="failure"')
    assert r.returncode == 1 and notify_log(run_dir) == ""


def test_a_run_without_a_directory_writes_into_the_log_dir(tmp_path: Path) -> None:
    job = Job(tmp_path)
    settings = 'sg_notify_on="failure"\n' + RECORDING_CMD
    job.log_dir.mkdir(parents=True)
    r, _ = job.run(78, "precondition", settings=settings,
                   body='sg_notify_finish 78 precondition "$LOG_DIR"')
    assert r.returncode == 78
    wait_for(lambda: "command exit 0" in notify_log(job.log_dir), what="notify.log in log dir")
    assert job.calls_text().startswith("event=failure exit=78 outcome=precondition ")


def test_without_curl_it_records_that_it_could_not_ping(tmp_path: Path) -> None:
    # A PATH holding what the script needs, but no curl.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("sleep", "tail", "sed", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (bindir / tool).symlink_to(found)
    job = Job(tmp_path)
    r, run_dir = job.run(0, "ok", settings="sg_ping_url=http://127.0.0.1:9/x", path=str(bindir))
    assert r.returncode == 0 and r.stderr == ""
    assert notify_log(run_dir) == ("ping start: not sent: curl not found on PATH\n"
                                   "ping success: not sent: curl not found on PATH\n")


def test_a_command_past_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    job = Job(tmp_path)
    pidfile = tmp_path / "cmd.pid"
    settings = ('sg_notify_on="failure"\nsg_notify_timeout=1\n'
                f'sg_notify_cmd() {{ sleep 300 & printf "%s\\n" "$!" >{pidfile}; wait; }}')
    r, run_dir = job.run(1, "failed", settings=settings)
    assert r.returncode == 1
    log = wait_log(run_dir, "notify failure: command killed after 1s")
    wait_for(pidfile.exists, what="the command's child")
    child = int(pidfile.read_text())
    wait_for(lambda: not _alive(child), what="the command's child to be killed")
    assert "command killed after 1s" in log


@needs_curl
def test_slow_notify_and_ping_never_hold_the_lock_or_the_exit_status(
        tmp_path: Path, pinghub: PingHub) -> None:
    if shutil.which("flock") is None:
        pytest.skip("flock(1) is not installed here")
    pinghub.delay["/9"] = 5  # within the ping's time limit, set to 15 s below
    lock = tmp_path / "job.lock"
    pgid_file = tmp_path / "pgid"
    settings = (f"sg_ping_url={pinghub.url}/x\nsg_ping_timeout=15\nsg_notify_on=failure\n"
                f"sg_notify_cmd() {{ read -r _ _ _ _ pg _ </proc/self/stat; printf '%s\\n' \"$pg\" >{pgid_file}; "
                "sleep 30; }")
    body = (f"exec 9>>{lock}\nflock -n 9 || exit 99\n"
            'sg_notify_start "$RUN_DIR"\nsg_notify_finish 9 failed "$LOG_DIR" "$RUN_DIR"\n')
    job = Job(tmp_path)
    r, run_dir = job.run(9, "failed", settings=settings, body=body)
    assert r.returncode == 9
    # The script is gone; its forks close the lock's descriptor as their first step, so
    # the lock comes free while the ping (answered after 5 s) and the command still run.
    wait_for(lambda: _lock_free(lock), what="the lock to come free")
    assert "/x/9" not in pinghub.seen()
    # The file exists a moment before its line is in it.
    wait_for(lambda: pgid_file.exists() and pgid_file.read_text().endswith("\n"),
             what="the notify command to start")
    # The command runs in a process group of its own (launchd kills the job's group).
    pgid = int(pgid_file.read_text())
    try:
        assert pgid != os.getpgid(0)
        assert pinghub.wait_for(2) == ["/x/start", "/x/9"]
        wait_log(run_dir, "ping 9: sent")
    finally:
        kill_group(pgid, signal.SIGTERM)  # the 30 s command and its watchdog


def test_notify_sh_is_shellcheck_clean_and_bash_3_2_portable() -> None:
    text = NOTIFY_SH.read_text()
    assert portability_problems(text) == []
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed here")
    r = subprocess.run(["shellcheck", "-s", "bash", str(NOTIFY_SH)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _lock_free(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_run_with_nothing_to_send_reads_only_the_entry_points(tmp_path: Path) -> None:
    job = Job(tmp_path)
    body = ('sg_notify_start "$RUN_DIR"\nsg_notify_finish 0 ok "$LOG_DIR" "$RUN_DIR"\n'
            'declare -F sg_notify_run >/dev/null && echo loaded || echo lean\n'
            # A failure then loads the rest, from wherever the run has gone since.
            'cd /\nsg_notify_finish 1 failed "$LOG_DIR" "$RUN_DIR"\n'
            'declare -F sg_notify_run >/dev/null && echo loaded || echo lean\n')
    script_dir = tmp_path / "rel"
    script_dir.mkdir()
    shutil.copy(NOTIFY_SH, script_dir / "notify.sh")
    run_dir = job.log_dir / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "stderr.log").write_text("boom\n")
    script = script_dir / "run.sh"
    script.write_text('set -u\n. ./notify.sh\nsg_notify_on=failure\n' + RECORDING_CMD + body)
    env = {**os.environ, "CALLS": str(job.calls), "RUN_DIR": str(run_dir),
           "LOG_DIR": str(job.log_dir), "SCHEDGEN_JOB": "job", "SCHEDGEN_RUN_ID": "r1",
           "SCHEDGEN_ARTIFACT_DIR": str(run_dir), "SCHEDGEN_ITEM": ""}
    r = subprocess.run([BASH, "run.sh"], cwd=script_dir, env=env, capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "lean\nloaded\n", "")
    wait_log(run_dir, "notify failure: command exit 0")
    assert "stdin: boom" in job.calls_text()


def test_inlined_with_sg_notify_full_everything_is_read_at_once(tmp_path: Path) -> None:
    r = subprocess.run([BASH, "-c", f'set -u; sg_notify_full=1; eval "$(cat {NOTIFY_SH})"; '
                        'declare -F sg_notify_run sg_notify_ping sg_notify_finish'],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == [
        "sg_notify_run", "sg_notify_ping", "sg_notify_finish"]
