"""The wrapper's run record and environment: manifest, events, placeholders, env, exit 78."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_executable
from tests.wrapper_kit import BASH, SYSTEM_PATH, fill_inbox, make_job, queue_fields, wait_for

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
RUN_ID = re.compile(r"\d{8}T\d{6}Z-\d+(-\d+)?")
MANIFEST_KEYS = {"job", "run_id", "host", "pid", "started_at", "finished_at", "duration",
                 "exit_code", "outcome", "item", "attempt"}


def test_manifest_holds_every_field_of_a_finished_run(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["bash", "-c", "echo out; echo err >&2; exit 3"])
    r = w.run()
    assert r.returncode == 3
    [run_dir] = w.run_dirs()
    m = json.loads((run_dir / "schedgen-manifest.json").read_text())
    assert MANIFEST_KEYS <= set(m)
    assert m["job"] == "job" and m["run_id"] == run_dir.name and RUN_ID.fullmatch(m["run_id"])
    assert ISO.fullmatch(m["started_at"]) and ISO.fullmatch(m["finished_at"])
    assert m["started_at"] <= m["finished_at"]
    assert m["run_id"].startswith(m["started_at"].replace("-", "").replace(":", ""))
    assert isinstance(m["duration"], int) and 0 <= m["duration"] < 10
    assert (m["exit_code"], m["outcome"], m["item"], m["attempt"]) == (3, "failed", None, None)
    assert isinstance(m["pid"], int) and m["host"]
    assert (run_dir / "stdout.log").read_text() == "out\n"
    assert (run_dir / "stderr.log").read_text() == "err\n"


def _parses(w: Any) -> bool:
    """A manifest is there and whole (the wrapper rewrites it in place)."""
    try:
        return bool(w.run_dirs()) and bool(w.manifests())
    except (OSError, ValueError):
        return False


def test_manifest_says_running_while_the_command_runs(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    w = make_job(tmp_path, command=["bash", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done',
                                    str(gate)])
    p = w.popen()
    wait_for(lambda: _parses(w), what="the run's manifest")
    m = w.manifests()[0]
    assert (m["outcome"], m["finished_at"], m["exit_code"]) == ("running", None, None)
    assert m["pid"] == p.pid
    gate.touch()
    assert p.wait(timeout=30) == 0
    assert w.manifests()[0]["outcome"] == "ok"


def test_events_are_one_json_object_per_line_with_start_and_finish(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"])
    assert w.run().returncode == 0
    assert w.run().returncode == 0
    events = w.events()
    assert [e["event"] for e in events] == ["start", "finish", "start", "finish"]
    for e in events:
        assert {"ts", "event", "job", "run_id", "pid", "host"} <= set(e)
        assert ISO.fullmatch(e["ts"]) and e["job"] == "job"
    fin = events[1]
    assert (fin["exit_code"], fin["outcome"], fin["run_id"]) == (0, "ok", events[0]["run_id"])
    assert events[0]["run_id"] != events[2]["run_id"]


def test_json_survives_quotes_backslashes_and_control_characters_in_item_names(
        tmp_path: Path) -> None:
    name = 'we"ird\\na\tme\x01.json'
    w = make_job(tmp_path, command=["true", "{item}"], queue=queue_fields(tmp_path))
    fill_inbox(tmp_path / "q" / "inbox", [name, "plain.json"])
    assert w.run().returncode == 0  # batch 1: one item per run
    assert w.run().returncode == 0
    items = sorted(m["item"] for m in w.manifests())
    assert items == sorted([name, "plain.json"])
    assert sorted(e["item"] for e in w.events("finish")) == sorted([name, "plain.json"])


def test_placeholders_are_whole_arguments_with_spaces_quotes_and_metacharacters(
        tmp_path: Path) -> None:
    args = ["a b", "it's", 'say "hi"', "&", "$HOME", "`id`", "; rm -rf /", "x\ny", "*",
            "--id={run_id}", "{artifact_dir}/out.txt", "job={job}", "{job}{run_id}", ""]
    w = make_job(tmp_path, command=["printf", "[%s]\n", *args])
    assert w.run().returncode == 0
    [run_dir] = w.run_dirs()
    rid = run_dir.name
    want = [a.replace("{run_id}", rid).replace("{artifact_dir}", str(run_dir))
            .replace("{job}", "job") for a in args]
    assert (run_dir / "stdout.log").read_text() == "".join(f"[{a}]\n" for a in want)


def test_item_placeholder_is_the_claimed_file_in_processing(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["bash", "-c", 'printf "%s|%s\\n" "$1" "$SCHEDGEN_ITEM"; cat "$1"',
                                    "_", "{item}"], queue=queue_fields(tmp_path))
    fill_inbox(tmp_path / "q" / "inbox", ["my file's.json"])
    assert w.run().returncode == 0
    [run_dir] = w.run_dirs()
    arg, env_item = (run_dir / "stdout.log").read_text().splitlines()[0].split("|")
    assert arg == env_item
    # processing/<claim id>/: the claim is named like the run's first ID (the same, unless
    # a second passed between the claim and the run).
    claim = Path(arg).parent
    assert claim.parent == tmp_path / "q" / "processing" and Path(arg).name == "my file's.json"
    assert claim.name.split("-")[1] == run_dir.name.split("-")[1]  # the same pid
    assert (tmp_path / "q" / "processed" / "my file's.json").exists()


def test_schedgen_variables_path_and_umask_are_set(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["bash", "-c",
                                    'env | grep ^SCHEDGEN_ | sort; echo "PATH=$PATH"; umask; '
                                    ': > "$SCHEDGEN_ARTIFACT_DIR/made"'])
    r = w.run(env={"PATH": "/nonexistent", "SCHEDGEN_SMOKE": "0"})
    assert r.returncode == 0, r.stderr
    [run_dir] = w.run_dirs()
    out = (run_dir / "stdout.log").read_text().splitlines()
    assert f"SCHEDGEN_ARTIFACT_DIR={run_dir}" in out
    assert f"SCHEDGEN_RUN_ID={run_dir.name}" in out
    assert "SCHEDGEN_JOB=job" in out
    assert "SCHEDGEN_ITEM=" in out
    assert "PATH=" + ":".join(SYSTEM_PATH) in out
    assert "0077" in out
    assert stat.S_IMODE((run_dir / "made").stat().st_mode) == 0o600


def test_string_commands_run_with_bash_c(tmp_path: Path) -> None:
    w = make_job(tmp_path, command='for i in 1 2; do echo "n$i"; done; [[ -n x ]] && exit 4')
    assert w.run().returncode == 4
    assert (w.run_dirs()[0] / "stdout.log").read_text() == "n1\nn2\n"


def test_env_file_is_loaded_at_run_time_and_never_written_into_the_wrapper(
        tmp_path: Path) -> None:
    env_file = tmp_path / ".env.local"
    env_file.write_text("SECRET_TOKEN=hunter2-very-secret\nSHARED=from-file\nUNSET_REF=$NOPE\n")
    w = make_job(tmp_path, command=["bash", "-c", 'echo "$SECRET_TOKEN $SHARED $PLAIN"'],
                 env_file=str(env_file), env={"SHARED": "from-toml", "PLAIN": "p q"})
    assert "hunter2" not in w.text
    r = w.run()
    assert r.returncode == 0, r.stderr
    assert (w.run_dirs()[0] / "stdout.log").read_text() == "hunter2-very-secret from-toml p q\n"
    env_file.write_text("SECRET_TOKEN=rotated\n")
    w.run()
    assert (w.run_dirs()[-1] / "stdout.log").read_text().startswith("rotated ")
    for f in tmp_path.rglob("*"):
        if f.is_file() and f != env_file and f.suffix != ".log":
            assert "hunter2" not in f.read_text(errors="replace"), f


def test_missing_env_file_exits_78_with_an_event_and_no_run_dir(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], env_file=str(tmp_path / "missing.env"))
    r = w.run()
    assert r.returncode == 78
    assert "missing.env" in r.stderr
    assert w.run_dirs() == []
    [e] = w.events()
    assert (e["event"], e["what"], e["exit_code"]) == ("precondition", "env_file", 78)


def test_missing_working_dir_exits_78(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"], working_dir=str(tmp_path / "gone"))
    r = w.run()
    assert r.returncode == 78
    assert [e["what"] for e in w.events("precondition")] == ["working_dir"]


def test_working_dir_is_the_commands_cwd(tmp_path: Path) -> None:
    wd = tmp_path / "work dir"
    wd.mkdir()
    write_executable(wd / "run.sh", "#!/bin/bash\npwd\n")
    w = make_job(tmp_path, command=["./run.sh"], working_dir=str(wd))
    assert w.run().returncode == 0
    assert (w.run_dirs()[0] / "stdout.log").read_text() == f"{wd}\n"


def test_command_not_on_path_exits_78(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["no-such-program-schedgen", "x"])
    r = w.run()
    assert r.returncode == 78
    assert "command not found: no-such-program-schedgen" in r.stderr
    assert [e["what"] for e in w.events("precondition")] == ["command"]
    assert w.run_dirs() == []


def test_program_found_only_on_the_configured_path(tmp_path: Path) -> None:
    bindir = tmp_path / "mybin"
    write_executable(bindir / "hello-tool", "#!/bin/sh\necho hello from tool\n")
    w = make_job(tmp_path, command=["hello-tool"], path=[str(bindir), *SYSTEM_PATH])
    assert w.run(env={"PATH": "/usr/bin:/bin"}).returncode == 0
    assert (w.run_dirs()[0] / "stdout.log").read_text() == "hello from tool\n"


def test_run_ids_are_unique_and_sort_by_time(tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["true"])
    for _ in range(5):
        assert w.run().returncode == 0
    ids = [d.name for d in w.run_dirs()]
    assert len(set(ids)) == 5
    starts = [m["started_at"] for m in w.manifests()]
    assert starts == sorted(starts)


def test_cron_mode_appends_output_to_cron_log_and_recreates_a_deleted_log_dir(
        tmp_path: Path) -> None:
    w = make_job(tmp_path, command=["no-such-program-schedgen"])
    r = w.run("--cron")
    assert r.returncode == 78 and r.stdout == r.stderr == ""
    cron_log = w.log_dir / "cron.log"
    assert "command not found" in cron_log.read_text()
    shutil.rmtree(tmp_path / "logs")
    assert w.run("--cron").returncode == 78
    assert cron_log.read_text().count("command not found") == 1


def test_unwritable_log_root_exits_78(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root writes anywhere; a file in the way is the portable "cannot create".
        (tmp_path / "logs").write_text("not a directory")
    else:
        (tmp_path / "logs").mkdir(mode=0o500)
    w = make_job(tmp_path, command=["true"])
    r = w.run()
    assert r.returncode == 78
    assert "log directory" in r.stderr


# --- bash's own mkdir (its loadable builtin, where it is installed) ----------------------

LOADABLE_MKDIR = Path("/usr/lib/bash/mkdir")   # Debian's bash-builtins, for /bin/bash only


def _needs_loadables() -> None:
    if not LOADABLE_MKDIR.exists():
        if os.environ.get("CI"):
            pytest.fail("bash's loadable builtins are required in CI (apt-get install bash-builtins)")
        pytest.skip("bash's loadable builtins are not installed")


def _execs(tmp_path: Path, argv: list[str], env: dict[str, str]) -> list[str]:
    """The programs a run executed (strace -f), by name."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    trace = tmp_path / "trace"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), *argv],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [m.group(1).rsplit("/", 1)[-1] for m in
            re.finditer(r'execve\("([^"]+)".*= 0$', trace.read_text(), re.M)]


