"""Schedules in words: every shape schedgen accepts, deterministic, and never loaded by validate."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedgen.schedule.describe import describe_entries, describe_entry
from schedgen.schedule.expressions import parse_entry, parse_schedule


@pytest.mark.parametrize(("expr", "text"), [
    ("15 6 * * *", "At 06:15 every day"),
    ("40 10,16 * * *", "At 10:40 and 16:40 every day"),
    ("@daily", "At 00:00 every day"),
    ("@midnight", "At 00:00 every day"),
    ("@hourly", "At the start of every hour"),
    ("@weekly", "At 00:00 on Sunday"),
    ("@monthly", "At 00:00 on the first day of every month"),
    ("@yearly", "At 00:00 on January 1"),
    ("0 0 29 2 *", "At 00:00 on February 29"),
    ("0 0 * * 7", "At 00:00 on Sunday"),
    ("*/5 * * * *", "Every 5th minute of every hour"),
    ("@reboot", "At boot"),
    ("@every 15m", "Every 15 minutes"),
    ("@every 1h", "Every hour"),
    ("@every 90s", "Every 1 minute 30 seconds"),
    ("@every 1d", "Every day"),
])
def test_describe_entry_in_words(expr: str, text: str) -> None:
    assert describe_entry(parse_entry(expr)) == text


def test_both_day_fields_restricted_reads_as_or() -> None:
    # Debian cron fires on the 1st, the 15th AND every Monday.
    assert describe_entry(parse_entry("0 12 1,15 * 1")) == (
        "At 12:00 on the first and the 15th day of month, or on Monday")


def test_star_prefixed_day_field_reads_as_and() -> None:
    # Debian: a field starting with '*' makes the two day fields AND.
    assert describe_entry(parse_entry("0 0 */2 * mon")) == (
        "At 00:00 on every 2nd day of month if it's on Monday")


def test_a_list_of_expressions_is_one_sentence() -> None:
    entries = parse_schedule(["0 6 * * 1-5", "0 9 * * 0,6", "@reboot"])
    assert describe_entries(entries) == (
        "At 06:00 on Monday through Friday; at 09:00 on Sunday and Saturday; at boot")


def test_describe_job_uses_its_schedule(tmp_path) -> None:
    from schedgen.config.load import loads

    config = loads('[jobs.a]\ncommand = "true"\nschedule = ["@hourly", "30 2 * * *"]\n',
                   tmp_path / "jobs.toml")
    assert describe_entries(config.jobs[0].schedule) == "At the start of every hour; at 02:30 every day"


_FIELD = st.sampled_from(["*", "0", "5", "1-5", "*/2", "*/7", "1,3", "2-6/2", "1-3,5"])


@settings(max_examples=200, deadline=None)
@given(st.tuples(_FIELD, _FIELD, _FIELD.filter(lambda f: f != "0"),
                 st.sampled_from(["*", "2", "jan-mar", "1,6", "*/3"]),
                 st.sampled_from(["*", "1-5", "mon", "0,6", "7", "*/2", "sun-sat"])))
def test_every_valid_expression_gets_one_line(fields) -> None:
    minute, hour, dom, month, dow = fields
    try:
        entry = parse_entry(f"{minute} {hour} {dom} {month} {dow}")
    except ValueError:
        return
    text = describe_entry(entry)
    assert text and "\n" not in text and text[0].isupper()


def test_description_does_not_depend_on_the_time_zone() -> None:
    code = ("from schedgen.schedule.describe import describe_entry; from schedgen.schedule.expressions import "
            "parse_entry; print(describe_entry(parse_entry('30 2 * 3 0')))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"TZ": tz, "PATH": "/usr/bin:/bin"}, check=True).stdout
            for tz in ("UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata")}
    assert len(outs) == 1


def test_validate_never_imports_the_describers(tmp_path) -> None:
    cfg = tmp_path / "jobs.toml"
    cfg.write_text('[jobs.a]\ncommand = "true"\nschedule = "@daily"\n')
    code = ("import sys; from schedgen.commands import validate as commands; from pathlib import Path; "
            f"commands.validate(Path({str(cfg)!r})); "
            "print(sorted(m for m in sys.modules if m == 'schedgen.schedule.describe' "
            "or m.split('.')[0] in ('cronsim', 'cron_descriptor', 'jinja2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
