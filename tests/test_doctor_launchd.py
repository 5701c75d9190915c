"""`schedgen doctor` for launchd jobs, through the fakes of launchctl, xattr and plutil
(tests/fakes.py): each macOS failure a user meets, with the exact remedy doctor gives."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from schedgen.config.load import load
from schedgen.config.model import Job
from schedgen.doctor import OK, PROBLEM, SKIPPED, WARNING, shared
from schedgen.targets.launchd import doctor, explain, memory
from schedgen.targets.launchd.plan import BACKGROUND_NOTICE
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeMacTools
from tests.helpers import schedgen, write_config

UID = os.getuid()
JOBS = """
[defaults]
targets = ["launchd"]
label_prefix = "local.test"

[jobs.notes]
command = ["cat", "~/Documents/notes.txt"]
schedule = "0 * * * *"
"""
LABEL = "local.test.notes"


@pytest.fixture
def mac(fake_launchctl: FakeLaunchctl, fake_crontab: FakeCrontab, fake_mac_tools: FakeMacTools,
        tmp_path: Path, home: Path) -> FakeLaunchctl:
    write_config(tmp_path / "jobs.toml", JOBS)
    (home / "Documents").mkdir()
    (home / "Documents" / "notes.txt").write_text("hello\n")
    return fake_launchctl


def the_job(tmp_path: Path) -> Job:
    return load(tmp_path / "jobs.toml").jobs[0]


def apply(tmp_path: Path) -> str:
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout


# --- the domain: gui/<uid>, and whether this session reaches it

def test_session_at_the_screen_is_fine(mac: FakeLaunchctl) -> None:
    c = doctor.session()
    assert (c.verdict, c.detail) == (OK, f"gui/{UID}: this login session (Aqua)")


def test_ssh_while_logged_in_at_the_screen_reaches_gui(mac: FakeLaunchctl) -> None:
    mac.over_ssh()
    c = doctor.session()
    assert c.verdict == OK and "this session is Background (SSH)" in c.detail


def test_ssh_without_a_login_at_the_screen_is_a_problem(mac: FakeLaunchctl) -> None:
    mac.no_gui_session()
    c = doctor.session()
    assert c.verdict == PROBLEM
    assert f"Could not find domain for user gui: {UID}" in c.detail
    assert "Bootstrap failed: 5: Input/output error" in c.detail
    assert c.remedy == ("log in at the Mac's screen (or with Screen Sharing), then run "
                        "`schedgen apply`; for jobs that must run with nobody logged in, turn "
                        "on automatic login (System Settings → Users & Groups)")


def test_a_job_loaded_in_the_user_domain_is_the_wrong_domain(mac: FakeLaunchctl,
                                                            tmp_path: Path) -> None:
    mac.set_loaded_in(LABEL, "user")
    c = doctor.service(the_job(tmp_path), {})
    assert c.verdict == PROBLEM and c.detail.startswith(f"loaded in user/{UID}, not gui/{UID}")
    assert c.remedy == (f"launchctl bootout user/{UID}/{LABEL}; then `schedgen apply` in a "
                        "session at the Mac's screen")


# --- bootstrap error 5: apply says what it means, status and doctor remember it

def test_bootstrap_5_is_decoded_remembered_and_shown(mac: FakeLaunchctl, tmp_path: Path) -> None:
    mac.no_gui_session()
    r = schedgen("apply", cwd=tmp_path)
    assert r.returncode == 3
    assert "Bootstrap failed: 5: Input/output error" in r.stderr
    assert "means: Input/output error: launchd would not load the plist" in r.stderr
    assert memory.refusals() == {LABEL: "Bootstrap failed: 5: Input/output error"}
    c = doctor.service(the_job(tmp_path), memory.refusals())
    assert c.verdict == PROBLEM
    assert c.detail.startswith('not loaded: launchd refused it ("Bootstrap failed: 5: '
                               'Input/output error"): Input/output error')
    plist = Path(os.environ["HOME"]) / "Library/LaunchAgents" / f"{LABEL}.plist"
    assert c.remedy == explain.launchctl_error(5, LABEL, str(plist))[1]
    assert c.remedy.startswith("run `schedgen doctor notes`; then `plutil -lint ")
    assert "over SSH, log in at the Mac's screen (or Screen Sharing) first" in c.remedy
    # Once launchd takes it, the refusal is forgotten.
    mac._update(gui_session=True, session="Aqua")
    apply(tmp_path)
    assert memory.refusals() == {}


def test_status_shows_a_refused_job(mac: FakeLaunchctl, tmp_path: Path) -> None:
    mac.no_gui_session()
    assert schedgen("apply", cwd=tmp_path).returncode == 3
    mac._update(gui_session=True)  # status can read launchd again
    r = schedgen("status", cwd=tmp_path)
    assert ("launchd    refused by launchd: Bootstrap failed: 5: Input/output error "
            "(`schedgen doctor` explains)") in r.stdout
    facts = json.loads(schedgen("status", "--json", cwd=tmp_path).stdout)["jobs"][0]["launchd"]
    assert facts["refused"] == "Bootstrap failed: 5: Input/output error"


@pytest.mark.parametrize(("code", "words"), [
    (5, "Input/output error: launchd would not load the plist"),
    (37, "Operation already in progress"),
    (119, "Service is disabled"),
    (122, "Path had bad ownership/permissions"),
    (125, "Domain does not support specified action"),
])
def test_launchctl_errors_are_decoded(code: int, words: str) -> None:
    means, todo = explain.launchctl_error(code, "local.x.job", "/p.plist")
    assert means.startswith(words) and todo
    assert explain.code_of(f"Bootstrap failed: {code}: whatever") == code


# --- state and last exit

def test_a_loaded_job_that_never_ran_is_fine(mac: FakeLaunchctl, tmp_path: Path) -> None:
    apply(tmp_path)
    c = doctor.service(the_job(tmp_path), {})
    assert (c.verdict, c.detail) == (OK, f"loaded in gui/{UID}, not running, last exit "
                                         "(never exited)")


@pytest.mark.parametrize(("status", "words"), [
    (127, "command not found on the job's PATH"),
    (78, "a precondition failed (EX_CONFIG)"),
    (-9, "killed by SIGKILL"),
    (75, "the lock was busy"),
])
def test_last_exit_status_is_explained(mac: FakeLaunchctl, tmp_path: Path, status: int,
                                       words: str) -> None:
    apply(tmp_path)
    mac.set_exited(LABEL, status)
    c = doctor.service(the_job(tmp_path), {})
    assert c.verdict == PROBLEM and f"exited {status}: {words}" in c.detail
    assert "JOB" not in c.remedy


def test_a_job_that_is_not_loaded(mac: FakeLaunchctl, tmp_path: Path) -> None:
    c = doctor.service(the_job(tmp_path), {})
    assert c.verdict == PROBLEM and c.detail.startswith("not installed")
    apply(tmp_path)
    mac.unload(LABEL)
    c = doctor.service(the_job(tmp_path), {})
    assert c.detail == (f'not loaded in gui/{UID} (Could not find service "{LABEL}" in '
                        f"domain for user gui: {UID})")
    assert c.remedy == "schedgen apply"


# --- the background item switched off

def test_background_item_switched_off(mac: FakeLaunchctl, tmp_path: Path) -> None:
    apply(tmp_path)
    mac.disable(LABEL)
    disabled = doctor.disabled_labels()
    assert disabled == {LABEL}
    c = doctor.background(the_job(tmp_path), disabled)
    assert c.verdict == PROBLEM and "Background Items Added" in c.detail
    assert c.remedy == ("System Settings → General → Login Items & Extensions → Allow in the "
                        "Background: switch the item on (it may be named bash); then "
                        f"`launchctl enable gui/{UID}/{LABEL}` and `schedgen apply`")
    assert doctor.background(the_job(tmp_path), set()).verdict == OK
    r = schedgen("status", cwd=tmp_path)
    assert "launchd    disabled: launchd will not run it" in r.stdout


def test_apply_explains_the_background_items_notice_once(mac: FakeLaunchctl,
                                                         tmp_path: Path) -> None:
    first = apply(tmp_path)
    assert first.count(BACKGROUND_NOTICE) == 1
    assert '"Background Items Added"' in BACKGROUND_NOTICE
    write_config(tmp_path / "jobs.toml", JOBS.replace("0 * * * *", "5 * * * *"))
    again = apply(tmp_path)
    assert "reloaded: local.test.notes" in again or "loaded: local.test.notes" in again
    assert BACKGROUND_NOTICE not in again


def test_a_dry_run_says_nothing_of_the_notice(mac: FakeLaunchctl, tmp_path: Path) -> None:
    r = schedgen("apply", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0 and BACKGROUND_NOTICE not in r.stdout
    assert BACKGROUND_NOTICE in apply(tmp_path)


# --- the program: the plist, what it starts, quarantine, PATH

def test_plist_lint(mac: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    apply(tmp_path)
    job = the_job(tmp_path)
    assert doctor.plist_valid(job).verdict == OK
    doctor.plist_path(job).write_text("<plist><dict><key>Label</key>")
    c = doctor.plist_valid(job)
    assert c.verdict == PROBLEM and c.detail.startswith(f"{doctor.plist_path(job)}: ")
    assert c.remedy == "schedgen apply --force"


def test_a_plist_others_may_write_is_refused(mac: FakeLaunchctl, tmp_path: Path) -> None:
    apply(tmp_path)
    job = the_job(tmp_path)
    doctor.plist_path(job).chmod(0o666)
    c = doctor.plist_valid(job)
    assert c.verdict == PROBLEM and "launchd refuses it (error 122)" in c.detail


def test_the_program_launchd_starts(mac: FakeLaunchctl, tmp_path: Path) -> None:
    job = the_job(tmp_path)
    assert doctor.launched_program(job).verdict == SKIPPED
    apply(tmp_path)
    assert doctor.launched_program(job).verdict == OK
    job.wrapper_path.chmod(0o644)
    c = doctor.launched_program(job)
    assert c.verdict == PROBLEM and c.detail.endswith("is not executable (exit 126)")
    job.wrapper_path.unlink()
    assert "does not exist" in doctor.launched_program(job).detail


def test_log_folder_launchd_opens(mac: FakeLaunchctl, tmp_path: Path) -> None:
    job = the_job(tmp_path)
    c = doctor.log_folder(job)
    assert c.verdict == PROBLEM and c.remedy == "schedgen apply (it creates the folder)"
    apply(tmp_path)
    assert doctor.log_folder(job).verdict == OK


def test_quarantined_script(mac: FakeLaunchctl, fake_mac_tools: FakeMacTools,
                            tmp_path: Path, home: Path) -> None:
    script = home / "Downloads" / "backup.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    write_config(tmp_path / "jobs.toml", JOBS.replace('["cat", "~/Documents/notes.txt"]',
                                                      f'["{script}"]'))
    apply(tmp_path)
    job = the_job(tmp_path)
    assert doctor.quarantined(job).verdict == OK
    fake_mac_tools.quarantine(script)
    c = doctor.quarantined(job)
    assert c.verdict == PROBLEM
    assert c.detail == (f"quarantined (downloaded, not yet opened once): {script} (Safari): "
                        "macOS will not run it from launchd")
    assert c.remedy == f"xattr -d com.apple.quarantine {script}"


def test_homebrew_missing_from_the_jobs_path(mac: FakeLaunchctl, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    brew = tmp_path / "homebrew"
    (brew / "bin").mkdir(parents=True)
    tool = brew / "bin" / "rclone"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("HOMEBREW_PREFIX", str(brew))
    write_config(tmp_path / "jobs.toml", JOBS.replace(
        'label_prefix = "local.test"', 'label_prefix = "local.test"\npath = ["/usr/bin", "/bin"]')
        .replace('["cat", "~/Documents/notes.txt"]', '["rclone", "sync", "a", "b"]'))
    job = the_job(tmp_path)
    c = shared.program_on_path(job, user_path=f"{brew}/bin:/usr/bin:/bin")
    assert c.verdict == PROBLEM
    assert c.detail == (f"rclone is {tool} on your PATH, but the job's PATH (/usr/bin:/bin) "
                        f"does not have {brew}/bin: the scheduler will not find it (exit 127) "
                        "(Homebrew's: cron and launchd do not read your shell's profile, so "
                        "they never see the PATH Homebrew's shellenv sets)")
    assert c.remedy == (f'add "{brew}/bin" to `path` in jobs.toml (for job notes or in '
                        "[defaults]), then run `schedgen apply`")


# --- TCC: the probe agent, run from the job's own launchd context

def test_tcc_probe_finds_a_folder_the_job_may_not_read(mac: FakeLaunchctl, tmp_path: Path,
                                                      home: Path) -> None:
    apply(tmp_path)
    mac.spawn_at_load(denied=[str(home / "Documents")])
    c = doctor.tcc(the_job(tmp_path))
    assert c.verdict == PROBLEM
    assert c.detail == (f"run by launchd, /bin/bash may not read Documents ({home}/Documents): "
                        "\"Operation not permitted\". The job fails there every time while it "
                        "works from your terminal")
    assert c.remedy == (
        "open System Settings → Privacy & Security → Files and Folders (or Full Disk Access) "
        "and allow /bin/bash: launchd starts the job as /bin/bash, so the grant must be its "
        "own, not your terminal's (if it is not listed, add it under Full Disk Access with +, "
        "⌘⇧G to type the path; `open \"x-apple.systempreferences:com.apple.preference."
        "security?Privacy_AllFiles\"` opens that pane). Or keep the job's files out of "
        "Documents. Then run `schedgen doctor notes` again")
    # The probe came and went: nothing of it is left loaded or on disk.
    assert set(mac.loaded()) == {LABEL}
    assert not list((home / ".local/state/schedgen/doctor").iterdir())
    boots = [c for c in mac.calls() if c[0] == "bootstrap"]
    assert boots[-1][1:] == [f"gui/{UID}", str(home / ".local/state/schedgen/doctor"
                                                   / "local.test.doctor-probe.plist")]


def test_full_disk_access_areas_name_that_pane(mac: FakeLaunchctl, tmp_path: Path,
                                               home: Path) -> None:
    (home / "Library/Mail").mkdir(parents=True)
    write_config(tmp_path / "jobs.toml", JOBS.replace("~/Documents/notes.txt", "~/Library/Mail"))
    apply(tmp_path)
    mac.spawn_at_load(denied=[str(home / "Library/Mail")])
    c = doctor.tcc(the_job(tmp_path))
    assert c.verdict == PROBLEM
    assert c.remedy.startswith("open System Settings → Privacy & Security → Full Disk Access "
                               "and allow /bin/bash")


def test_tcc_probe_when_the_job_may_read(mac: FakeLaunchctl, tmp_path: Path, home: Path) -> None:
    apply(tmp_path)
    mac.spawn_at_load()
    c = doctor.tcc(the_job(tmp_path))
    assert (c.verdict, c.detail) == (OK, "from launchd the job may read what it touches "
                                         "(Documents ok)")


def test_tcc_probe_that_launchd_refuses(mac: FakeLaunchctl, tmp_path: Path) -> None:
    mac.no_gui_session()
    c = doctor.tcc(the_job(tmp_path), wait=0.5)
    assert c.verdict == WARNING
    assert "the probe agent could not run (Bootstrap failed: 5: Input/output error" in c.detail


@pytest.mark.parametrize(("path", "what"), [
    ("Desktop/x", "Desktop"), ("Downloads", "Downloads"),
    ("Library/Mobile Documents/com~apple~CloudDocs/a", "iCloud Drive"),
    ("Library/Messages/chat.db", "Messages data"),
])
def test_protected_areas(home: Path, path: str, what: str) -> None:
    from schedgen.targets.launchd.probe import area_of

    a = area_of(home / path)
    assert a is not None and a.what == what
    v = area_of(Path("/Volumes/USB/backup"))
    assert v is not None and v.folder == Path("/Volumes/USB")
    assert area_of(home / "src" / "x") is None


def test_a_job_touching_nothing_protected_needs_no_probe(mac: FakeLaunchctl, tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS.replace('"~/Documents/notes.txt"', '"/etc/hosts"'))
    assert doctor.tcc(the_job(tmp_path)).detail == "the job's paths touch no folder macOS protects"
    assert not [c for c in mac.calls() if c[0] == "bootstrap"]


# --- the whole command, through the fakes

def test_doctor_prints_every_check_with_verdict_and_remedy(mac: FakeLaunchctl, tmp_path: Path,
                                                           home: Path) -> None:
    apply(tmp_path)
    mac.spawn_at_load(denied=[str(home / "Documents")])
    mac.disable(LABEL)
    r = schedgen("doctor", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "host"
    assert f"  ok       launchd domain: gui/{UID}: this login session (Aqua)" in lines
    assert "job notes (launchd)" in lines
    for name in ("plist", "launchd state", "background item", "program launchd starts",
                 "log folder", "quarantine", "privacy (TCC)", "program on the job's PATH",
                 "working_dir", "env_file", "lock dir", "log dir", "job timezone"):
        assert any(line.split(":")[0].split(None, 1)[-1] == name for line in lines), name
    assert any(line.startswith("  problem  background item:") for line in lines)
    assert any(line.startswith("  problem  privacy (TCC):") for line in lines)
    assert sum(line.strip().startswith("do: ") for line in lines) >= 2
    assert lines[-1].startswith("2 problems")
    data = json.loads(schedgen("doctor", "notes", "--json", cwd=tmp_path).stdout)
    assert data["ok"] is False and data["problems"] == 2
    bad = {c["check"] for c in data["checks"] if c["verdict"] == "problem"}
    assert bad == {"background item", "privacy (TCC)"}


def test_doctor_exits_0_when_all_is_well(mac: FakeLaunchctl, tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", JOBS.replace('"~/Documents/notes.txt"', '"/etc/hosts"'))
    apply(tmp_path)
    mac.clear_calls()
    r = schedgen("doctor", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert mac.mutating_calls() == []  # it only looks (no probe needed here)
    assert r.stdout.splitlines()[-1] in ("no problems found", "0 problems, 1 warning")
