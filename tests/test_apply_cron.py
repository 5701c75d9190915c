"""apply / diff / uninstall against a file-backed fake crontab full of awkward foreign content."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from schedgen.commands import apply as ap
from schedgen.machine import ownership as state
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config

# Comments, env lines, odd spacing, an escaped %, indentation, bytes that are not
# UTF-8, and a last line without a newline.
FOREIGN = (b'# m h dom mon dow command\nSHELL=/bin/bash\nMAILTO="ops@example.com"\n\n'
           b'0 3 * * 1-5 echo "100%" \\% done\n   */10   *  * * *     /usr/local/bin/odd  x  \n'
           b'\t@reboot /opt/thing --flag\n# caf\xc3\xa9, latin-1 \xe9\n'
           b'5 4 * * sun last-line-without-newline')
JOBS = """
[defaults]
targets = ["cron"]

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"
description = "100% alpha"

[jobs.beta]
command = "echo beta"
schedule = "@hourly"
"""


@pytest.fixture
def cron(fake_crontab: FakeCrontab, tmp_path: Path) -> FakeCrontab:
    fake_crontab.set(FOREIGN)
    write_config(tmp_path / "jobs.toml", JOBS)
    return fake_crontab


def run(tmp_path: Path, *args: str):  # noqa: ANN201
    r = schedgen(*args, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def foreign(table: bytes | None) -> bytes:
    """The table without schedgen's block for namespace default."""
    assert table is not None
    begin = table.find(b"# BEGIN schedgen namespace=default")
    if begin < 0:
        return table
    end_line = b"# END schedgen namespace=default\n"
    end = table.index(end_line) + len(end_line)
    return table[:begin] + table[end:]


def wrappers(home: Path) -> Path:
    return home / ".local/share/schedgen/wrappers"


def test_apply_installs_block_and_keeps_foreign_bytes(cron: FakeCrontab, tmp_path: Path,
                                                      home: Path) -> None:
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    table = cron.read()
    assert table is not None and table.startswith(FOREIGN + b"\n# BEGIN schedgen namespace=default")
    assert foreign(table) == FOREIGN + b"\n"  # only the missing newline was added
    assert f"{wrappers(home)}/alpha.sh --cron".encode() in table
    assert b"# alpha: 100\\% alpha" in table  # % in a comment escaped too
    # private: a job file holds env values (and a ping URL) other users must not read
    assert (wrappers(home) / "alpha.sh").stat().st_mode & 0o777 == 0o700
    # the log dir is made by the first run (the runtime), not by apply
    assert not (home / ".local/state/schedgen/logs/alpha").exists()
    assert "4 added, 0 changed, 0 removed, 0 unchanged" in r.stdout