def test_with_bash_s_loadable_mkdir_a_plain_run_forks_only_the_lock_and_the_command(
        tmp_path: Path) -> None:
    _needs_loadables()
    w = make_job(tmp_path, command=["true"], path=SYSTEM_PATH)
    assert w.run().returncode == 0           # the first run makes the folders, checks the lock's
    assert _execs(tmp_path, w.argv(), w.env()) == ["bash", "flock", "true"]
    assert len(w.run_dirs()) == 2
    assert all((d / "schedgen-manifest.json").exists() and stat.S_IMODE(d.stat().st_mode) == 0o700
               for d in w.run_dirs())


def test_another_bash_forks_mkdir(tmp_path: Path) -> None:
    # The same bash by another path (a symlink): not the system's, so nothing is loaded.
    prefix = tmp_path / "other" / "bin"
    prefix.mkdir(parents=True)
    (prefix / "bash").symlink_to(os.path.realpath(BASH))
    w = make_job(tmp_path, command=["true"], path=SYSTEM_PATH)
    assert w.run().returncode == 0
    execs = _execs(tmp_path, [str(prefix / "bash"), str(w.path)], w.env())
    assert execs == ["bash", "flock", "mkdir", "true"]
    assert all((d / "schedgen-manifest.json").exists() for d in w.run_dirs())


