"""Crontabs as people have them: system crontabs with a user field, other shells, stock
headers and comment art. Each imported job's rendered job file must exec what cron ran
(`$SHELL -c COMMAND`), and the user field is never the program."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.commands.import_jobs import run_import
from schedgen.config.load import loads
from schedgen.config.model import Config, Job
from schedgen.importers.cron_system import current_user, is_system_path
from schedgen.importers.document import ImportResult
from schedgen.targets.cron.importer import LOCK_NOTE, parse_crontab
from tests.helpers import schedgen
from tests.import_oracle import job_argv, same_as_cron

ME = current_user()
OTHER = "someone-else" if ME != "someone-else" else "nobody"

# Debian's stock /etc/crontab header, then lines for this user and for another one.
SYSTEM = f"""\
# /etc/crontab: system-wide crontab
# and files in /etc/cron.d. These files also have username fields,
# that none of the other crontabs do.

SHELL=/bin/sh
PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin

# m h dom mon dow user\tcommand
17 *\t* * *\t{ME}    cd / && run-parts --report /etc/cron.hourly
25 6\t* * *\t{OTHER}\ttest -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily )
*/5 * * * * {ME} /usr/bin/python3 /opt/loc/logger.py
0 1 * * * {ME} echo "a # b" > /tmp/hash
@reboot {ME} /usr/local/bin/warm
* * * * * lonely
"""


def do_import(tmp_path: Path, text: str, **kw) -> tuple[ImportResult, Config, dict[int, Job]]:
    table = tmp_path / "crontab.txt"
    table.write_text(text)
    result = run_import("cron", table, None, False, **kw)
    config = loads(result.text, tmp_path / "jobs.toml")
    by_line = {int(src.rsplit(" ", 1)[1]): config.job(name) for name, src in result.origins}
    return result, config, by_line  # type: ignore[return-value]


def notes_at(result: ImportResult, line: int) -> list[str]:
    return [n.message for n in result.notes if n.source == f"crontab.txt line {line}"]


def test_system_crontab_found_by_its_header_user_field_never_the_program(tmp_path: Path) -> None:
    result, config, by_line = do_import(tmp_path, SYSTEM)
    assert sorted(by_line) == [9, 10, 11, 12, 13]
    home = str(Path.home())
    expected = {9: "cd / && run-parts --report /etc/cron.hourly",
                11: "/usr/bin/python3 /opt/loc/logger.py",
                12: 'echo "a # b" > /tmp/hash',  # python-crontab alone would cut it at " #"
                13: "/usr/local/bin/warm"}
    for line, command in expected.items():
        argv = job_argv(by_line[line], config)
        assert same_as_cron("/bin/sh", command, argv, home), (line, argv)
        assert ME not in argv[0], argv
        # a system crontab's line is the machine's job, run as its user field's account
        assert (by_line[line].scope, by_line[line].user) == ("system", ME)
    assert by_line[9].command == ("/bin/sh", "-c", expected[9])
    assert by_line[11].command == ("/usr/bin/python3", "/opt/loc/logger.py")
    assert (by_line[10].scope, by_line[10].user) == ("system", OTHER)
    assert notes_at(result, 14) == [
        "skipped: a system crontab line is: time fields, user, command; this one has only "
        "'lonely' after the times"]
    assert any("its header comment says so" in n.message for n in result.notes)
    assert f"<- crontab.txt line 9 (user {ME})" in result.text
    # the column header is not a description, and nothing is "commented out"
    assert all(j.description == "" for j in config.jobs)
    assert not any("commented-out" in n.message for n in result.notes)


def test_system_flag_reads_a_file_without_header(tmp_path: Path) -> None:
    text = f"*/5 * * * * {ME} /usr/bin/python /home/u/aws/logger.py > /dev/null\n"
    result, config, by_line = do_import(tmp_path, text, system=True)
    assert by_line[1].command == ("/bin/sh", "-c", "/usr/bin/python /home/u/aws/logger.py > "
                                                   "/dev/null")


def test_a_user_name_before_the_command_in_a_user_crontab_is_skipped_with_a_hint(
        tmp_path: Path) -> None:
    text = "*/5 * * * * root /usr/bin/python /home/u/logger.py\n0 * * * * /usr/bin/true\n"
    result, config, by_line = do_import(tmp_path, text)
    assert list(by_line) == [2]
    assert notes_at(result, 1) == [
        "skipped: 'root' before the command looks like the user field of a system crontab "
        "(/etc/crontab, /etc/cron.d), and is no program on the job's PATH; if this is one, "
        "import it again with --system"]


@pytest.mark.parametrize(("path", "system"), [
    ("/etc/crontab", True), ("/etc/cron.d/certbot", True), ("/etc/cron.d/sub/x", False),
    ("/etc/cron.daily/logrotate", False), ("/home/me/crontab", False)])
def test_system_crontab_paths(path: str, system: bool) -> None:
    assert is_system_path(Path(path)) is system


@pytest.mark.parametrize(("name", "ignored"), [("certbot", False), ("php_sessions-2", False),
                                               ("php.dpkg-old", True), ("backup~", True)])
def test_cron_d_names_debian_skips(name: str, ignored: bool) -> None:
    from schedgen.importers.cron_system import ignored_by_debian

    assert ignored_by_debian(Path("/etc/cron.d") / name) is ignored
    assert not ignored_by_debian(Path("/etc") / name)


@pytest.mark.parametrize(("shell", "command", "expected"), [
    ("/opt/homebrew/bin/bash", "echo $((1+1)) &> /tmp/x",
     ["/opt/homebrew/bin/bash", "-c", "echo $((1+1)) &> /tmp/x"]),
    ("/bin/zsh", "/bin/zsh /home/jam/bin/wal-set", ["/bin/zsh", "/home/jam/bin/wal-set"]),
    ("/bin/zsh", "print -P %%F", None),  # % unescaped: stdin, skipped
    ("/bin/bash", "brew update && brew upgrade", "brew update && brew upgrade"),
    ("/usr/bin/python3", "/usr/bin/true", ["/usr/bin/python3", "-c", "/usr/bin/true"]),
])
def test_every_shell_keeps_its_meaning(tmp_path: Path, shell: str, command: str,
                                       expected) -> None:
    found, notes = parse_crontab(f"SHELL={shell}\n0 * * * * {command}\n", "t")
    if expected is None:
        assert not found and "unescaped %" in notes[-1].message
        return
    assert found[0].keys["command"] == expected
    assert not any("skipped" in n.message for n in notes)


def test_descriptions_only_from_prose_directly_above(tmp_path: Path) -> None:
    text = """\