def test_second_apply_writes_nothing(cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    assert run(tmp_path, "apply").returncode == 0
    record = state.record_path("default")
    before = {p: p.stat().st_mtime_ns for p in [record, *wrappers(home).iterdir()]}
    table = cron.read()
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    assert "0 added, 0 changed, 0 removed, 4 unchanged" in r.stdout
    assert len(cron.writes()) == 1
    assert cron.read() == table
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert run(tmp_path, "diff").returncode == 0


def test_hand_edited_block_is_drift_and_apply_repairs_it(cron: FakeCrontab,
                                                         tmp_path: Path) -> None:
    run(tmp_path, "apply")
    good = cron.read()
    assert good is not None
    cron.set(good.replace(b"*/5 * * * *", b"*/7 * * * *"))
    d = run(tmp_path, "diff")
    assert d.returncode == 1
    assert "~ update cron crontab block: hand-edited" in d.stdout
    assert "-*/7 * * * *" in d.stdout and "+*/5 * * * *" in d.stdout
    s = run(tmp_path, "status", "--check")
    assert s.returncode == 1 and "crontab lines: hand-edited" in s.stdout
    assert run(tmp_path, "apply").returncode == 0
    assert cron.read() == good


def test_config_change_rewrites_only_the_block(cron: FakeCrontab, tmp_path: Path) -> None:
    run(tmp_path, "apply")
    table = cron.read()
    assert table is not None
    cron.set(table + b"# a line the user added after the block\n")
    write_config(tmp_path / "jobs.toml", JOBS.replace("*/5 * * * *", "10 4 * * 1-5"))
    d = run(tmp_path, "diff")
    assert d.returncode == 1 and "0 to add, 1 to change, 0 to remove, 3 unchanged" in d.stdout
    assert run(tmp_path, "apply").returncode == 0
    new = cron.read()
    assert new is not None and b"10 4 * * 1-5 " in new
    assert foreign(new) == FOREIGN + b"\n# a line the user added after the block\n"


def test_block_removed_by_crontab_r_is_restored(cron: FakeCrontab, tmp_path: Path) -> None:
    run(tmp_path, "apply")
    table = cron.read()
    cron.set(None)  # crontab -r
    d = run(tmp_path, "diff")
    assert d.returncode == 1 and "+ create cron crontab block: missing" in d.stdout
    assert run(tmp_path, "status", "--check").returncode == 1
    assert run(tmp_path, "apply").returncode == 0
    assert table is not None and cron.read() == table[table.index(b"# BEGIN"):]


def test_removed_job_leaves_an_orphan_wrapper_until_prune(cron: FakeCrontab, tmp_path: Path,
                                                          home: Path) -> None:
    run(tmp_path, "apply")
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    table = cron.read()
    assert table is not None and b"beta.sh" not in table  # the block follows the config
    assert "orphan: wrapper" in r.stdout and "apply --prune removes it" in r.stdout
    assert (wrappers(home) / "beta.sh").exists()
    assert run(tmp_path, "diff").returncode == 1  # an orphan is not in sync
    r = run(tmp_path, "apply", "--prune")
    assert r.returncode == 0 and "removed: wrapper" in r.stdout
    assert not (wrappers(home) / "beta.sh").exists()
    assert foreign(cron.read()) == FOREIGN + b"\n"
    assert run(tmp_path, "diff").returncode == 0


def test_hand_edited_orphan_is_pruned_only_with_force(cron: FakeCrontab, tmp_path: Path,
                                                      home: Path) -> None:
    run(tmp_path, "apply")
    beta = wrappers(home) / "beta.sh"
    beta.write_text(beta.read_text() + "# my tweak\n")
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    r = run(tmp_path, "apply", "--prune")
    assert r.returncode == 0 and "kept: wrapper" in r.stdout and beta.exists()
    r = run(tmp_path, "apply", "--prune", "--force")
    assert r.returncode == 0 and not beta.exists()


def test_disabled_job_is_removed_by_a_plain_apply(cron: FakeCrontab, tmp_path: Path,
                                                  home: Path) -> None:
    run(tmp_path, "apply")
    write_config(tmp_path / "jobs.toml", JOBS.replace('command = "echo beta"',
                                                       'command = "echo beta"\nenabled = false'))
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert not (wrappers(home) / "beta.sh").exists()
    table = cron.read()
    assert table is not None and b"beta" not in table and b"alpha.sh" in table
    s = run(tmp_path, "status", "--check")
    assert s.returncode == 0 and "beta  [cron]  disabled" in s.stdout


def test_disabling_every_cron_job_removes_the_block(cron: FakeCrontab, tmp_path: Path) -> None:
    run(tmp_path, "apply")
    write_config(tmp_path / "jobs.toml", JOBS.replace('targets = ["cron"]',
                                                       'targets = ["cron"]\nenabled = false'))
    assert run(tmp_path, "apply").returncode == 0
    assert cron.read() == FOREIGN + b"\n"


def test_uninstall_keeps_foreign_crontab_lines(cron: FakeCrontab, tmp_path: Path,
                                               home: Path) -> None:
    run(tmp_path, "apply")
    runs = home / ".local/state/schedgen/logs/alpha/runs/20260101T000000Z-1"
    runs.mkdir(parents=True)
    (runs / "schedgen-manifest.json").write_text("{}")
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert cron.read() == FOREIGN + b"\n"
    assert list(wrappers(home).iterdir()) == []
    assert not state.record_path("default").exists()
    assert (runs / "schedgen-manifest.json").exists()  # logs and run records stay
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0 and "nothing was installed" in r.stdout


def test_uninstall_of_a_table_that_held_only_the_block_removes_it(fake_crontab: FakeCrontab,
                                                                  tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS)
    run(tmp_path, "apply")
    assert fake_crontab.read() is not None
    assert run(tmp_path, "uninstall", "--namespace", "default").returncode == 0
    assert fake_crontab.read() is None


def test_uninstall_finds_the_block_by_its_markers_without_a_record(cron: FakeCrontab,
                                                                   tmp_path: Path) -> None:
    run(tmp_path, "apply")
    state.record_path("default").unlink()
    assert run(tmp_path, "uninstall").returncode == 0
    assert cron.read() == FOREIGN + b"\n"


@pytest.mark.parametrize("damage", [
    b"# BEGIN schedgen namespace=default -- x\n* * * * * /w.sh\n",
    b"* * * * * /w.sh\n# END schedgen namespace=default\n",
    b"# BEGIN schedgen namespace=default\n# END schedgen namespace=default\n" * 2,
])
def test_damaged_block_is_refused_and_nothing_changes(fake_crontab: FakeCrontab,
                                                      tmp_path: Path, home: Path,
                                                      damage: bytes) -> None:
    write_config(tmp_path / "jobs.toml", JOBS)
    fake_crontab.set(b"A=1\n" + damage)
    for cmd in (["apply"], ["diff"], ["uninstall"]):
        r = run(tmp_path, *cmd)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert "schedgen block for namespace 'default'" in r.stderr
        assert "nothing was changed" in r.stderr
    assert fake_crontab.read() == b"A=1\n" + damage
    assert fake_crontab.writes() == []
    assert not wrappers(home).exists()


def test_another_namespace_block_is_left_exactly_as_it_is(cron: FakeCrontab,
                                                          tmp_path: Path) -> None:
    other = (b"# BEGIN schedgen namespace=other -- hand made\n 1  1 * * * /o.sh\n"
             b"# END schedgen namespace=other\n")
    cron.set(other + FOREIGN)
    run(tmp_path, "apply")
    run(tmp_path, "uninstall")
    assert cron.read() == other + FOREIGN + b"\n"


def test_bad_config_touches_nothing(cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS.replace("*/5 * * * *", "61 * * * *"))
    r = run(tmp_path, "apply")
    assert r.returncode == 2 and "jobs.alpha.schedule" in r.stderr
    assert cron.calls() == [] and not wrappers(home).exists()


def test_crontab_write_failure_exits_3_and_the_record_follows_the_disk(
        cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    cron.fail_next_write()
    r = run(tmp_path, "apply")
    assert r.returncode == 3, r.stderr
    assert "crontab <new table> failed: crontab: simulated failure" in r.stderr
    assert "Done before the failure" in r.stderr and "created: wrapper" in r.stderr
    assert "Put back as it was:\n" in r.stderr and "  create runtime" in r.stderr
    assert "Not done:\n  create cron crontab block" in r.stderr
    # Left as it was (docs/design.md, "Exit codes": 3): nothing installed, nothing recorded.
    assert cron.read() == FOREIGN
    assert not any(wrappers(home).iterdir())
    assert not state.record_path("default").exists() or not json.loads(
        state.record_path("default").read_text())["artifacts"]
    assert run(tmp_path, "apply").returncode == 0  # the next apply does it all
    assert foreign(cron.read()) == FOREIGN + b"\n"


def test_crontab_l_failing_is_a_system_error_for_apply_and_unknown_for_status(
        fake_bin: Path, tmp_path: Path) -> None:
    from tests.helpers import write_executable

    write_executable(fake_bin / "crontab", "#!/bin/sh\necho 'crontab: cannot open spool' >&2\n"
                                           "exit 1\n")
    write_config(tmp_path / "jobs.toml", JOBS)
    r = run(tmp_path, "apply")
    assert r.returncode == 3, r.stderr
    assert "crontab -l failed: crontab: cannot open spool" in r.stderr
    # never applied: the job files are seen missing (drift, exit 1); the crontab is unknown
    for cmd, code in (("status", 4), ("check", 1)):
        r = run(tmp_path, cmd)
        assert r.returncode == code, (cmd, r.stdout, r.stderr)
        assert "unknown: crontab -l failed: crontab: cannot open spool. The crontab was not " \
               "read" in r.stdout
        assert "Run `crontab -l` to see the error" in r.stdout
        assert "crontab lines" not in r.stdout  # the job files are seen missing: that is drift
    r = run(tmp_path, "diff")  # diff still shows the block as it would be installed
    assert r.returncode == 1 and "unknown: crontab -l failed" in r.stdout


def test_dry_run_walks_the_apply_path_and_writes_nothing(cron: FakeCrontab, tmp_path: Path,
                                                         home: Path) -> None:
    dry = run(tmp_path, "apply", "--dry-run")
    assert dry.returncode == 0
    assert cron.writes() == [] and not (home / ".local").exists()
    real = run(tmp_path, "apply")
    strip = lambda out: [line.replace("would ", "") for line in out.splitlines()[:-1]]  # noqa: E731
    past = {"create:": "created:", "update:": "updated:", "save:": "saved:"}
    assert [past.get(s.split(" ")[0], s.split(" ")[0]) + s[s.index(" "):]
            for s in strip(dry.stdout)] == real.stdout.splitlines()[:-1]


def test_apply_in_process_reports_each_step(cron: FakeCrontab, tmp_path: Path) -> None:
    said: list[str] = []
    out = ap.apply(tmp_path / "jobs.toml", say=said.append)
    assert out.done == tuple(said)
    assert said[-1].startswith("created: crontab block namespace=default (2 jobs: alpha, beta)")


def test_config_from_environment_variable(cron: FakeCrontab, tmp_path: Path) -> None:
    r = schedgen("diff", cwd=Path("/"), env={"SCHEDGEN_CONFIG": str(tmp_path / "jobs.toml")})
    assert r.returncode == 1 and os.fspath(tmp_path) in r.stdout


def _racing_crontab(fake: FakeCrontab, bin_dir: Path, from_read: int, to_read: int) -> None:
    """A crontab that someone else edits (a line appended) before reads from..to of `-l`."""
    os.replace(bin_dir / "crontab", bin_dir / "crontab.real")
    script = f"""#!/bin/sh
if [ "$1" = -l ]; then
  n=$(( $(cat "$FAKE_CRONTAB_FILE.reads" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$FAKE_CRONTAB_FILE.reads"
  if [ "$n" -ge {from_read} ] && [ "$n" -le {to_read} ]; then
    echo "# edit $n by someone else" >> "$FAKE_CRONTAB_FILE"
  fi
fi
exec "{bin_dir}/crontab.real" "$@"
"""
    (bin_dir / "crontab").write_text(script)
    (bin_dir / "crontab").chmod(0o755)


def test_crontab_edited_during_apply_is_reread_and_kept(cron: FakeCrontab, tmp_path: Path,
                                                        fake_bin: Path) -> None:
    # read 1: the plan; read 2 (just before writing) sees an edit: apply starts over.
    _racing_crontab(cron, fake_bin, 2, 2)
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    table = cron.read()
    assert table is not None and b"# edit 2 by someone else\n" in table  # their edit survived
    assert b"# BEGIN schedgen namespace=default" in table
    assert len(cron.writes()) == 1


def test_apply_reads_the_crontab_three_times(cron: FakeCrontab, tmp_path: Path,
                                             fake_bin: Path) -> None:
    # The plan's read, one just before writing (no edit since: write), one to see that
    # what crontab(1) installed is what was written. Each call is a process start.
    _racing_crontab(cron, fake_bin, 1 << 30, 1 << 30)
    assert run(tmp_path, "apply").returncode == 0
    assert Path(f"{cron.file}.reads").read_text().strip() == "3"
    assert len(cron.writes()) == 1


def test_crontab_that_keeps_changing_is_not_written_and_exit_3_names_the_race(
        cron: FakeCrontab, tmp_path: Path, fake_bin: Path) -> None:
    _racing_crontab(cron, fake_bin, 2, 100)
    r = run(tmp_path, "apply")
    assert r.returncode == 3
    assert "the crontab kept changing while schedgen was writing it" in r.stderr
    assert cron.writes() == []
    assert b"schedgen" not in (cron.read() or b"")
    assert schedgen("diff", cwd=tmp_path).returncode == 1  # the record says nothing installed


def test_two_namespaces_each_change_their_own_block(fake_crontab: FakeCrontab,
                                                    tmp_path: Path) -> None:
    # Every namespace records its block under one key: the other namespace's record had
    # been taken for the owner of this one's block, and no change could be applied.
    for ns in ("a", "b"):
        (tmp_path / ns).mkdir()
        write_config(tmp_path / ns / "jobs.toml",
                     f'[defaults]\nnamespace = "{ns}"\ntargets = ["cron"]\n'
                     f'[jobs.{ns}-job]\ncommand = ["/bin/true"]\nschedule = "0 1 * * *"\n')
        assert run(tmp_path / ns, "apply").returncode == 0
    for ns in ("a", "b"):
        cfg = tmp_path / ns / "jobs.toml"
        cfg.write_text(cfg.read_text().replace("0 1 * * *", "0 2 * * *"))
        r = run(tmp_path / ns, "apply")
        assert r.returncode == 0, r.stdout + r.stderr
    table = fake_crontab.read()
    assert table is not None
    assert table.count(b"0 2 * * *") == 2 and b"0 1 * * *" not in table
    for ns in ("a", "b"):
        assert run(tmp_path / ns, "diff").returncode == 0


def test_a_script_that_only_mentions_the_marker_is_the_users(fake_crontab: FakeCrontab,
                                                             tmp_path: Path) -> None:
    # Ownership had been "the marker anywhere in the text": the user's own script where a
    # job file goes was overwritten by the next apply, then deleted by uninstall.
    bindir = tmp_path / "mybin"
    bindir.mkdir()
    mine = b"#!/bin/sh\n# my own backup script -- NOT schedgen-managed, keep it\nrsync -a ~/ /mnt/b/\n"
    (bindir / "backup.sh").write_bytes(mine)
    write_config(tmp_path / "jobs.toml",
                 f'[defaults]\ntargets = ["cron"]\nwrapper_dir = "{bindir}"\n'
                 '[jobs.backup]\ncommand = ["/bin/true"]\nschedule = "0 1 * * *"\n')
    for _ in range(2):
        r = run(tmp_path, "apply")
        assert r.returncode == 2 and "not written by schedgen" in r.stdout + r.stderr
    assert (bindir / "backup.sh").read_bytes() == mine
    assert run(tmp_path, "uninstall").returncode == 0
    assert (bindir / "backup.sh").read_bytes() == mine


def test_a_failed_crontab_write_leaves_the_installed_job_files_as_they_were(
        cron: FakeCrontab, tmp_path: Path, home: Path) -> None:
    # They had been updated while the crontab kept the old schedule: the new command ran
    # on the old schedule until the next apply.
    assert run(tmp_path, "apply").returncode == 0
    files = {f: f.read_bytes() for f in wrappers(home).iterdir()}
    table, record = cron.read(), state.record_path("default").read_bytes()
    write_config(tmp_path / "jobs.toml", JOBS.replace('"alpha"]', '"PRODUCTION"]')
                 .replace("*/5 * * * *", "30 9 * * 1-5"))
    cron.fail_next_write()
    r = run(tmp_path, "apply")
    assert r.returncode == 3, r.stderr
    assert "Put back as it was:\n  update wrapper" in r.stderr
    assert {f: f.read_bytes() for f in wrappers(home).iterdir()} == files
    assert cron.read() == table and state.record_path("default").read_bytes() == record
    assert run(tmp_path, "diff").returncode == 1     # still to do


def test_uninstall_says_which_files_were_hand_edited(cron: FakeCrontab, tmp_path: Path,
                                                     home: Path) -> None:
    assert run(tmp_path, "apply").returncode == 0
    job = wrappers(home) / "alpha.sh"
    job.write_text(job.read_text() + "# my change\n")
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0
    assert f"removed: wrapper {job} (hand-edited since schedgen installed it)" in r.stdout


def _crontab_made_at_read(fake: FakeCrontab, bin_dir: Path, n: int, content: str) -> None:
    """No crontab at first; someone makes one (with `content`) just before read n of `-l`."""
    fake.set(None)
    os.replace(bin_dir / "crontab", bin_dir / "crontab.real")
    script = f"""#!/bin/sh
if [ "$1" = -l ]; then
  n=$(( $(cat "$FAKE_CRONTAB_FILE.reads" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$FAKE_CRONTAB_FILE.reads"
  [ "$n" -ne {n} ] || printf '{content}' > "$FAKE_CRONTAB_FILE"
fi
exec "{bin_dir}/crontab.real" "$@"
"""
    (bin_dir / "crontab").write_text(script)
    (bin_dir / "crontab").chmod(0o755)


@pytest.mark.parametrize("content", ["", "# mine\\n"])
def test_a_crontab_made_after_the_plan_is_what_the_first_write_keeps(
        cron: FakeCrontab, tmp_path: Path, fake_bin: Path, home: Path, content: str) -> None:
    # None when the plan read it, one (even empty) just before the write: the copy kept
    # before schedgen's first write is that one, and `crontab -r` does not put it back.
    _crontab_made_at_read(cron, fake_bin, 2, content)
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    kept = home / ".local/state/schedgen/crontab-before-schedgen"
    assert kept.read_text() == content.replace("\\n", "\n")
    assert f"`crontab {kept}` puts it back" in r.stdout and "you had no crontab" not in r.stdout
    table = cron.read()
    assert table is not None and table.startswith(content.replace("\\n", "\n").encode())


def test_lines_adopted_in_a_crontab_edited_after_the_plan_are_named_as_written(
        fake_crontab: FakeCrontab, tmp_path: Path, fake_bin: Path) -> None:
    # Someone adds a line on top between the plan and the write: the adopted line is
    # turned off where it now is, and the output names the line number it now has.
    adopted = "*/5 * * * * ~/bin/sync-mail.sh"
    fake_crontab.set(f"# mine\n{adopted}\n")
    write_config(tmp_path / "jobs.toml", '[jobs.sync]\ncommand = "sync-mail"\n'
                 f'schedule = "*/5 * * * *"\ntargets = ["cron"]\nadopts = "cron: {adopted}"\n')
    os.replace(fake_bin / "crontab", fake_bin / "crontab.real")
    (fake_bin / "crontab").write_text(f"""#!/bin/sh
if [ "$1" = -l ]; then
  n=$(( $(cat "$FAKE_CRONTAB_FILE.reads" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$FAKE_CRONTAB_FILE.reads"
  if [ "$n" -eq 2 ]; then
    {{ echo "MAILTO=me"; cat "$FAKE_CRONTAB_FILE"; }} > "$FAKE_CRONTAB_FILE.x"
    mv "$FAKE_CRONTAB_FILE.x" "$FAKE_CRONTAB_FILE"
  fi
fi
exec "{fake_bin}/crontab.real" "$@"
""")
    (fake_bin / "crontab").chmod(0o755)
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    table = (fake_crontab.read() or b"").decode()
    assert table.splitlines()[2] == f"#schedgen-adopted ns=default job=sync: {adopted}"
    assert f"turned off: your crontab line 3 (job sync): {adopted}" in r.stdout, r.stdout