def test_a_mkdir_of_the_job_s_own_path_is_used_rather_than_bash_s(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    calls = tmp_path / "calls"
    write_executable(shim / "mkdir", f'#!/bin/sh\necho "$@" >>"{calls}"\nexec /bin/mkdir "$@"\n')
    w = make_job(tmp_path, command=["true"], path=[str(shim), *SYSTEM_PATH])
    assert w.run().returncode == 0
    [d] = w.run_dirs()
    assert str(d) in calls.read_text().split()


def test_a_mkdir_the_env_file_puts_first_on_path_is_used_too(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    calls = tmp_path / "calls"
    write_executable(shim / "mkdir", f'#!/bin/sh\necho "$@" >>"{calls}"\nexec /bin/mkdir "$@"\n')
    env_file = tmp_path / "env"
    env_file.write_text(f"PATH={shim}:$PATH\n")
    w = make_job(tmp_path, command=["true"], path=SYSTEM_PATH, env_file=str(env_file))
    assert w.run().returncode == 0
    [d] = w.run_dirs()
    assert str(d) in calls.read_text().split()


def test_the_job_s_own_code_never_meets_bash_s_mkdir(tmp_path: Path) -> None:
    # bash's loadable mkdir takes no -v and gives up on races: a queue item's command, run
    # in the keeper without an exec, gets PATH's.
    _needs_loadables()
    out = tmp_path / "out"
    w = make_job(tmp_path, command=["mkdir", "-pv", str(out / "a" / "b")],
                 path=SYSTEM_PATH, lock=False, queue=queue_fields(tmp_path, batch=0))
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    r = w.run()
    assert r.returncode == 0, r.stderr
    [d] = w.run_dirs()
    assert (out / "a" / "b").is_dir() and "created directory" in (d / "stdout.log").read_text()


def test_pruning_takes_run_directories_deeper_than_path_max(tmp_path: Path) -> None:
    # A tree past PATH_MAX (4096), which bash's loadable rm could not remove: pruned whole.
    # (21 levels of 200-character names: 4,221 characters, in few forks)
    name = "d" * 200
    deep = f'cd "$SCHEDGEN_ARTIFACT_DIR"; for i in $(seq 21); do mkdir {name} && cd {name} || exit; done'
    w = make_job(tmp_path, command=["bash", "-c", deep], path=SYSTEM_PATH, logs={"keep_runs": 1})
    for _ in range(4):
        assert w.run().returncode == 0
    dirs = w.run_dirs()
    assert len(dirs) == 1 and (dirs[0] / "schedgen-manifest.json").exists()
