"""`hosts` selectors: what they mean, how they are refused, and what each command says of
the jobs they leave out (the apply/diff of three hosts on every target: conformance)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.config.select import here, matches, this_host, unmatched
from schedgen.errors import ConfigError
from tests.helpers import schedgen, write_config


def job(name: str, hosts: str | None = None) -> str:
    line = f"hosts = {hosts}\n" if hosts is not None else ""
    return f'[jobs.{name}]\ncommand = ["/bin/true"]\nschedule = "@daily"\n{line}\n'


def cfg(text: str, defaults: str = 'targets = ["cron"]\n'):  # type: ignore[no-untyped-def]
    return loads(f"[defaults]\n{defaults}\n{text}", Path("jobs.toml"))


@pytest.mark.parametrize(("patterns", "host", "on"), [
    (("mac-mini",), "mac-mini", True),
    (("mac-mini",), "Mac-Mini", True),  # host names have no case
    (("MAC-MINI",), "mac-mini.local", True),  # the short name: up to the first dot
    (("mac-mini",), "mac-mini-2", False),  # a name is the whole name
    (("web-*",), "web-12", True),
    (("web-?",), "web-12", False),
    (("db[0-9][0-9]",), "db07", True),
    (("web-*", "!web-3"), "web-3", False),
    (("!web-3", "web-*"), "web-3", False),  # order does not matter: an exclusion wins
    (("!web-3", "web-*"), "web-4", True),
    (("!laptop",), "anything", True),  # exclusions only: every host but those
    (("!laptop",), "LAPTOP", False),
    (("!lap*", "!desk*"), "desk-1", False),
])
def test_matching(patterns: tuple[str, ...], host: str, on: bool) -> None:
    assert matches(patterns, host) is on


@pytest.mark.parametrize(("value", "fragment"), [
    ("[]", "an empty list selects no host"),
    ('"mac-mini"', "expected a list of host names or globs, got a string"),
    ('["web-1.example.com"]', "write 'web-1'"),
    ('["web 1"]', "'web 1' is no host name or glob"),
    ('["!"]', "'!' is no host name or glob"),
    ('["a!b"]', "'a!b' is no host name or glob"),
    ("[1]", "expected a string"),
])
def test_a_bad_hosts_value_names_the_job_and_field(value: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as exc:
        cfg(job("ok") + job("a", value))
    found = [(p.where, p.message, p.line) for p in exc.value.problems]
    assert [w for w, _, _ in found] == ["jobs.a.hosts"], found
    assert fragment in found[0][1], found
    text = f'[defaults]\ntargets = ["cron"]\n\n{job("ok") + job("a", value)}'
    assert found[0][2] == text.splitlines().index(f"hosts = {value}") + 1, found


def test_defaults_give_hosts_to_every_job_and_a_job_replaces_them() -> None:
    c = cfg(job("a") + job("b", '["web-*"]'), 'hosts = ["mac-mini"]\n')
    assert {j.name: j.hosts for j in c.jobs} == {"a": ("mac-mini",), "b": ("web-*",)}
    assert [j.name for j in here(c, "mac-mini").jobs] == ["a"]
    assert [(s.job, s.field) for s in here(c, "mac-mini").skipped] == [("b", "hosts")]
    assert [j.name for j in here(c, "web-1").jobs] == ["b"]


def test_a_plain_load_keeps_every_job_and_here_names_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    c = cfg(job("a", '["mac-mini"]') + job("b"))
    assert [j.name for j in c.jobs] == ["a", "b"] and c.host is None and c.skipped == ()
    monkeypatch.setenv("SCHEDGEN_HOST", "Web-1.Example.com")
    assert this_host() == "web-1"
    h = here(c)
    assert h.host == "web-1" and [j.name for j in h.jobs] == ["b"]
    assert h.skipped[0].why == 'hosts = ["mac-mini"] does not match host web-1'


def test_validate_warns_of_a_likely_typo_and_not_of_a_fleet() -> None:
    c = cfg(job("backup", '["mac-mini"]') + job("sync", '["mac-mini", "web-1"]')
            + job("typo", '["mac-mnii"]') + job("w2", '["web-2"]') + job("db", '["db-1"]')
            + job("glob", '["nas-*"]') + job("most", '["!web-1"]') + job("all"))
    found = dict(unmatched(c))
    assert set(found) == {"jobs.typo.hosts", "jobs.glob.hosts"}, found
    assert "did you mean 'mac-mini' (named by backup, sync)" in found["jobs.typo.hosts"]
    assert "nas-*" in found["jobs.glob.hosts"] and "check the pattern" in found["jobs.glob.hosts"]


def test_validate_is_quiet_for_one_machines_file() -> None:
    assert unmatched(cfg(job("a", '["mac-mini"]') + job("b", '["mac-*"]'))) == []
    assert unmatched(cfg(job("a", '["nas-*"]') + job("b"))) == []


def test_validate_cli_prints_warnings_and_exits_0(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", job("backup", '["mac-mini"]') + job("t", '["mac-mni"]'))
    r = schedgen("validate", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "warning: jobs.t.hosts: [\"mac-mni\"] matches no host named elsewhere" in r.stdout
    r = schedgen("validate", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert doc["valid"] is True
    assert {w["where"] for w in doc["warnings"]} == {"jobs.t.hosts", "jobs.backup.hosts"}


FLEET = job("backup", '["mac-mini"]') + job("web", '["web-*"]') + job("all")


def test_render_for_another_host_writes_its_jobs_and_names_the_others(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", '[defaults]\ntargets = ["cron"]\n' + FLEET)
    r = schedgen("render", "--host", "web-1", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "wrappers").glob("*.sh")) == ["all.sh", "web.sh"]
    assert 'skipped: jobs.backup: hosts = ["mac-mini"] does not match host web-1' in r.stderr
    write_config(tmp_path / "jobs.toml", '[defaults]\ntargets = ["cron"]\n'
                 + job("backup", '["mac-mini"]'))
    r = schedgen("render", "--host", "web-1", "--out", str(tmp_path / "none"), cwd=tmp_path)
    assert r.returncode == 2 and "nothing to render for host web-1" in r.stderr, r.stderr
    assert not (tmp_path / "none").exists()


def test_next_for_another_host(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", FLEET)
    r = schedgen("next", "--host", "web-1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)) == ["web", "all"]
    r = schedgen("next", "backup", "--host", "web-1", cwd=tmp_path)
    assert r.returncode == 2 and "job backup is not for host web-1" in r.stderr, r.stderr


def test_status_for_another_host_says_what_can_be_known(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDGEN_HOST", "laptop")
    write_config(tmp_path / "jobs.toml", '[defaults]\ntargets = ["cron"]\n' + FLEET)
    r = schedgen("status", "--host", "web-1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # the one shape diff --json gives too
    assert doc["host"]["name"] == "web-1" and doc["host"]["this_machine"] is False
    assert doc["host"]["jobs"] == ["web", "all"]
    assert [(j["job"], j["installed"], j["last_run"]) for j in doc["jobs"]] == [
        ("web", None, None), ("all", None, None)]
    assert all(j["next_run"] for j in doc["jobs"])
    assert [s["job"] for s in doc["host"]["skipped"]] == ["backup"]
    text = schedgen("status", "--host", "web-1", cwd=tmp_path).stdout
    assert "not known here" in text and "on another host" in text and "last run" not in text
    r = schedgen("status", "--host", "web-1", "--check", cwd=tmp_path)
    assert r.returncode == 2 and "run `schedgen status --check` on web-1" in r.stderr


def test_a_bad_host_name_is_a_usage_error(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", FLEET)
    r = schedgen("next", "--host", "web 1", cwd=tmp_path)
    assert r.returncode == 2 and "host name 'web 1'" in r.stderr, r.stderr


def test_import_adds_no_hosts(tmp_path: Path) -> None:
    (tmp_path / "tab").write_text("17 3 * * * /usr/bin/true backup\n")
    r = schedgen("import", "--from", "cron", "--file", str(tmp_path / "tab"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "[jobs." in r.stdout and "hosts =" not in r.stdout


def test_check_and_status_here_ignore_the_jobs_of_other_hosts(
        tmp_path: Path, fake_crontab: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDGEN_HOST", "web-1")
    write_config(tmp_path / "jobs.toml", '[defaults]\ntargets = ["cron"]\n' + FLEET)
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "backup" not in r.stdout
    r = schedgen("check", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr  # backup is not "missing" here
    r = schedgen("status", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert doc["drift"] is False and doc["host"]["this_machine"] is True
    assert doc["host"] == json.loads(schedgen("diff", "--json", cwd=tmp_path).stdout)["host"]
    assert [j["job"] for j in doc["jobs"]] == ["web", "all"]
    assert all(j["installed"] for j in doc["jobs"])
    assert [s["job"] for s in doc["host"]["skipped"]] == ["backup"]


def _as_machine(nodename: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """schedgen run on a machine whose kernel host name is ``nodename`` (a UTS namespace
    of its own: the real uname, not the SCHEDGEN_HOST seam)."""
    code = ("import os, socket, sys; socket.sethostname(sys.argv[1].encode()); "
            "os.execv(sys.executable, [sys.executable, '-m', 'schedgen', *sys.argv[2:]])")
    env = {k: v for k, v in os.environ.items() if k != "SCHEDGEN_HOST"}
    return subprocess.run(["unshare", "--uts", sys.executable, "-c", code, nodename, *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


needs_uts = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None
    or subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0,
    reason="needs root and unshare for a host name of its own")


@needs_uts
@pytest.mark.parametrize("nodename", ["(none)", "Büro PC", "my_box"])
def test_a_machine_with_an_odd_name_runs_a_file_without_hosts(tmp_path: Path,
                                                              nodename: str) -> None:
    write_config(tmp_path / "jobs.toml", job("a"))
    r = _as_machine(nodename, "next", "-n", "1", cwd=tmp_path)
    assert r.returncode == 0 and "a" in r.stdout, r.stderr


@needs_uts
def test_a_machine_whose_name_hosts_cannot_match_is_told_of_the_seam(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", FLEET)
    r = _as_machine("(none)", "next", cwd=tmp_path)
    assert r.returncode == 2 and "(none)" in r.stderr and "SCHEDGEN_HOST" in r.stderr, r.stderr


@pytest.mark.parametrize("hosts", ['["!*"]', '["web-1", "!*"]', '["!**"]'])
def test_validate_warns_of_a_job_that_excludes_every_host(hosts: str) -> None:
    # `hosts = []` is refused for running nowhere; "!*" says the same and is warned of.
    c = cfg(job("gone", hosts) + job("b", '["web-1"]'))
    found = dict(unmatched(c))
    assert "excludes every host" in found.get("jobs.gone.hosts", ""), found
    assert [j.name for j in here(c, "web-1").jobs] == ["b"]
    assert unmatched(cfg(job("a", '["!web-*"]'))) == []
