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


def test_mail_webhook_after_and_sendmail_are_parsed(tmp_path: Path) -> None:
    config = load("""
[defaults.notify]
mail = "ops@example.com"
webhook = "https://hooks.slack.com/services/T0/B0/x"
webhook_format = "slack"
after = 3

[jobs.a]
command = "true"
schedule = "@daily"
[jobs.a.notify]
mail = ["ops@example.com", "root", "ops@example.com"]
sendmail = "/usr/bin/msmtp"

[jobs.b]
command = "true"
schedule = "@daily"
""", tmp_path)
    a, b = config.jobs
    assert a.notify is not None and b.notify is not None
    assert a.notify.mail == ("ops@example.com", "root") and a.notify.sendmail == "/usr/bin/msmtp"
    assert (a.notify.webhook_format, a.notify.after) == ("slack", 3)
    assert a.notify.channels() == ("mail", "webhook")
    assert b.notify.mail == ("ops@example.com",) and b.notify.sendmail is None


def test_channel_values_are_checked_with_their_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        load("""
[jobs.a]
command = "true"
schedule = "@daily"
[jobs.a.notify]
mail = ["ok@example.com", "two@x.org, three@y.org", "x\\nBcc: all@example.com"]
webhook = "ftp://x"
webhook_format = "mattermost"
after = 0
sendmail = "sendmail -oi"

[jobs.b]
command = "true"
schedule = "@daily"
[jobs.b.notify]
mail = []

[jobs.c]
command = "true"
schedule = "@daily"
[jobs.c.notify]
ping_url = "https://hc-ping.com/x"
webhook_format = "json"
sendmail = "/usr/sbin/sendmail"
after = 2
""", tmp_path)
    got = {(p.where, p.message.split(" (")[0].split(";")[0]) for p in exc.value.problems}
    assert got == {
        ("jobs.a.notify.mail", "'two@x.org, three@y.org' is not one mail address"),
        ("jobs.a.notify.webhook", "'ftp://x' is not an http(s) URL without spaces or quotes"),
        ("jobs.a.notify.webhook_format", "unknown format 'mattermost'"),
        ("jobs.a.notify.after", "0 is out of range"),
        ("jobs.a.notify.sendmail", "'sendmail -oi' is not a program name or path"),
        ("jobs.b.notify.mail", "expected an address or a list of addresses, got an empty list"),
        ("jobs.c.notify.webhook_format", "has no effect without a webhook"),
        ("jobs.c.notify.sendmail", "has no effect without mail"),
        ("jobs.c.notify.after", "has no effect without a command, mail or webhook"),
    }


def test_the_schema_takes_what_the_loader_takes(tmp_path: Path) -> None:
    import jsonschema

    from schedgen.config.schema import schema
    good = {"jobs": {"a": {"command": "true", "schedule": "@daily", "notify": {
        "mail": ["ops@example.com"], "webhook": "https://h.example/x", "webhook_format": "teams",
        "after": 2, "sendmail": "/usr/sbin/sendmail"}}}}
    jsonschema.validate(good, schema())
    for bad in ({"mail": "a b@x"}, {"webhook_format": "irc", "webhook": "https://x"},
                {"after": 0, "mail": "a@x"}, {"mail": []}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"jobs": {"a": {"command": "true", "schedule": "@daily",
                                                "notify": bad}}}, schema())
