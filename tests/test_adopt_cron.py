"""Import adopts the crontab lines it read: apply turns them off, uninstall puts them back.

With the real `crontab` program on a throwaway user's table (tests/adopt_kit.py).
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from schedgen.importers.document import what_it_does
from schedgen.targets.cron.importer import mail_notify
from tests.adopt_kit import UserCrontab, user_crontab  # noqa: F401
from tests.helpers import schedgen, write_config

TABLE = (b"# my crontab, edited by hand\n"
         b"SHELL=/bin/sh\n"
         b"MAILTO=me@example.com\n"
         b"PATH=/usr/local/bin:/usr/bin:/bin\n"
         b"\n"
         b"# heartbeat every minute\n"
         b"* * * * * date +\\%H\\%M >> ~/beat.log\n"
         b"*/5 * * * * ~/bin/sync-mail.sh\n"
         b"@reboot ~/bin/start-agent.sh\n"
         b"30 2 * * * tar -czf ~/backups/notes-$(date +\\%F).tgz ~/notes\n"
         b"0 9 * * 1 echo hi | mail -s hi me%body\n")
ADOPTED = {"beat": b"* * * * * date +\\%H\\%M >> ~/beat.log",
           "sync-mail": b"*/5 * * * * ~/bin/sync-mail.sh",
           "start-agent": b"@reboot ~/bin/start-agent.sh",
           "tar-notes": b"30 2 * * * tar -czf ~/backups/notes-$(date +\\%F).tgz ~/notes"}


def run(cwd: Path, *args: str):  # noqa: ANN201
    r = schedgen(*args, cwd=cwd)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def without_block(table: bytes) -> bytes:
    return re.sub(rb"# BEGIN schedgen namespace=default.*?# END schedgen namespace=default\n",
                  b"", table, flags=re.DOTALL)


def turned_off(table: bytes) -> bytes:
    """The table as the user wrote it: schedgen's block gone, its prefixes taken off."""
    return re.sub(rb"^#schedgen-adopted ns=default job=[a-z0-9_-]+: ", b"",
                  without_block(table), flags=re.MULTILINE)


@pytest.fixture
def imported(user_crontab: UserCrontab, tmp_path: Path) -> Path:  # noqa: F811
    user_crontab.set(TABLE, tmp_path / "original")
    r = run(tmp_path, "import", "--from", "cron", "-o", "jobs.toml")
    assert r.returncode == 0, r.stderr
    return tmp_path / "jobs.toml"


def test_import_names_jobs_for_what_they_do_and_records_what_they_adopt(imported: Path) -> None:
    doc = tomllib.loads(imported.read_text())
    assert {n: j["adopts"] for n, j in doc["jobs"].items()} == {
        n: "cron: " + line.decode() for n, line in ADOPTED.items()}
    # MAILTO: a [notify] that mails through sendmail, said so in the file
    notify = doc["defaults"]["notify"]
    assert notify["mail"] == "me@example.com" and "command" not in notify
    assert notify["on"] == ["failure", "recovery"]
    assert "# From the crontab's MAILTO" in imported.read_text()
    assert "still installed" not in imported.read_text()


def test_diff_apply_uninstall_turn_the_originals_off_and_back_on(
        imported: Path, user_crontab: UserCrontab, home: Path) -> None:  # noqa: F811
    cwd = imported.parent
    d = run(cwd, "diff")
    assert d.returncode == 1
    for job, line in ADOPTED.items():
        assert f"{line.decode()}\n    replaced by job {job}: apply comments it out" in d.stdout
    assert "4 of your own crontab lines turned off" in run(cwd, "diff", "--stat").stdout
    block = next(c for c in json.loads(run(cwd, "diff", "--json").stdout)["changes"]
                 if c["kind"] == "cron")
    assert [(x["line"], x["job"], x["action"]) for x in block["adopted"]] == [
        (7, "beat", "comment out"), (8, "sync-mail", "comment out"),
        (9, "start-agent", "comment out"), (10, "tar-notes", "comment out")]
    dry = run(cwd, "apply", "--dry-run")
    assert "would turn off: your crontab line 7 (job beat): " + ADOPTED["beat"].decode() \
        in dry.stdout
    assert user_crontab.read() == TABLE

    a = run(cwd, "apply")
    assert a.returncode == 0, a.stderr
    backup = home / ".local/state/schedgen/crontab-before-schedgen"
    assert f"in {backup}; `crontab {backup}` puts it back" in a.stdout
    assert backup.read_bytes() == TABLE and backup.stat().st_mode & 0o777 == 0o600
    table = user_crontab.read()
    assert table is not None
    for job, line in ADOPTED.items():  # off, each by a prefix before its own bytes
        assert b"\n#schedgen-adopted ns=default job=" + job.encode() + b": " + line + b"\n" \
            in table
    assert turned_off(table) == TABLE  # every other byte as it was
    assert b"\n0 9 * * 1 echo hi | mail -s hi me%body\n" in table  # not imported: still on
    # once each: a line per job in the block, none of the originals active
    active = [ln for ln in table.split(b"\n") if ln and not ln.startswith(b"#")
              and b"=" not in ln.split(b" ")[0]]
    assert len(active) == 5, active
    assert run(cwd, "status", "--check").returncode == 0
    assert run(cwd, "diff").returncode == 0

    u = run(cwd, "uninstall")
    assert u.returncode == 0, u.stderr
    assert user_crontab.read() == TABLE  # byte for byte
    assert backup.read_bytes() == TABLE  # never overwritten


