"""Hostile input: refused by validate (exit 2, job and field) or made harmless by escaping."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

from schedgen.commands import apply as ap
from schedgen.commands import render as rd
from schedgen.config.load import loads
from schedgen.errors import ConfigError
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config

PLAIN = """
[jobs.one]
targets = ["cron"]
command = ["echo", "one"]
schedule = "@daily"
"""


def problems(text: str, base: Path) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        loads(text, base / "jobs.toml")
    return [f"{p.where}: {p.message}" for p in exc.value.problems]


def test_config_path_with_a_newline_is_refused_and_nothing_installed(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    folder = tmp_path / "x\n* * * * * touch /tmp/pwned #"
    cfg = write_config(folder / "jobs.toml", PLAIN)
    for cmd in ("validate", "diff", "apply"):
        r = schedgen(cmd, "-c", str(cfg))
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert "config: the config's path holds a control character (U+000A)" in r.stderr
    assert fake_crontab.read() is None and fake_crontab.writes() == []


@pytest.mark.parametrize("field,value", [
    ("description", "tab\tis fine but bell \x07 is not"),
    ("description", "line\u2028separator"),
    ("working_dir", "/tmp/a\x1b[31mred"),
    ("log_root", "/tmp/logs\rx"),
])
def test_control_characters_are_refused_with_job_and_field(tmp_path: Path, field: str,
                                                            value: str) -> None:
    got = problems(PLAIN + f"{field} = {json.dumps(value)}\n", tmp_path)  # JSON escapes are TOML's
    assert len(got) == 1 and got[0].startswith(f"jobs.one.{field}: holds a control character")


def test_a_backslash_before_a_percent_in_a_cron_jobs_wrapper_dir_is_refused(
        tmp_path: Path) -> None:
    # Real cron never ran such a line: it takes \\% as escaping the %, which then ends it.
    folder = json.dumps(str(tmp_path) + "/b\\%d")   # the path holds one backslash
    got = problems(PLAIN + f"wrapper_dir = {folder}\n", tmp_path)
    assert got == ["jobs.one.wrapper_dir: a backslash right before a % cannot be written in a "
                   "crontab line (cron reads \\% as %); rename the folder"]
    loads(PLAIN + f'wrapper_dir = "{tmp_path}/p%d"\n', tmp_path / "jobs.toml")  # % alone: fine


def test_a_program_named_with_a_leading_dash_is_refused(tmp_path: Path) -> None:
    # The wrapper's `command -v` and `exec` took it for an option: exit 78, "not found".
    got = problems(PLAIN.replace('["echo", "one"]', '["-dash", "a"]'), tmp_path)
    assert got == ["jobs.one.command: the program '-dash' starts with '-': give its full path"]


def test_a_dotted_job_name_and_every_bad_path_entry_are_each_reported_once(
        tmp_path: Path) -> None:
    text = ('[jobs."a.b"]\ncommand = ["true"]\nschedule = "@daily"\n'
            'path = ["/a:b", "", "/ok"]\n')
    assert problems(text, tmp_path) == [
        'jobs."a.b": invalid job name: use a-z, 0-9, \'_\' and \'-\', starting with a letter or '
        "digit, at most 64 characters",
        'jobs."a.b".path: \'/a:b\' cannot be a PATH entry; \'\' cannot be a PATH entry']


def test_processed_through_dotdot_is_the_inbox(tmp_path: Path) -> None:
    got = problems(PLAIN.replace('"@daily"', '"@daily"\ncommand = ["w", "{item}"]', 1)
                   .replace('command = ["echo", "one"]\n', "")
                   + f'[jobs.one.queue]\ninbox = "{tmp_path}/q/inbox"\n'
                   f'processed = "{tmp_path}/q/sub/../inbox"\n', tmp_path)
    assert got == [f"jobs.one.queue.processed: is the same folder as inbox once symlinks and "
                   f"'..' are resolved ({tmp_path.resolve()}/q/inbox): runs would claim the "
                   "same files again"]


def test_processing_symlinked_to_the_inbox_is_refused(tmp_path: Path) -> None:
    (tmp_path / "q" / "inbox").mkdir(parents=True)
    (tmp_path / "q" / "work").symlink_to(tmp_path / "q" / "inbox")
    text = (f'[jobs.one]\ntargets = ["cron"]\ncommand = ["w", "{{item}}"]\nschedule = "@daily"\n'
            f'[jobs.one.queue]\ninbox = "{tmp_path}/q/inbox"\nprocessing = "{tmp_path}/q/work"\n')
    got = problems(text, tmp_path)
    assert len(got) == 1 and got[0].startswith("jobs.one.queue.processing: is the same folder as "
                                               "inbox once symlinks")


def test_queue_folder_inside_another_is_refused(tmp_path: Path) -> None:
    text = (f'[jobs.one]\ntargets = ["cron"]\ncommand = ["w", "{{item}}"]\nschedule = "@daily"\n'
            f'[jobs.one.queue]\ninbox = "{tmp_path}/q"\nprocessing = "{tmp_path}/q/processing"\n')
    got = problems(text, tmp_path)
    assert len(got) == 1 and "processing is inside inbox" in got[0]


def _other_filesystem(tmp_path: Path) -> Path | None:
    for candidate in ("/dev/shm", "/run", "/var/tmp", "/tmp"):
        p = Path(candidate)
        if p.is_dir() and os.access(p, os.W_OK) and \
                os.stat(p).st_dev != os.stat(tmp_path).st_dev:
            return p
    return None


def test_queue_folders_on_two_filesystems_are_refused(tmp_path: Path) -> None:
    other = _other_filesystem(tmp_path)
    if other is None:
        pytest.skip("no second file system writable here")
    far = Path(other) / f"schedgen-test-{os.getpid()}"
    far.mkdir()
    try:
        text = (f'[jobs.one]\ntargets = ["cron"]\ncommand = ["w", "{{item}}"]\n'
                f'schedule = "@daily"\n[jobs.one.queue]\ninbox = "{tmp_path}/inbox"\n'
                f'processed = "{far}/processed"\n')
        got = problems(text, tmp_path)
        assert len(got) == 1 and got[0].startswith("jobs.one.queue.processed: is on another "
                                                   "file system than inbox")
    finally:
        far.rmdir()


def test_long_label_prefix_is_refused_before_apply(tmp_path: Path) -> None:
    prefix = "a" * 250
    got = problems(PLAIN.replace('["cron"]', '["launchd"]') + f'label_prefix = "{prefix}"\n',
                   tmp_path)
    assert len(got) == 1 and got[0].startswith("jobs.one.label_prefix: the plist file name")


def test_dashes_in_namespace_and_config_folder_still_give_xml(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "a---b" / "jobs.toml", """
[defaults]
namespace = "x--y"
targets = ["launchd"]

