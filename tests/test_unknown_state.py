"""A scheduler that cannot be read is unknown state, never drift.

Each target is installed with its (fake) program, then the program is taken away or
made to fail: `status`, `check` and `report` say the state is unknown, exit 4, and
claim no drift they did not see. (kubernetes: tests/test_apply_kubernetes.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import FakeCrontab, FakeLaunchctl, FakeSystemctl
from tests.helpers import schedgen, write_config

EXIT_UNKNOWN = 4


def jobs(target: str) -> str:
    return f"""
[defaults]
namespace = "unk"
targets = ["{target}"]

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = ["echo", "beta"]
schedule = "@hourly"
"""


def installed(tmp_path: Path, target: str) -> Path:
    cfg = write_config(tmp_path / "jobs.toml", jobs(target))
    r = schedgen("apply", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    assert schedgen("check", "-c", str(cfg)).returncode == 0
    return cfg


def no_program(tmp_path: Path) -> dict[str, str]:
    """A PATH where no scheduler program is (not even the test guards)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    return {"PATH": str(empty)}


def drift_lines(out: str) -> list[str]:
    """`check`'s `job: drift: ...` and `status`'s `  drift  ...` lines."""
    return [ln for ln in out.splitlines()
            if ln.lstrip().startswith("drift") or ": drift:" in ln]


def assert_unknown(cfg: Path, env: dict[str, str], *words: str) -> None:
    ck = schedgen("check", "-c", str(cfg), env=env)
    assert ck.returncode == EXIT_UNKNOWN, ck.stdout + ck.stderr
    assert drift_lines(ck.stdout) == [], ck.stdout
    assert ck.stdout.startswith("namespace unk: state unknown (2 jobs; no problem seen")
    for w in words:
        assert w in ck.stdout, ck.stdout
    data = json.loads(schedgen("check", "-c", str(cfg), "--json", env=env).stdout)
    assert data["healthy"] is False and data["problems"] == [] and len(data["unknown"]) == 1
    st = schedgen("status", "-c", str(cfg), env=env)
    assert st.returncode == EXIT_UNKNOWN, st.stdout + st.stderr
    assert drift_lines(st.stdout) == [] and "not installed" not in st.stdout, st.stdout
    assert "alpha  [" in st.stdout and "]  state unknown" in st.stdout
    data = json.loads(schedgen("status", "-c", str(cfg), "--json", env=env).stdout)
    assert [j["installed"] for j in data["jobs"]] == [None, None]
    assert data["drift"] is False and data["unknown"][0]["text"] in st.stdout
    # --check: no drift was seen, so not 1; still the unknown code
    assert schedgen("status", "--check", "-c", str(cfg), env=env).returncode == EXIT_UNKNOWN
    page = cfg.parent / "report.html"
    rp = schedgen("report", "-c", str(cfg), "-o", str(page), env=env)
    assert rp.returncode == EXIT_UNKNOWN and page.exists(), rp.stdout + rp.stderr
    assert 'class="unknown"' in page.read_text() and "unknown: " in rp.stdout


def test_check_with_no_crontab_on_path_is_unknown_not_drift(fake_crontab: FakeCrontab,
                                                            tmp_path: Path) -> None:
    cfg = installed(tmp_path, "cron")
    assert_unknown(cfg, no_program(tmp_path),
                   "unknown: crontab not found on PATH: this host has no cron installed",
                   "nothing was changed", "apt-get install cron")


def test_a_crontab_that_fails_is_unknown(fake_crontab: FakeCrontab, fake_bin: Path,
                                         tmp_path: Path) -> None:
    from tests.helpers import write_executable

    cfg = installed(tmp_path, "cron")
    write_executable(fake_bin / "crontab", "#!/bin/sh\necho 'crontab: cannot open spool' >&2\n"
                                           "exit 1\n")
    assert_unknown(cfg, {}, "crontab -l failed: crontab: cannot open spool",
                   "Run `crontab -l` to see the error")


def test_launchd_without_launchctl_is_unknown(fake_launchctl: FakeLaunchctl,
                                              tmp_path: Path) -> None:
    cfg = installed(tmp_path, "launchd")
    assert_unknown(cfg, no_program(tmp_path),
                   "launchctl not found on PATH (launchd runs on macOS only)",
                   "nothing was loaded or changed", "give them a target this host runs")


def test_apply_of_a_launchd_job_on_linux_says_what_to_do(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", jobs("launchd"))
    r = schedgen("apply", "-c", str(cfg), env=no_program(tmp_path))
    assert r.returncode == 3
    assert "launchctl not found on PATH (launchd runs on macOS only): the launchd jobs cannot " \
           "be loaded here, so nothing was written or loaded" in r.stderr
    assert not (tmp_path / "home" / "Library").exists()


def test_systemd_without_a_user_manager_is_unknown(fake_systemctl: FakeSystemctl,
                                                   tmp_path: Path) -> None:
    cfg = installed(tmp_path, "systemd")
    fake_systemctl.no_bus()
    assert_unknown(cfg, {}, "no systemd user manager to talk to",
                   "enable lingering: loginctl enable-linger", "nothing was started or changed")


def test_systemd_without_systemctl_is_unknown(fake_systemctl: FakeSystemctl,
                                              tmp_path: Path) -> None:
    cfg = installed(tmp_path, "systemd")
    assert_unknown(cfg, no_program(tmp_path), "systemctl not found on PATH",
                   "Target cron on such a host")


def test_drift_seen_beside_an_unknown_scheduler_is_still_exit_1(fake_crontab: FakeCrontab,
                                                                tmp_path: Path,
                                                                home: Path) -> None:
    cfg = installed(tmp_path, "cron")
    wrapper = next((home / ".local/share/schedgen/wrappers").glob("alpha.sh"))
    wrapper.unlink()  # seen: the job file is gone
    ck = schedgen("check", "-c", str(cfg), env=no_program(tmp_path))
    assert ck.returncode == 1, ck.stdout
    assert ck.stdout.splitlines() == [
        "alpha: drift: wrapper: missing",
        next(line for line in ck.stdout.splitlines() if line.startswith("unknown: crontab"))]


def test_apply_without_crontab_says_what_to_do(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    cfg = installed(tmp_path, "cron")
    r = schedgen("apply", "-c", str(cfg), env=no_program(tmp_path))
    assert r.returncode == 3
    assert ("crontab not found on PATH: this host has no cron installed, or PATH does not reach "
            "it. The crontab was not read, so nothing was written or removed. Install cron "
            "(Debian, Ubuntu: apt-get install cron") in r.stderr