def test_a_rename_is_followed_not_orphaned(imported: Path, user_crontab: UserCrontab,  # noqa: F811
                                           home: Path) -> None:
    cwd = imported.parent
    assert run(cwd, "apply").returncode == 0
    imported.write_text(imported.read_text().replace("[jobs.beat", "[jobs.heartbeat"))
    d = run(cwd, "diff")
    assert "job beat is now job heartbeat (renamed in jobs.toml)" in d.stdout
    a = run(cwd, "apply")
    assert a.returncode == 0, a.stderr
    s = run(cwd, "status", "--check")
    assert s.returncode == 0, s.stdout
    assert "DRIFT" not in s.stdout and "orphan" not in s.stdout
    assert not (home / ".local/share/schedgen/wrappers/beat.sh").exists()
    table = user_crontab.read()
    assert table is not None and b"#schedgen-adopted ns=default job=heartbeat: " + \
        ADOPTED["beat"] + b"\n" in table
    assert run(cwd, "uninstall").returncode == 0
    assert user_crontab.read() == TABLE


def test_status_says_when_the_original_runs_again(imported: Path,
                                                   user_crontab: UserCrontab) -> None:  # noqa: F811
    cwd = imported.parent
    assert run(cwd, "apply").returncode == 0
    table = user_crontab.read()
    assert table is not None  # the user takes the prefix off by hand
    user_crontab.set(table.replace(b"#schedgen-adopted ns=default job=beat: ", b""),
                     cwd / "edited")
    s = run(cwd, "status", "--check")
    assert s.returncode == 1
    assert "crontab lines: your own line it adopts still runs too (apply turns it off)" \
        in s.stdout.split("sync-mail")[0]  # said of job beat
    assert run(cwd, "apply").returncode == 0
    assert run(cwd, "status", "--check").returncode == 0


def test_the_backup_is_kept_once_before_the_first_write(user_crontab: UserCrontab,  # noqa: F811
                                                        tmp_path: Path, home: Path) -> None:
    write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = ["true"]\nschedule = "@daily"\n'
                                         'targets = ["cron"]\n')
    a = run(tmp_path, "apply")  # no crontab at all before
    backup = home / ".local/state/schedgen/crontab-before-schedgen"
    assert a.returncode == 0 and backup.read_bytes() == b""
    assert "`crontab -r` (you had no crontab) puts it back" in a.stdout
    write_config(tmp_path / "jobs.toml", '[jobs.b]\ncommand = ["true"]\nschedule = "@daily"\n'
                                         'targets = ["cron"]\n')
    a = run(tmp_path, "apply")
    assert a.returncode == 0 and "saved:" not in a.stdout and backup.read_bytes() == b""


@pytest.mark.parametrize(("value", "message"), [
    ("kubernetes: x", "'kubernetes' cannot hand a job over; targets that can: launchd, cron, systemd"),
    ("cron:x", 'expected "<target>: <its line or name there>"'),
    ("cron: ", 'expected "<target>: <its line or name there>"'),
])
def test_validate_knows_adopts(tmp_path: Path, value: str, message: str) -> None:
    write_config(tmp_path / "jobs.toml", f'[jobs.a]\ncommand = ["true"]\nschedule = "@daily"\n'
                                         f'adopts = "{value}"\n')
    r = run(tmp_path, "validate")
    assert r.returncode == 2 and f"jobs.a.adopts: {message}" in r.stderr


def test_two_jobs_never_adopt_one_original(tmp_path: Path) -> None:
    job = '[jobs.{}]\ncommand = ["true"]\nschedule = "@daily"\nadopts = "cron: @daily x"\n'
    write_config(tmp_path / "jobs.toml", job.format("a") + job.format("b"))
    r = run(tmp_path, "validate")
    assert r.returncode == 2 and "jobs.b.adopts: job a adopts the same" in r.stderr


def test_adopts_belongs_to_one_job(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", '[defaults]\nadopts = "cron: @daily x"\n[jobs.a]\n'
                                         'command = ["true"]\nschedule = "@daily"\n')
    r = run(tmp_path, "validate")
    assert r.returncode == 2 and "defaults.adopts: belongs to one job" in r.stderr


@pytest.mark.parametrize(("command", "name"), [
    ("date +%H%M >> ~/beat.log", "beat"),
    ("tar -czf ~/backups/notes.tgz ~/notes", "tar-notes"),
    (["/bin/bash", "/home/u/bin/backup.sh"], "backup"),
    (["rsync", "-a", "~/notes/", "/mnt/x/"], "rsync-notes"),
    (["/bin/sh", "-c", "date > /tmp/stamp"], "stamp"),
    ("python3 ~/bin/report.py --all", "report"),
    ("cd ~/site && ./deploy.sh", "deploy"),
])
def test_a_job_is_named_for_what_it_does(command: str | list[str], name: str) -> None:
    assert what_it_does(command) == name


def test_mailto_becomes_notify_mail_one_address_or_a_list() -> None:
    assert mail_notify("me@example.com") == {"on": ["failure", "recovery"],
                                             "mail": "me@example.com"}
    assert mail_notify("a@x.org, root") == {"on": ["failure", "recovery"],
                                            "mail": ["a@x.org", "root"]}
    assert mail_notify('"Ops" <ops@x.org>') is None  # not one schedgen can write safely