[jobs.job--1-]
description = "ends -- with -"
command = ["echo"]
schedule = "0 9 * * 1-5"
""")
    written = rd.render(cfg, tmp_path / "out", None)
    plist = next(p for p in written if p.suffix == ".plist")
    data = plistlib.loads(plist.read_bytes())  # raises on a plist that is not XML
    assert data["Label"] == "local.schedgen.job--1-" and data["Comment"] == "ends -- with -"
    for tool in (["xmllint", "--noout"], ["plutil", "-lint"], ["plistutil", "-i"]):
        if shutil.which(tool[0]):
            args = [*tool, str(plist)] + (["-o", "/dev/null"] if tool[0] == "plistutil" else [])
            r = subprocess.run(args, capture_output=True, text=True)
            assert r.returncode == 0, (tool, r.stderr)


def test_uninstall_namespace_that_is_a_path_is_refused(tmp_path: Path) -> None:
    r = schedgen("uninstall", "--namespace", "../../../../etc/passwd", cwd=tmp_path)
    assert r.returncode == 2 and "is not a namespace" in r.stderr
    assert "Traceback" not in r.stderr
    with pytest.raises(Exception, match="is not a namespace"):
        ap.uninstall(tmp_path / "jobs.toml", "a/b", say=lambda _: None)


def test_form_feed_and_line_separator_stay_inside_a_foreign_line(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    # Only "\n" ends a cron line: these must neither split a line nor fake a marker.
    foreign = ("0 1 * * * echo a\x0cb\n"
               "0 2 * * * echo c\u2028# BEGIN schedgen namespace=default\n"
               "0 3 * * * echo d\x1c# END schedgen namespace=default\n").encode()
    fake_crontab.set(foreign)
    cfg = write_config(tmp_path / "jobs.toml", PLAIN)
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    table = fake_crontab.read()
    assert table is not None and table.startswith(foreign)
    assert table.count(b"# BEGIN schedgen namespace=default") == 2  # the user's, and ours
    assert schedgen("diff", "-c", str(cfg)).returncode == 0
    r = schedgen("uninstall", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    assert fake_crontab.read() == foreign
