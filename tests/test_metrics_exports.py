"""A job that no longer runs here leaves no metrics file in metrics_dir: node_exporter
would export its last values for ever (plan/metrics_exports.py). Its log folder stays."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.fakes import FakeCrontab, FakeLaunchctl
from tests.helpers import schedgen, write_config

JOBS = """\
[defaults]
targets = ["cron"]

[jobs.m]
command = "true"
schedule = "@hourly"
metrics_dir = "{metrics}"
{more}
[jobs.other]
command = "true"
schedule = "@daily"
"""


def config(tmp_path: Path, metrics: Path, more: str = "") -> Path:
    return write_config(tmp_path / "jobs.toml", JOBS.format(metrics=metrics, more=more))


def ok(tmp_path: Path, *args: str) -> str:
    r = schedgen(*args, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def installed_and_run(tmp_path: Path, metrics: Path, more: str = "") -> Path:
    config(tmp_path, metrics, more)
    ok(tmp_path, "apply")
    ok(tmp_path, "run", "m")  # the real wrapper writes the file
    prom = metrics / "schedgen_default_m.prom"
    assert 'job="m"' in prom.read_text()
    return prom


def test_a_disabled_jobs_file_goes_and_its_logs_stay(fake_crontab: FakeCrontab,
                                                     tmp_path: Path, home: Path) -> None:
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    config(tmp_path, metrics, "enabled = false\n")
    out = ok(tmp_path, "apply")
    assert f"removed: metrics file {prom} (job m no longer writes it)" in out
    assert not prom.exists() and metrics.is_dir()
    assert list((home / ".local/state/schedgen/logs/m/runs").iterdir())  # its runs stay
    assert "metrics file" not in ok(tmp_path, "apply")  # once


def test_uninstall_takes_it_out(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    prom = installed_and_run(tmp_path, tmp_path / "node-exporter")
    out = ok(tmp_path, "uninstall")
    assert f"removed: metrics file {prom}" in out and not prom.exists()


def test_a_moved_metrics_dir_leaves_nothing_in_the_old_one(fake_crontab: FakeCrontab,
                                                           tmp_path: Path) -> None:
    prom = installed_and_run(tmp_path, tmp_path / "old")
    config(tmp_path, tmp_path / "new")
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply")
    assert not prom.exists()
    ok(tmp_path, "run", "m")
    assert 'job="m"' in (tmp_path / "new" / "schedgen_default_m.prom").read_text()


def test_a_file_schedgen_did_not_write_stays(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    prom.write_text('my_own_series{namespace="default",job="someone-else"} 1\n')
    empty = metrics / "schedgen_default_other.prom"  # no series: whose it is is unknown
    empty.touch()
    out = ok(tmp_path, "uninstall")
    assert "metrics file" not in out
    assert prom.exists() and empty.exists()


def test_a_job_still_installed_keeps_its_file(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    # Removed from jobs.toml, its job file stays an orphan until --prune: so does its file.
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.m]")[0]
                 + '[jobs.other]\ncommand = "true"\nschedule = "@daily"\n')
    assert "metrics file" not in ok(tmp_path, "apply") and prom.exists()
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply", "--prune")
    assert not prom.exists()


def test_a_system_jobs_link_goes_only_if_it_points_at_its_log_folder(tmp_path: Path) -> None:
    from schedgen.plan import metrics_exports

    metrics, logs = tmp_path / "node-exporter", tmp_path / "logs"
    metrics.mkdir()
    kept = {"metrics_dir": str(metrics), "scope": "system", "log_root": str(logs)}
    for job, target in (("a", logs / "a" / "schedgen_sys_a.prom"),
                        ("b", tmp_path / "elsewhere.prom")):
        (metrics / f"schedgen_sys_{job}.prom").symlink_to(target)
    done: list[str] = []
    metrics_exports.remove("sys", {"a": kept, "b": kept}, {}, lambda v, w: done.append(w),
                           done.append)
    assert done == [f"metrics file {metrics}/schedgen_sys_a.prom (job a no longer writes it)"]
    assert [p.name for p in metrics.iterdir()] == ["schedgen_sys_b.prom"]


def test_settings_kept_before_jobs_had_a_scope_do_not_take_a_running_jobs_file(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    # A record kept by a schedgen that had metrics_dir but no `scope` yet: the next apply
    # that keeps the job's settings anew (here its command changed) must not take the
    # missing key for a move to another scope.
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    record = home / ".local/state/schedgen/installed/default.json"
    data = json.loads(record.read_text())
    for kept in data["jobs"].values():
        for key in ("scope", "user", "hosts"):
            kept.pop(key, None)
    record.write_text(json.dumps(data))
    write_config(tmp_path / "jobs.toml", JOBS.format(metrics=metrics, more="")
                 .replace('command = "true"', 'command = "true 2"', 1))
    out = ok(tmp_path, "apply")
    assert "metrics file" not in out and prom.exists(), out
    assert json.loads(record.read_text())["jobs"]["m"]["command"] == "true 2"


def _series(job: str, ns: str = "default") -> str:
    return f'schedgen_job_last_exit_code{{namespace="{ns}",job="{job}"}} 0\n'


def _remove(ns: str, kept: dict[str, dict[str, str]]) -> list[str]:
    from schedgen.plan import metrics_exports

    done: list[str] = []
    metrics_exports.remove(ns, kept, {}, lambda v, w: done.append(w), done.append)
    return done


def test_a_fifo_swapped_in_after_the_check_does_not_hang_apply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Someone who may write metrics_dir puts a FIFO in the file's place between the
    # check that it is a plain file and its reading: opening it would wait for a writer
    # for ever, with the apply lock held.
    metrics = tmp_path / "node-exporter"
    metrics.mkdir()
    prom = metrics / "schedgen_default_m.prom"
    prom.write_text(_series("m"))
    real = Path.is_file

    def swapped(self: Path) -> bool:
        answer = real(self)
        if self == prom and not prom.is_fifo():
            prom.unlink()
            os.mkfifo(prom)
        return answer

    monkeypatch.setattr(Path, "is_file", swapped)
    done: list[list[str]] = []
    worker = threading.Thread(
        target=lambda: done.append(_remove("default", {"m": {"metrics_dir": str(metrics)}})),
        daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let it go: a writer opens the FIFO, and closes it
        os.close(os.open(prom, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("reading the metrics file blocked on a FIFO put in its place")
    assert len(done) == 1  # ended; the FIFO, if it came, is not read (a plain file may go)
    assert not prom.exists() or prom.is_fifo()


def test_a_file_of_another_account_stays(tmp_path: Path) -> None:
    # A shared metrics_dir: another account's file by the same name (its own job m of
    # namespace default) is not this user's runs'.
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another account")
    metrics = tmp_path / "node-exporter"
    metrics.mkdir()
    prom = metrics / "schedgen_default_m.prom"
    prom.write_text(_series("m"))
    os.chown(prom, 65534, 65534)
    assert _remove("default", {"m": {"metrics_dir": str(metrics)}}) == []
    assert prom.exists()
    os.chown(prom, os.geteuid(), os.getegid())  # the user's own: goes
    assert len(_remove("default", {"m": {"metrics_dir": str(metrics)}})) == 1
    assert not prom.exists()


def test_names_that_collide_are_told_apart_by_their_labels(tmp_path: Path) -> None:
    # namespace x_y job z and namespace x job y_z both write schedgen_x_y_z.prom; a job
    # named like another's prefix (a, ab) has its own labels.
    metrics = tmp_path / "node-exporter"
    metrics.mkdir()
    prom = metrics / "schedgen_x_y_z.prom"
    prom.write_text(_series("y_z", "x"))
    assert _remove("x_y", {"z": {"metrics_dir": str(metrics)}}) == [] and prom.exists()
    (metrics / "schedgen_x_a.prom").write_text(_series("ab", "x") + _series("a", "xy"))
    assert _remove("x", {"a": {"metrics_dir": str(metrics)}}) == []
    assert len(_remove("x", {"y_z": {"metrics_dir": str(metrics)}})) == 1
    assert not prom.exists()


def test_a_failed_apply_leaves_the_file_of_a_job_that_still_runs(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    # The crontab write fails: the block still runs job m, so its file stays (apply's
    # last part runs after a failed step too).
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    config(tmp_path, metrics, "enabled = false\n")
    fake_crontab.fail_next_write()
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode != 0 and "simulated failure" in r.stderr, r.stdout + r.stderr
    assert b"m.sh" in (fake_crontab.read() or b"") and prom.exists()
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply")  # once it is gone


def test_a_dry_run_says_it_and_leaves_it(fake_crontab: FakeCrontab, tmp_path: Path,
                                         home: Path) -> None:
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    record = home / ".local/state/schedgen/installed/default.json"
    kept = record.read_bytes()
    config(tmp_path, metrics, "enabled = false\n")
    dry = ok(tmp_path, "apply", "--dry-run")
    assert f"would remove: metrics file {prom} (job m no longer writes it)" in dry
    assert prom.exists() and record.read_bytes() == kept
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply")
    config(tmp_path, metrics)
    ok(tmp_path, "apply")
    prom.write_text(_series("m"))
    assert f"would remove: metrics file {prom}" in ok(tmp_path, "uninstall", "--dry-run")
    assert prom.exists()


def test_a_metrics_dir_named_anew_through_a_link_keeps_the_file(fake_crontab: FakeCrontab,
                                                                tmp_path: Path) -> None:
    # The same folder by another name (a link to it): the job still writes this file.
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    (tmp_path / "textfile").symlink_to(metrics)
    config(tmp_path, tmp_path / "textfile")
    out = ok(tmp_path, "apply")
    assert "metrics file" not in out and prom.exists(), out


def test_apply_of_one_target_keeps_the_file_another_still_runs(
        fake_crontab: FakeCrontab, fake_launchctl: object, tmp_path: Path) -> None:
    # m also runs from launchd; `apply --target cron` takes it out of cron only.
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics, 'targets = ["cron", "launchd"]\n')
    config(tmp_path, metrics, 'targets = ["launchd"]\n')
    out = ok(tmp_path, "apply", "--target", "cron")
    assert "metrics file" not in out and prom.exists(), out
    config(tmp_path, metrics, 'targets = ["launchd"]\nenabled = false\n')
    out = ok(tmp_path, "apply", "--target", "cron")
    assert "metrics file" not in out and prom.exists(), out  # launchd still runs it
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply")


def test_a_job_launchd_could_not_unload_keeps_its_file(
        fake_crontab: FakeCrontab, fake_launchctl: FakeLaunchctl, tmp_path: Path) -> None:
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics, 'targets = ["launchd"]\n')
    config(tmp_path, metrics, 'targets = ["launchd"]\nenabled = false\n')
    fake_launchctl.fail_next("bootout", 5, "Boot-out failed: 5: Input/output error")
    r = schedgen("apply", cwd=tmp_path)  # still loaded: it still runs, and writes the file
    assert r.returncode != 0 and "bootout" in r.stderr and prom.exists(), r.stdout + r.stderr
    assert f"removed: metrics file {prom}" in ok(tmp_path, "apply")


@pytest.mark.parametrize("removal", ["uninstall", "disable"])
def test_a_run_going_on_while_its_job_is_removed_writes_no_file_again(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path, removal: str) -> None:
    # The run started by its scheduler (the installed job file) outlives the apply that
    # removed its file: as it ends it must not put it back, for no apply would take it.
    import subprocess
    import time

    metrics, go = tmp_path / "node-exporter", tmp_path / "go"
    prom = installed_and_run(tmp_path, metrics)
    waits = JOBS.replace('command = "true"\nschedule = "@hourly"',
                         f'command = "while [ ! -e {go} ]; do sleep 0.05; done"\n'
                         'schedule = "@hourly"', 1)
    write_config(tmp_path / "jobs.toml", waits.format(metrics=metrics, more=""))
    ok(tmp_path, "apply")
    job_file = next(home.rglob("m.sh"))
    started = home / ".local/state/schedgen/logs/m/runs"
    before = len(list(started.iterdir()))
    run = subprocess.Popen(["bash", str(job_file)], env=dict(os.environ),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(400):  # until the run has begun
            if len(list(started.iterdir())) > before or run.poll() is not None:
                break
            time.sleep(0.05)
        if removal == "uninstall":
            ok(tmp_path, "uninstall")
        else:
            write_config(tmp_path / "jobs.toml",
                         waits.format(metrics=metrics, more="enabled = false\n"))
            ok(tmp_path, "apply")
        assert not prom.exists() and not job_file.exists()
    finally:
        go.touch()
        _, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    assert not prom.exists()
    assert len(list(started.iterdir())) == before + 1  # its run is recorded all the same


def test_diff_lists_the_files_apply_would_delete_and_deletes_none(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    metrics = tmp_path / "node-exporter"
    prom = installed_and_run(tmp_path, metrics)
    assert "metrics file" not in schedgen("diff", cwd=tmp_path).stdout  # in sync
    config(tmp_path, metrics, "enabled = false\n")
    line = f"- delete metrics file {prom} (job m no longer writes it)\n"
    for args in ((), ("--stat",)):
        r = schedgen("diff", *args, cwd=tmp_path)
        assert r.returncode == 1 and line in r.stdout, r.stdout + r.stderr
    r = schedgen("diff", "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["metrics_files"] == [line[len("- delete "):-1]]
    assert prom.exists()
    assert line[len("- delete "):-1] in ok(tmp_path, "apply")  # what diff said, apply did
    assert not prom.exists()


def test_diff_lists_the_old_folders_file_when_metrics_dir_moves(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    prom = installed_and_run(tmp_path, tmp_path / "old")
    config(tmp_path, tmp_path / "new")
    assert f"- delete metrics file {prom} (job m no longer writes it)\n" in schedgen(
        "diff", cwd=tmp_path).stdout
    config(tmp_path, tmp_path / "old", "description = 'only this changed'\n")
    assert "metrics file" not in schedgen("diff", cwd=tmp_path).stdout


def test_diff_lists_the_file_when_the_jobs_files_were_already_removed_by_hand(
        fake_crontab: FakeCrontab, tmp_path: Path, home: Path) -> None:
    # Its files gone by hand (crontab -r, the job file deleted), then disabled: the plan
    # only forgets them, which is "in sync", but apply still deletes the metrics file.
    metrics = tmp_path / "node-exporter"
    one = "[jobs.m]\ncommand = \"true\"\nschedule = \"@hourly\"\ntargets = [\"cron\"]\n" \
          f"metrics_dir = \"{metrics}\"\n"
    write_config(tmp_path / "jobs.toml", one)
    ok(tmp_path, "apply")
    ok(tmp_path, "run", "m")
    prom = metrics / "schedgen_default_m.prom"
    assert prom.exists()
    fake_crontab.set(None)
    for f in next(home.rglob("m.sh")).parent.iterdir():
        f.unlink()
    write_config(tmp_path / "jobs.toml", one + "enabled = false\n")
    said = f"metrics file {prom} (job m no longer writes it)"
    for args in ((), ("--stat",)):
        r = schedgen("diff", *args, cwd=tmp_path)
        assert f"- delete {said}\n" in r.stdout, r.stdout + r.stderr
        assert r.returncode == 1 and "changes pending" in r.stdout, r.stdout  # apply deletes
    data = json.loads(schedgen("diff", "--json", cwd=tmp_path).stdout)
    assert data["metrics_files"] == [said] and data["in_sync"] is False
    assert said in ok(tmp_path, "apply") and not prom.exists()  # what apply does


def test_a_run_of_a_job_not_installed_here_leaves_no_file(fake_crontab: FakeCrontab,
                                                          tmp_path: Path, home: Path) -> None:
    # `schedgen run` of a job never applied, or disabled: no apply would take its file away.
    metrics = tmp_path / "node-exporter"
    config(tmp_path, metrics)
    r = schedgen("run", "m", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "m is not installed here; this run writes no metrics file" in r.stderr
    assert not (metrics / "schedgen_default_m.prom").exists()
    assert list((home / ".local/state/schedgen/logs/m/runs").iterdir())  # it ran
    prom = installed_and_run(tmp_path, metrics)  # installed: it writes
    config(tmp_path, metrics, "enabled = false\n")
    ok(tmp_path, "apply")
    assert not prom.exists()
    assert schedgen("run", "m", cwd=tmp_path).returncode == 0
    assert not prom.exists()
