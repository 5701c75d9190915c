"""Smoke runs (SCHEDGEN_SMOKE=1 or `schedgen run JOB --smoke`) and `schedgen run` itself."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from schedgen.commands.run import script_for
from tests.helpers import schedgen, write_executable
from tests.wrapper_kit import (
    fill_inbox,
    kill_group,
    make_job,
    needs_proc,
    queue_fields,
    wait_for,
    wait_until_gone,
)

SMOKE = {"SCHEDGEN_SMOKE": "1"}


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_smoke_without_a_smoke_command_checks_and_touches_nothing(tmp_path: Path) -> None:
    env_file = tmp_path / "app.env"
    env_file.write_text("X=1\n")
    (tmp_path / "wd").mkdir()
    w = make_job(tmp_path, command=["true"], env_file=str(env_file),
                 working_dir=str(tmp_path / "wd"), queue=queue_fields(tmp_path), timeout=10)
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    before = _tree(tmp_path)
    r = w.run(env=SMOKE)
    assert (r.returncode, r.stdout) == (0, "smoke ok\n"), r.stderr
    assert _tree(tmp_path) == before  # no log dir, lock dir, run dir, claim or event
    assert not (tmp_path / "logs").exists() and not (tmp_path / "locks").exists()


def test_smoke_reports_each_failed_precondition_with_78_and_writes_nothing(
        tmp_path: Path) -> None:
    cases = [
        ({"env_file": str(tmp_path / "nope.env")}, "env file"),
        ({"working_dir": str(tmp_path / "nowhere")}, "working directory"),
        ({"command": ["definitely-not-installed-schedgen"]}, "command not found"),
        ({"command": "echo 'unterminated"}, "not valid bash"),
    ]
    for fields, message in cases:
        job_fields = {"command": ["true"], **fields}
        w = make_job(tmp_path, **job_fields)
        r = w.run(env=SMOKE)
        assert r.returncode == 78, (fields, r.stderr)
        assert message in r.stderr
        assert "smoke ok" not in r.stdout
        assert not (tmp_path / "logs").exists()


def test_smoke_with_unwritable_log_root_fails(tmp_path: Path) -> None:
    (tmp_path / "logs").write_text("a file where the log root should be")
    w = make_job(tmp_path, command=["true"])
    r = w.run(env=SMOKE)
    assert r.returncode == 78 and "not writable" in r.stderr


def test_smoke_finds_the_lock_busy(tmp_path: Path) -> None:
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f"touch {started}; sleep 30")
    holder = w.popen()
    try:
        wait_for(started.exists, what="the holder to start")
        r = w.run(env=SMOKE)
        assert r.returncode == 75 and "busy" in r.stderr
    finally:
        kill_group(holder.pid)
        holder.communicate()


def test_smoke_command_runs_instead_of_the_command_and_claims_nothing(tmp_path: Path) -> None:
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json"])
    w = make_job(tmp_path, command=["bash", "-c", "echo REAL"],
                 smoke=["bash", "-c", 'echo "SMOKE item=[$1] smoke=$SCHEDGEN_SMOKE"; '
                                      'echo "$SCHEDGEN_RUN_ID" > "$2/id"', "_", "{item}",
                        "{artifact_dir}"],
                 queue=queue_fields(tmp_path))
    r = w.run(env=SMOKE)
    assert r.returncode == 0, r.stderr
    [run_dir] = w.run_dirs()
    assert (run_dir / "stdout.log").read_text() == "SMOKE item=[] smoke=1\n"
    assert (run_dir / "id").read_text().strip() == run_dir.name
    m = w.manifests()[0]
    assert (m["smoke"], m["item"], m["outcome"]) == (True, None, "ok")
    assert [e["event"] for e in w.events()] == ["start", "finish"]
    assert w.events("start")[0]["smoke"] is True
    assert sorted(p.name for p in (q / "inbox").iterdir()) == ["a.json"]  # not claimed
    assert not (q / "processing").exists()


def test_smoke_command_exit_status_is_passed_on(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], smoke="exit 6")
    assert w.run(env=SMOKE).returncode == 6
    assert w.run().returncode == 0  # without SCHEDGEN_SMOKE the real command runs


# -- schedgen run --------------------------------------------------------------------

def _config(tmp_path: Path, body: str) -> Path:
    cfg = tmp_path / "jobs.toml"
    cfg.write_text(f"""
[defaults]
targets = ["cron"]
log_root = "{tmp_path}/logs"
lock_dir = "{tmp_path}/locks"
wrapper_dir = "{tmp_path}/wrappers"
{body}""")
    return cfg


def test_schedgen_run_shows_the_output_and_passes_the_status_on(tmp_path: Path) -> None:
    cfg = _config(tmp_path, """
