"""Bad configs: every problem listed with job and field, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.config.load import load, loads
from schedgen.errors import ConfigError
from tests.helpers import schedgen, write_config

GOOD = """
[jobs.ok]
command = ["/bin/true"]
schedule = "0 * * * *"
"""

# (toml text, [(where, fragment of message)])
BAD = {
    "unknown_key_typo": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nshedule = "x"\n',
                         [("jobs.a.shedule", "did you mean 'schedule'")]),
    "unknown_top_level": ('[job.a]\ncommand = ["x"]\n', [("job", "did you mean 'jobs'")]),
    "unknown_lock_key": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.lock]\nnmae = "x"\n',
                         [("jobs.a.lock.nmae", "did you mean 'name'")]),
    "wrong_type": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nrun_at_load = "yes"\n',
                   [("jobs.a.run_at_load", "expected true or false")]),
    "out_of_range": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nthrottle_interval = -1\n',
                     [("jobs.a.throttle_interval", "out of range")]),
    "bad_duration": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\ntimeout = "10 minutes"\n',
                     [("jobs.a.timeout", "is not a duration")]),
    "bad_size": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.logs]\nmax_size = "big"\n',
                 [("jobs.a.logs.max_size", "is not a size")]),
    "bad_job_name": ('[jobs.Bad_Name]\ncommand = ["x"]\nschedule = "@daily"\n',
                     [("jobs.Bad_Name", "invalid job name")]),
    "long_job_name": (f'[jobs.{"a" * 65}]\ncommand = ["x"]\nschedule = "@daily"\n',
                      [(f"jobs.{'a' * 65}", "at most 64")]),
    "bad_env_name": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nenv = { "MY-VAR" = "1" }\n',
                     [("jobs.a.env", "'MY-VAR' is not a valid environment variable name")]),
    "empty_command": ('[jobs.a]\ncommand = []\nschedule = "@daily"\n',
                      [("jobs.a.command", "is empty")]),
    "blank_string_command": ('[jobs.a]\ncommand = "  "\nschedule = "@daily"\n',
                             [("jobs.a.command", "is empty")]),
    "missing_command_and_schedule": ('[jobs.a]\ndescription = "x"\n',
                                     [("jobs.a.command", "missing"), ("jobs.a.schedule", "missing")]),
    "missing_inbox": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.queue]\nbatch = 2\n',
                      [("jobs.a.queue.inbox", "missing")]),
    "exit_status_range": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.lock]\nbusy_exit = 256\n',
                          [("jobs.a.lock.busy_exit", "out of range (0-255)")]),
    "never_fires": ('[jobs.a]\ncommand = ["x"]\nschedule = "0 0 31 2 *"\n',
                    [("jobs.a.schedule", "can never fire")]),
    "never_fires_30_feb": ('[jobs.a]\ncommand = ["x"]\nschedule = "0 0 30 2 *"\n',
                           [("jobs.a.schedule", "can never fire")]),
    "cron_out_of_range": ('[jobs.a]\ncommand = ["x"]\nschedule = "60 * * * *"\n',
                          [("jobs.a.schedule", "minute 60 is out of range 0-59")]),
    "cron_fields": ('[jobs.a]\ncommand = ["x"]\nschedule = "* * * *"\n',
                    [("jobs.a.schedule", "has 4 fields")]),
    "cron_malformed": ('[jobs.a]\ncommand = ["x"]\nschedule = "*/0 * * * *"\n',
                       [("jobs.a.schedule", "step '0' must be a positive number")]),
    "cron_backwards": ('[jobs.a]\ncommand = ["x"]\nschedule = "0 5-3 * * *"\n',
                       [("jobs.a.schedule", "runs backwards")]),
    "unknown_macro": ('[jobs.a]\ncommand = ["x"]\nschedule = "@fortnightly"\n',
                      [("jobs.a.schedule", "unknown macro")]),
    "bad_list_item": ('[jobs.a]\ncommand = ["x"]\nschedule = ["@daily", "0 25 * * *"]\n',
                      [("jobs.a.schedule", "[1] hour 25 is out of range")]),
    "item_without_queue": ('[jobs.a]\ncommand = ["x", "{item}"]\nschedule = "@daily"\n',
                           [("jobs.a.command", "no [queue]")]),
    "every_not_even_for_cron": ('[jobs.a]\ntargets = ["cron"]\ncommand = ["x"]\nschedule = "@every 7m"\n',
                                [("jobs.a.schedule", "a minute step starts again at each hour")]),
    "launchd_too_many_dicts": ('[jobs.a]\ntargets = ["launchd"]\ncommand = ["x"]\n'
                               'schedule = "0-58 0-22 1-30 1-11 *"\n',
                               [("jobs.a.schedule", "StartCalendarInterval dicts")]),
    "unknown_target": ('[jobs.a]\ntargets = ["anacron"]\ncommand = ["x"]\nschedule = "@daily"\n',
                       [("jobs.a.targets", "unknown target 'anacron'")]),
    "same_queue_dirs": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.queue]\n'
                        'inbox = "/q/in"\nprocessed = "/q/in"\n',
                        [("jobs.a.queue.processed", "same folder as inbox")]),
    "multiline_description": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\ndescription = """a\nb"""\n',
                              [("jobs.a.description", "single line")]),
    "no_jobs": ('[defaults]\nnamespace = "x"\n', [("jobs", "no jobs defined")]),
    "bad_format": ('format = 2\n' + GOOD, [("format", "not supported")]),
    "too_many_retries": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nretries = 101\n', [("jobs.a.retries", "out of range")]),
    "small_backoff": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nbackoff = 0.5\n', [("jobs.a.backoff", "from 1 to 10")]),
    "bad_retry_delay": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nretry_delay = "soon"\n', [("jobs.a.retry_delay", "is not a duration")]),
    "retries_on_a_queue": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\nretries = 2\n[jobs.a.queue]\ninbox = "/q/in"\n',
                           [("jobs.a.retries", "a queue job has no retries")]),
    "unknown_on_busy": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.lock]\non_busy = "kill"\n',
                        [("jobs.a.lock.on_busy", "expected one of 'skip', 'wait', 'replace'")]),
    "wait_without_wait": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.lock]\non_busy = "wait"\n',
                          [("jobs.a.lock.wait", "needs how long")]),
    "skip_with_wait": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.lock]\non_busy = "skip"\nwait = "1m"\n',
                       [("jobs.a.lock.on_busy", "drop one of them")]),
    "bad_stop_on_failure": ('[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n[jobs.a.queue]\ninbox = "/q/in"\nstop_on_failure = 1\n',
                            [("jobs.a.queue.stop_on_failure", "expected true or false")]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_names_job_and_field(case: str, tmp_path: Path) -> None:
    text, expected = BAD[case]
    with pytest.raises(ConfigError) as info:
        loads(text, tmp_path / "jobs.toml")
    shown = {(p.where, p.message) for p in info.value.problems}
    for where, fragment in expected:
        assert any(w == where and fragment in m for w, m in shown), (where, fragment, shown)


def test_every_problem_is_reported_in_one_run(tmp_path: Path) -> None:
    text = "".join(BAD[c][0].replace("[jobs.a", f"[jobs.{c.replace('_', '-')}")
                   for c in ("wrong_type", "bad_duration", "empty_command", "never_fires"))
    with pytest.raises(ConfigError) as info:
        loads(text, tmp_path / "jobs.toml")
    fields = {p.where.split(".")[-1] for p in info.value.problems}
    assert {"run_at_load", "timeout", "command", "schedule"} <= fields
    # Problems carry the TOML line they come from, in order.
    lines = [p.line for p in info.value.problems]
    assert all(lines) and lines == sorted(lines)


def test_validate_cli_exits_2_lists_problems_and_writes_nothing(tmp_path: Path, home: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", BAD["bad_duration"][0] + BAD["bad_env_name"][0]
                       .replace("[jobs.a]", "[jobs.b]"))
    before = sorted(home.rglob("*"))
    r = schedgen("validate", "-c", str(cfg), env={"HOME": str(home)})
    assert r.returncode == 2
    assert "jobs.a.timeout: '10 minutes' is not a duration" in r.stderr
    assert "jobs.b.env: 'MY-VAR' is not a valid environment variable name" in r.stderr
    assert "(line 4)" in r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(home.rglob("*")) == before


def test_render_with_bad_config_writes_nothing(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", BAD["never_fires"][0])
    r = schedgen("render", "-c", str(cfg), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert not (tmp_path / "out").exists()


def test_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = ["x"\nschedule = "@daily"\n')
    r = schedgen("validate", "-c", str(cfg))
    assert r.returncode == 2
    assert "syntax error" in r.stderr and "line 3" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_config_file_is_exit_2_naming_the_path(tmp_path: Path) -> None:
    r = schedgen("validate", "-c", str(tmp_path / "nope.toml"))
    assert r.returncode == 2
    assert "nope.toml: no such config file" in r.stderr


def test_config_from_environment_variable(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "other.toml", GOOD)
    r = schedgen("validate", cwd=tmp_path, env={"SCHEDGEN_CONFIG": str(cfg)})
    assert r.returncode == 0, r.stderr
    assert "valid, 1 job" in r.stdout


def test_defaults_are_inherited_and_tables_merged(tmp_path: Path, home: Path) -> None:
    cfg = loads("""