# Edit this file to introduce tasks to be run by cron.
#
# For example, you can run a backup of all your user accounts
# at 5 a.m every week with:
# 0 5 * * 1 tar -zcf /var/backups/home.tgz /home/
#
# m h  dom mon dow   command
0 1 * * * /usr/bin/first
# * * * * *  command to execute
# *     *       *       *       *       command                         |
# │ │ │ │ └───── day of week (0 - 6)
# │ └──────────── hour (0 - 23)
0 2 * * * /usr/bin/second
#=====================================================================#
# Upgrade vim plugins once a week
0 3 * * 0 /usr/bin/third
# Nightly backup

0 4 * * * /usr/bin/fourth
#SHELL=/bin/bash
0 5 * * * /usr/bin/fifth
# 0 6 * * * /usr/bin/old-job
"""
    result, config, by_line = do_import(tmp_path, text)
    assert {n: j.description for n, j in by_line.items()} == {
        8: "", 13: "", 16: "Upgrade vim plugins once a week", 19: "", 21: ""}
    # the stock examples are headers; a real commented-out job is still reported
    assert [n for n in result.notes if "commented-out" in n.message] == [
        n for n in result.notes if n.source == "crontab.txt line 22"]
    assert len(notes_at(result, 22)) == 1


def test_system_flag_without_file_reads_etc_crontab(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.importers import cron_system as import_cron_system

    table = tmp_path / "crontab"
    table.write_text(f"0 4 * * * {ME} /usr/bin/true\n")
    monkeypatch.setattr(import_cron_system, "SYSTEM_CRONTAB", table)
    result = run_import("cron", None, None, False, system=True)
    assert result.origins == (("true", "crontab line 1"),)


def test_mailto_empty_is_silent_and_mailto_set_is_reported(tmp_path: Path) -> None:
    quiet, _, _ = do_import(tmp_path, 'MAILTO=""\n0 * * * * /usr/bin/true\n')
    assert not any("MAILTO" in n.message for n in quiet.notes)
    loud, _, _ = do_import(tmp_path, "MAILTO=me@example.com\n0 * * * * /usr/bin/true\n")
    assert any("MAILTO=me@example.com: the jobs below it get a [notify]" in n.message
               for n in loud.notes)
    assert loud.text.count('mail = "me@example.com"') == 1 and "command" not in loud.text.split(
        "[jobs.true.notify]")[1]


def test_default_lock_is_said_and_no_lock_writes_lock_false(tmp_path: Path) -> None:
    locked, config, _ = do_import(tmp_path, "0 * * * * /usr/bin/true\n")
    assert [n.message for n in locked.notes] == [LOCK_NOTE]
    assert config.jobs[0].lock is not None
    unlocked, config, _ = do_import(tmp_path, "0 * * * * /usr/bin/true\n", lock=False)
    assert unlocked.notes == ()
    assert "lock = false" in unlocked.text and config.jobs[0].lock is None


def test_cli_system_and_no_lock(tmp_path: Path) -> None:
    table = tmp_path / "cron.d-style"
    table.write_text(f"0 * * * * {ME} /usr/bin/true\n")
    out = schedgen("import", "--from", "cron", "--file", str(table), "--system", "--no-lock",
                   cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    config = loads(out.stdout, tmp_path / "jobs.toml")
    assert config.jobs[0].command == ("/usr/bin/true",) and config.jobs[0].lock is None
    assert (config.jobs[0].scope, config.jobs[0].user) == ("system", ME)
    assert "default lock" not in out.stderr
    bad = schedgen("import", "--from", "launchd", "--system", cwd=tmp_path)
    assert bad.returncode == 2 and "--system is for --from cron" in bad.stderr


def test_a_placeholder_in_a_command_is_skipped_not_replaced() -> None:
    found, notes = parse_crontab("0 * * * * echo {job} {}\n0 1 * * * find . -exec rm {} +\n", "t")
    assert [f.source for f in found] == ["t line 2"]  # {} is no placeholder
    assert notes[0].message == ("skipped: the command holds {job}, which schedgen would replace "
                                "at run time")


@pytest.mark.parametrize(("line", "command"), [
    ("@daily {me} echo a#b", "echo a#b"),  # python-crontab does not read this one at all
    ("0 0 * * * {me} echo a#b", "echo a#b"),
    ("0 0 * * * {me} echo 50% off", None),
])
def test_system_lines_python_crontab_reads_short(line: str, command: str | None) -> None:
    found, notes = parse_crontab(line.format(me=ME) + "\n", "t", system=True)
    if command is None:  # skipped, and not also said to be imported
        assert not found and [n.message[:29] for n in notes] == ["skipped: an unescaped % sends"]
    else:
        assert found[0].keys["command"] == ["/bin/sh", "-c", command]
        assert notes == [] and (found[0].keys["scope"], found[0].keys["user"]) == ("system", ME)