[jobs.hello]
command = "echo hello out; echo oops >&2; exit 3"
schedule = "@daily"
""")
    r = schedgen("run", "hello", "-c", str(cfg))
    assert r.returncode == 3
    assert "hello out" in r.stdout
    assert "oops" in r.stderr
    assert "hello run" in r.stderr and "failed (exit 3" in r.stderr
    assert list((tmp_path / "logs" / "hello" / "runs").iterdir())


def test_schedgen_run_smoke(tmp_path: Path) -> None:
    cfg = _config(tmp_path, """
[jobs.hello]
command = ["true"]
schedule = "@daily"
""")
    r = schedgen("run", "hello", "--smoke", "-c", str(cfg))
    assert (r.returncode, r.stdout.strip()) == (0, "smoke ok")
    assert not (tmp_path / "logs").exists()


def test_schedgen_run_unknown_job_exits_2_and_names_the_jobs(tmp_path: Path) -> None:
    cfg = _config(tmp_path, """
[jobs.hello]
command = ["true"]
schedule = "@daily"
""")
    r = schedgen("run", "nope", "-c", str(cfg))
    assert r.returncode == 2
    assert "no job named 'nope'" in r.stderr and "hello" in r.stderr
    assert "Traceback" not in r.stderr


def test_schedgen_run_uses_the_current_config_not_a_stale_installed_wrapper(
        tmp_path: Path) -> None:
    cfg = _config(tmp_path, """
[jobs.hello]
command = ["echo", "current"]
schedule = "@daily"
""")
    write_executable(tmp_path / "wrappers" / "hello.sh", "#!/bin/bash\necho STALE\n")
    tmp = tmp_path / "tmp"  # its own: tests beside it run jobs named hello too
    tmp.mkdir()
    r = schedgen("run", "hello", "-c", str(cfg), env={"TMPDIR": str(tmp)})
    assert r.returncode == 0 and "current" in r.stdout and "STALE" not in r.stdout
    assert list(tmp.glob("schedgen-hello-*.sh")) == []


def test_schedgen_run_uses_the_installed_wrapper_only_when_identical(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["echo", "current"])
    path, temporary = script_for(w.job, w.text)
    assert (path, temporary) == (w.path, False)
    path, temporary = script_for(w.job, w.text + "# changed\n")
    try:
        assert temporary and path != w.path and path.read_text().endswith("# changed\n")
        assert path.stat().st_mode & 0o077 == 0
    finally:
        path.unlink()


@needs_proc
def test_ctrl_c_on_schedgen_run_stops_the_run_and_returns_the_item(tmp_path: Path) -> None:
    started = tmp_path / "started"
    cfg = _config(tmp_path, f"""
[jobs.slow]
command = ["bash", "-c", "touch {started}; sleep 60", "_", "{{item}}"]
schedule = "@daily"
[jobs.slow.queue]
inbox = "{tmp_path}/q/inbox"
""")
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    p = subprocess.Popen([sys.executable, "-m", "schedgen", "run", "slow", "-c", str(cfg)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    wait_for(started.exists, what="the command to start")
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: INT to the foreground group
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert wait_until_gone(p.pid) == []
    assert sorted(f.name for f in (tmp_path / "q" / "inbox").iterdir()) == ["a.json"]
    [run_dir] = list((tmp_path / "logs" / "slow" / "runs").iterdir())
    assert json.loads((run_dir / "schedgen-manifest.json").read_text())["outcome"] == "interrupted"


def test_schedgen_run_does_not_use_a_stale_notify_part_beside_it(tmp_path: Path) -> None:
    # The job file and runtime were current, the notify part hand-edited: it had been
    # used as it was (and its notice not sent).
    cfg = _config(tmp_path, f"""
[jobs.hello]
command = "exit 3"
schedule = "@daily"
[jobs.hello.notify]
command = ["sh", "-c", "echo sent >>{tmp_path}/notified"]
on = ["failure"]
""")
    assert schedgen("render", "-c", str(cfg), "--out", str(tmp_path / "r")).returncode == 0
    shutil.copytree(tmp_path / "r" / "wrappers", tmp_path / "wrappers")
    [nf] = (tmp_path / "wrappers").glob("schedgen-notify.*.bash")
    nf.write_text(nf.read_text().replace("sg_notify_run()", "sg_notify_run() { :; }\nsg_notify_old()"))
    r = schedgen("run", "hello", "-c", str(cfg))
    assert r.returncode == 3, r.stderr
    wait_for(lambda: (tmp_path / "notified").exists(), what="the failure notice")