[defaults]
namespace = "team"
log_root = "~/logs"
timeout = "1h30m"
[defaults.lock]
busy_exit = 99
[defaults.logs]
keep = 2
[jobs.a]
command = ["~/bin/run", "{job}"]
schedule = ["@hourly", "30 2 * * mon"]
[jobs.a.lock]
name = "shared"
[jobs.b]
command = "echo hi"
schedule = "@every 15m"
timeout = 60
lock = false
[jobs.b.logs]
max_size = "1KB"
""", tmp_path / "jobs.toml")
    a, b = cfg.jobs
    assert cfg.namespace == "team"
    assert a.log_root == home / "logs" and a.timeout == 5400
    assert a.lock is not None and (a.lock.name, a.lock.busy_exit, a.lock.wait) == ("shared", 99, 0)
    assert a.command == (str(home / "bin/run"), "{job}")
    assert a.schedule_text == ("@hourly", "30 2 * * mon")
    assert a.logs.keep == 2 and a.logs.max_size == 10_000_000
    assert b.lock is None and b.timeout == 60 and b.command == "echo hi"
    assert b.logs.max_size == 1000 and b.logs.keep == 2
    with pytest.raises(AttributeError):
        a.name = "other"  # type: ignore[misc]  # the model is immutable


def test_queue_folders_default_to_siblings_of_inbox(tmp_path: Path) -> None:
    cfg = loads('[jobs.q]\ncommand = ["p", "{item}"]\nschedule = "@daily"\n'
                '[jobs.q.queue]\ninbox = "data/done"\n', tmp_path / "jobs.toml")
    q = cfg.jobs[0].queue
    assert q is not None
    assert q.inbox == tmp_path / "data/done"
    assert (q.processing, q.processed, q.failed) == tuple(tmp_path / "data" / n for n in
                                                          ("processing", "processed", "failed"))
    assert (q.pattern, q.batch, q.stale_after, q.max_attempts) == ("*", 1, 3600, 3)


def test_bundled_jobs_toml_is_valid() -> None:
    cfg = load(Path(__file__).resolve().parent.parent / "jobs.toml")
    assert {j.name for j in cfg.jobs} == {"codex-note-funnel", "publish-daily"}


def test_default_path_has_homebrews_folder_on_macos_only(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    text = 'format = 1\n[jobs.x]\ncommand = ["true"]\nschedule = "@daily"\ntargets = ["cron"]\n'
    linux = loads(text, tmp_path / "jobs.toml").jobs[0].path
    assert linux == ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")
    monkeypatch.setattr("schedgen.paths.is_macos", lambda: True)
    assert loads(text, tmp_path / "jobs.toml").jobs[0].path == ("/opt/homebrew/bin", *linux)


def test_run_policies_load_and_old_spellings_keep_their_meaning(tmp_path: Path) -> None:
    text = """
[defaults]
retries = 2
[defaults.lock]
wait = "5m"
[jobs.waits]
command = ["x"]
schedule = "@daily"
[jobs.replaces]
command = ["x"]
schedule = "@daily"
retry_delay = "1m"
backoff = 1
lock = { on_busy = "replace" }
[jobs.q]
command = ["x", "{item}"]
schedule = "@daily"
queue = { inbox = "/q/in", batch = 0 }
"""
    c = loads(text, tmp_path / "jobs.toml")
    waits, replaces, q = (c.job(n) for n in ("waits", "replaces", "q"))
    assert waits and replaces and q and waits.lock and replaces.lock and q.queue
    assert (waits.retries, waits.retry_delay, waits.backoff) == (2, 30, 2.0)
    assert waits.lock.on_busy == "wait" and waits.lock.wait == 300   # lock.wait alone: wait
    assert (replaces.lock.on_busy, replaces.retry_delay, replaces.backoff) == ("replace", 60, 1.0)
    assert q.queue.stop_on_failure is False and q.retries == 2         # inherited: not used
