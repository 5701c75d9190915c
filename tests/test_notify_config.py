"""`[jobs.x.notify]`: parsed into the model, every problem named with job and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.config.model import Notify
from schedgen.errors import ConfigError
from tests.helpers import schedgen, write_config


def load(text: str, tmp_path: Path):  # noqa: ANN201
    return loads(text, tmp_path / "jobs.toml")


def test_notify_is_parsed_and_defaults_merge_key_by_key(tmp_path: Path) -> None:
    config = load("""
[defaults.notify]
command = ["~/bin/alert.sh", "--loud"]
on = ["failure", "missed"]

[jobs.a]
command = "true"
schedule = "@daily"
[jobs.a.notify]
ping_url = "https://hc-ping.com/0f3c?create=1"

[jobs.b]
command = "true"
schedule = "@daily"
""", tmp_path)
    a, b = config.jobs
    home = str(Path("~").expanduser())
    assert a.notify == Notify(on=("failure", "missed"), command=(f"{home}/bin/alert.sh", "--loud"),
                              ping_url="https://hc-ping.com/0f3c?create=1")
    assert b.notify == Notify(on=("failure", "missed"), command=(f"{home}/bin/alert.sh", "--loud"),
                              ping_url=None)


def test_a_job_without_notify_has_none(tmp_path: Path) -> None:
    config = load('[jobs.a]\ncommand = "true"\nschedule = "@daily"\n', tmp_path)
    assert config.jobs[0].notify is None


def test_on_defaults_to_failure_and_recovery(tmp_path: Path) -> None:
    config = load('[jobs.a]\ncommand = "true"\nschedule = "@daily"\n'
                  '[jobs.a.notify]\ncommand = "mail -s x me"\n', tmp_path)
    assert config.jobs[0].notify == Notify(("failure", "recovery"), "mail -s x me", None)


def test_every_notify_problem_is_listed_with_job_and_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load("""
[jobs.a]
command = "true"
schedule = "@daily"
[jobs.a.notify]
on = ["failure", "sometimes"]
command = ["alert", "{run_id}"]
ping_url = "hc-ping.com/x"
pingurl = "typo"

[jobs.b]
command = "true"
schedule = "@daily"
[jobs.b.notify]
on = ["failure"]

[jobs.c]
command = "true"
schedule = "@daily"
[jobs.c.notify]
on = ["failure"]
ping_url = "https://x/\\"quoted\\""

[jobs.d]
command = "true"
schedule = "@daily"
notify = "yes"
""", tmp_path)
    got = {(p.where, p.message.split(";")[0].split(",")[0]) for p in exc.value.problems}
    assert got == {
        ("jobs.a.notify.on", "unknown event 'sometimes'"),
        ("jobs.a.notify.command", "placeholders like {run_id} are for the job's command"),
        ("jobs.a.notify.ping_url", "'hc-ping.com/x' is not an http(s) URL without spaces or quotes"),
        ("jobs.a.notify.pingurl", "unknown key"),
        ("jobs.b.notify", "gives none of command"),
        ("jobs.c.notify.ping_url", "'https://x/\"quoted\"' is not an http(s) URL without spaces or quotes"),
        ("jobs.c.notify.on", "has no effect without a command"),
        ("jobs.d.notify", "expected a table"),
    }
    assert all(p.line for p in exc.value.problems)


def test_validate_exits_2_and_names_the_field(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = "true"\nschedule = "@daily"\n'
                 '[jobs.a.notify]\nping_url = "ftp://x"\n')
    r = schedgen("validate", cwd=tmp_path)
    assert r.returncode == 2
    assert "jobs.a.notify.ping_url: 'ftp://x' is not an http(s) URL" in r.stderr
    assert "Traceback" not in r.stderr
