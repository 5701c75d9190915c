"""apply / diff / status / uninstall for target launchd, with a fake launchctl on Linux."""

from __future__ import annotations

import plistlib
from pathlib import Path

import pytest

from schedgen.machine import ownership as state
from tests.fakes import (
    FakeCrontab,
    FakeLaunchctl,
)
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
targets = ["launchd"]
label_prefix = "local.test"

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = "echo beta"
schedule = "30 6 * * 1-5"
"""
A, B = "local.test.alpha", "local.test.beta"


@pytest.fixture
def ld(fake_launchctl: FakeLaunchctl, fake_crontab: FakeCrontab,
       tmp_path: Path) -> FakeLaunchctl:
    # The fake crontab too: uninstall looks for a block of the namespace in the crontab.
    write_config(tmp_path / "jobs.toml", JOBS)
    return fake_launchctl


def run(tmp_path: Path, *args: str):  # noqa: ANN201
    r = schedgen(*args, cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def agents(home: Path) -> Path:
    return home / "Library/LaunchAgents"


def installed(ld: FakeLaunchctl, tmp_path: Path) -> None:
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    ld.clear_calls()


def test_install_writes_plists_and_bootstraps_them(ld: FakeLaunchctl, tmp_path: Path,
                                                   home: Path) -> None:
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    plist = agents(home) / f"{A}.plist"
    assert plistlib.loads(plist.read_bytes())["Label"] == A
    assert set(ld.loaded()) == {A, B}
    uid = str(__import__("os").getuid())
    assert ld.mutating_calls() == [
        ["bootout", f"gui/{uid}/{A}"], ["bootstrap", f"gui/{uid}", str(plist)],
        ["bootout", f"gui/{uid}/{B}"],
        ["bootstrap", f"gui/{uid}", str(agents(home) / f"{B}.plist")],
    ]
    assert (home / ".local/state/schedgen/logs/alpha").is_dir()  # StandardOutPath's folder
    assert "loaded: local.test.alpha" in r.stdout


def test_reapply_makes_no_launchctl_call_that_changes_anything(ld: FakeLaunchctl,
                                                               tmp_path: Path) -> None:
    installed(ld, tmp_path)
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "0 added, 0 changed, 0 removed, 5 unchanged" in r.stdout
    assert ld.mutating_calls() == []
    assert run(tmp_path, "diff").returncode == 0


def test_only_the_changed_job_is_reloaded(ld: FakeLaunchctl, tmp_path: Path) -> None:
    installed(ld, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace("30 6 * * 1-5", "45 7 * * 1-5"))
    d = run(tmp_path, "diff")
    assert d.returncode == 1 and "0 to add, 1 to change, 0 to remove, 4 unchanged" in d.stdout
    assert "-\t\t\t<integer>30</integer>" in d.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    assert [c[0] + " " + c[-1].rsplit("/", 1)[-1] for c in ld.mutating_calls()] == [
        f"bootout {B}", f"bootstrap {B}.plist"]


def test_a_wrapper_change_alone_reloads_nothing(ld: FakeLaunchctl, tmp_path: Path) -> None:
    # launchd runs the wrapper afresh at each firing: only a changed plist is reloaded.
    installed(ld, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace('"echo beta"', '"echo BETA"'))
    d = run(tmp_path, "diff").stdout
    assert "wrapper" in d and "reload" not in d
    run(tmp_path, "apply")
    assert ld.mutating_calls() == []


def test_running_job_is_left_alone_unless_force(ld: FakeLaunchctl, tmp_path: Path,
                                                home: Path) -> None:
    installed(ld, tmp_path)
    ld.set_running(B, 4242)
    plist = agents(home) / f"{B}.plist"
    old = plist.read_bytes()
    write_config(tmp_path / "jobs.toml", JOBS.replace("30 6 * * 1-5", "45 7 * * 1-5"))
    d = run(tmp_path, "diff")
    assert "running (PID 4242): apply leaves it alone unless --force" in d.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    assert f"left alone: {B} is running (PID 4242)" in r.stdout
    assert "0 changed" in r.stdout and "1 deferred" in r.stdout
    assert plist.read_bytes() == old and ld.mutating_calls() == []
    s = run(tmp_path, "status", "--check")
    assert s.returncode == 1 and "running, PID 4242" in s.stdout
    r = run(tmp_path, "apply", "--force")
    assert r.returncode == 0 and f"loaded: {B}" in r.stdout
    assert plist.read_bytes() != old
    assert ld.loaded()[B]["pid"] is None  # bootout stopped it; bootstrap loaded the new one


def test_removed_job_is_an_orphan_until_prune(ld: FakeLaunchctl, tmp_path: Path,
                                              home: Path) -> None:
    installed(ld, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    r = run(tmp_path, "apply")
    assert r.returncode == 0 and "orphan: plist" in r.stdout
    assert B in ld.loaded() and (agents(home) / f"{B}.plist").exists()
    d = run(tmp_path, "diff", "--prune")
    assert d.returncode == 1 and "- delete plist" in d.stdout
    r = run(tmp_path, "apply", "--prune")
    assert r.returncode == 0, r.stderr
    assert B not in ld.loaded() and not (agents(home) / f"{B}.plist").exists()
    assert "unloaded: local.test.beta" in r.stdout
    assert run(tmp_path, "diff").returncode == 0


def test_hand_edited_orphan_needs_force(ld: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    installed(ld, tmp_path)
    plist = agents(home) / f"{B}.plist"
    plist.write_text(plist.read_text().replace("<integer>30</integer>", "<integer>31</integer>"))
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    r = run(tmp_path, "apply", "--prune")
    assert "kept: plist" in r.stdout and plist.exists() and B in ld.loaded()
    r = run(tmp_path, "apply", "--prune", "--force")
    assert r.returncode == 0 and not plist.exists() and B not in ld.loaded()


def test_drift_is_detected_and_repaired(ld: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    installed(ld, tmp_path)
    plist = agents(home) / f"{A}.plist"
    good = plist.read_text()
    plist.write_text(good.replace("<false/>", "<true/>"))
    ld.unload(B)  # someone ran launchctl bootout
    s = run(tmp_path, "status", "--check")
    assert s.returncode == 1
    assert "drift      plist: hand-edited" in s.stdout
    assert "drift      plist: not loaded" in s.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    assert plist.read_text() == good and set(ld.loaded()) == {A, B}
    assert run(tmp_path, "status", "--check").returncode == 0


def test_missing_plist_is_recreated(ld: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    installed(ld, tmp_path)
    (agents(home) / f"{A}.plist").unlink()
    assert f"+ new launchd plist ~/Library/LaunchAgents/{A}.plist (job alpha, " \
        in run(tmp_path, "diff").stdout
    run(tmp_path, "apply")
    assert (agents(home) / f"{A}.plist").exists()


def test_foreign_agent_is_untouched(ld: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    foreign = agents(home) / "com.example.foreign.plist"
    foreign.parent.mkdir(parents=True)
    body = plistlib.dumps({"Label": "com.example.foreign", "ProgramArguments": ["/bin/true"]})
    foreign.write_bytes(body)
    ld.set_loaded("com.example.foreign", str(foreign))
    for args in (["apply"], ["apply", "--prune", "--force"], ["uninstall"]):
        assert run(tmp_path, *args).returncode == 0
    assert foreign.read_bytes() == body and "com.example.foreign" in ld.loaded()
    assert all("com.example.foreign" not in " ".join(c) for c in ld.mutating_calls())


def test_a_file_schedgen_did_not_write_is_not_overwritten(ld: FakeLaunchctl, tmp_path: Path,
                                                          home: Path) -> None:
    plist = agents(home) / f"{A}.plist"
    plist.parent.mkdir(parents=True)
    plist.write_text("<plist>mine</plist>\n")
    d = run(tmp_path, "diff")
    assert d.returncode == 1 and "! conflict plist" in d.stdout
    r = run(tmp_path, "apply")
    assert r.returncode == 2 and "would overwrite files it did not write" in r.stderr
    assert plist.read_text() == "<plist>mine</plist>\n" and ld.mutating_calls() == []
    assert not state.record_path("default").exists()
    r = run(tmp_path, "apply", "--force")
    assert r.returncode == 0 and "schedgen-managed" in plist.read_text()


def test_bootstrap_error_5_is_retried(ld: FakeLaunchctl, tmp_path: Path) -> None:
    ld.fail_next("bootstrap", 5, "Bootstrap failed: 5: Input/output error")
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    assert [c[0] for c in ld.mutating_calls()].count("bootstrap") == 3
    assert set(ld.loaded()) == {A, B}


def test_disabled_service_is_enabled_then_bootstrapped(ld: FakeLaunchctl, tmp_path: Path) -> None:
    ld.disable(A)
    r = run(tmp_path, "apply")
    assert r.returncode == 0, r.stderr
    uid = str(__import__("os").getuid())
    assert ["enable", f"gui/{uid}/{A}"] in ld.mutating_calls()
    assert A in ld.loaded()


@pytest.mark.parametrize("code", [3, 113])
def test_bootout_of_a_service_not_loaded_is_fine(ld: FakeLaunchctl, tmp_path: Path,
                                                 code: int) -> None:
    ld.not_found_code(code)
    assert run(tmp_path, "apply").returncode == 0
    assert set(ld.loaded()) == {A, B}


def test_failed_bootstrap_of_a_new_job_exits_3_and_rolls_back(ld: FakeLaunchctl, tmp_path: Path,
                                                             home: Path) -> None:
    run(tmp_path, "apply", "--target", "launchd")
    gamma = '\n[jobs.gamma]\ncommand = "true"\nschedule = "@daily"\n'
    write_config(tmp_path / "jobs.toml", JOBS + gamma)
    ld.clear_calls()
    ld.fail_next("bootstrap", 78, "Bootstrap failed: 78: Function not implemented")
    r = run(tmp_path, "apply")
    assert r.returncode == 3
    assert "launchctl bootstrap" in r.stderr and "78: Function not implemented" in r.stderr
    assert "the new plist was removed again" in r.stderr
    assert "created: wrapper" in r.stderr and "Not done:" in r.stderr
    assert not (agents(home) / "local.test.gamma.plist").exists()
    record = state.load("default")
    for e in record.entries.values():
        assert e.path is not None and Path(e.path).exists()  # the record is true to the disk
    assert state.key("plist", agents(home) / "local.test.gamma.plist") not in record.entries
    assert run(tmp_path, "apply").returncode == 0
    assert "local.test.gamma" in ld.loaded()


def test_failed_reload_puts_the_previous_plist_back(ld: FakeLaunchctl, tmp_path: Path,
                                                   home: Path) -> None:
    installed(ld, tmp_path)
    plist = agents(home) / f"{B}.plist"
    old = plist.read_text()
    write_config(tmp_path / "jobs.toml", JOBS.replace("30 6 * * 1-5", "45 7 * * 1-5"))
    ld.fail_next("bootstrap", 78, "Bootstrap failed: 78: Function not implemented")
    r = run(tmp_path, "apply")
    assert r.returncode == 3
    assert "previous plist was put back and loaded again" in r.stderr
    assert plist.read_text() == old and B in ld.loaded()
    entry = state.load("default").get(state.key("plist", plist))
    from schedgen.plan.changes import digest

    assert entry is not None and entry.sha256 == digest(old)
    assert run(tmp_path, "diff").returncode == 1  # still pending, not forgotten


def test_disabled_job_is_unloaded_by_a_plain_apply(ld: FakeLaunchctl, tmp_path: Path,
                                                   home: Path) -> None:
    installed(ld, tmp_path)
    write_config(tmp_path / "jobs.toml", JOBS.replace('command = "echo beta"',
                                                       'command = "echo beta"\nenabled = false'))
    r = run(tmp_path, "apply")
    assert r.returncode == 0
    assert B not in ld.loaded() and not (agents(home) / f"{B}.plist").exists()


def test_uninstall_boots_out_and_removes_everything_owned(ld: FakeLaunchctl, tmp_path: Path,
                                                          home: Path) -> None:
    installed(ld, tmp_path)
    ld.set_running(A, 99)
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert "removed 5 artifacts" in r.stdout
    assert ld.loaded() == {} and list(agents(home).iterdir()) == []
    assert not state.record_path("default").exists()
    assert (home / ".local/state/schedgen/logs/alpha").is_dir()


def test_launchd_only_config_never_calls_crontab(ld: FakeLaunchctl, tmp_path: Path,
                                                 fake_crontab: FakeCrontab) -> None:
    for args in (["apply"], ["diff"], ["status"]):
        r = run(tmp_path, *args)
        assert r.returncode == 0, (args, r.stderr)
    assert fake_crontab.calls() == []
    # uninstall looks for the namespace's block (the markers alone make it ours) ...
    assert run(tmp_path, "uninstall").returncode == 0
    assert fake_crontab.calls() == [["-l"]]


def test_uninstall_is_not_stopped_by_an_unreadable_crontab(ld: FakeLaunchctl, tmp_path: Path,
                                                           fake_bin: Path,
                                                           home: Path) -> None:
    from tests.helpers import write_executable

    run(tmp_path, "apply")
    write_executable(fake_bin / "crontab", "#!/bin/sh\necho 'crontab: spool broken' >&2\nexit 9\n")
    r = run(tmp_path, "uninstall")
    assert r.returncode == 0, r.stderr
    assert "warning: crontab -l failed: crontab: spool broken" in r.stdout
    assert list(agents(home).iterdir()) == []


def test_no_deprecated_verbs(ld: FakeLaunchctl, tmp_path: Path) -> None:
    run(tmp_path, "apply")
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    run(tmp_path, "apply", "--prune")
    run(tmp_path, "uninstall")
    assert {c[0] for c in ld.calls()} <= {"list", "bootout", "bootstrap", "enable"}


def test_running_orphan_is_not_pruned_unless_force(ld: FakeLaunchctl, tmp_path: Path,
                                                   home: Path) -> None:
    installed(ld, tmp_path)
    ld.set_running(B, 555)
    write_config(tmp_path / "jobs.toml", JOBS.split("[jobs.beta]")[0])
    dry = run(tmp_path, "apply", "--prune", "--dry-run")
    assert f"left alone: {B} is running (PID 555); unloading it would stop it" in dry.stdout
    r = run(tmp_path, "apply", "--prune")
    assert r.returncode == 0 and f"left alone: {B}" in r.stdout
    assert B in ld.loaded() and (agents(home) / f"{B}.plist").exists()
    assert (home / ".local/share/schedgen/wrappers/beta.sh").exists()  # the plist calls it
    r = run(tmp_path, "apply", "--prune", "--force")
    assert r.returncode == 0 and B not in ld.loaded()
    assert not (agents(home) / f"{B}.plist").exists()
    assert not (home / ".local/share/schedgen/wrappers/beta.sh").exists()
