"""`diff` for review: jobs.toml terms first, file diffs after, env values never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedgen.commands import apply as ap
from schedgen.commands.diff import review_diff
from schedgen.errors import SystemOpError
from schedgen.machine import ownership as state
from schedgen.output import review as out
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config

SECRET = "hunter2-very-secret"
OLD_SECRET = "old-secret-value-42"
JOBS = f"""
[defaults]
targets = ["cron"]

[jobs.publish]
description = "Publish the notes"
command = ["publish", "--all"]
schedule = "15 6 * * *"
env = {{ API_TOKEN = "{OLD_SECRET}", MODE = "x" }}

[jobs.other]
command = "echo other"
schedule = "@hourly"
"""


@pytest.fixture
def cfg(fake_crontab: FakeCrontab, tmp_path: Path) -> Path:
    return write_config(tmp_path / "jobs.toml", JOBS)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_schedule_change_leads_with_both_schedules_in_words(cfg: Path, tmp_path: Path) -> None:
    ap.apply(cfg, say=lambda _: None)
    edit(cfg, 'schedule = "15 6 * * *"', 'schedule = "30 7 * * 1-5"')
    r = schedgen("diff", "-c", str(cfg))
    assert r.returncode == 1, r.stderr
    head, files = r.stdout.split("files:\n", 1)
    assert head == ("jobs (1 with changes):\n"
                    "~ publish: changed\n"
                    "    schedule: '15 6 * * *' (At 06:15 every day) -> '30 7 * * 1-5' "
                    "(At 07:30 on Monday through Friday)\n\n")
    assert "-15 6 * * * " in files and "+30 7 * * 1-5 " in files
    assert files.endswith("changes pending: 0 to add, 1 to change, 0 to remove, 3 unchanged\n")


def test_new_job_is_described_before_its_wrapper(cfg: Path, tmp_path: Path) -> None:
    r = schedgen("diff", "-c", str(cfg))
    head, files = r.stdout.split("files:\n", 1)
    assert "+ publish: new\n    schedule: '15 6 * * *' (At 06:15 every day)\n" in head
    assert "    command: publish --all\n" in head
    assert "    env: API_TOKEN, MODE (values not shown)\n" in head
    assert "+ other: new\n    schedule: '@hourly' (" in head
    # a new file is one line: what it is, where, its size; --full (-v) gives its text
    assert "+ new job file ~/.local/share/schedgen/wrappers/publish.sh (job publish, " in files
    assert "+ new runtime ~/.local/share/schedgen/wrappers/schedgen-runtime." in files
    assert "#!/bin/bash" not in files and len(r.stdout.splitlines()) < 60
    for flag in ("--full", "-v"):
        full = schedgen("diff", "-c", str(cfg), flag).stdout
        assert "+++ desired: " in full and "#!/bin/bash" in full
        assert len(full.splitlines()) > 1000


def test_env_values_never_appear_in_text_json_or_stat(cfg: Path, tmp_path: Path) -> None:
    # the first install shows the values only masked, in every format
    for args in ((), ("--full",), ("--json",), ("--stat",), ("--json", "--stat")):
        r = schedgen("diff", "-c", str(cfg), *args)
        assert OLD_SECRET not in r.stdout and "'x'" not in r.stdout, args
    assert "export API_TOKEN=<masked>" in schedgen("diff", "--full", "-c", str(cfg)).stdout
    ap.apply(cfg, say=lambda _: None)
    edit(cfg, OLD_SECRET, SECRET)
    edit(cfg, 'MODE = "x"', 'MODE = "y", EXTRA = "1"')
    r = schedgen("diff", "-c", str(cfg))
    # neither the installed (old) value nor the new one, anywhere
    assert OLD_SECRET not in r.stdout and SECRET not in r.stdout
    assert "    env: + EXTRA; ~ API_TOKEN (value changed); ~ MODE (value changed)\n" in r.stdout
    assert "-  export API_TOKEN=<masked>\n" in r.stdout and "+  export API_TOKEN=<masked>\n" in r.stdout
    data = json.loads(schedgen("diff", "-c", str(cfg), "--json").stdout)
    text = json.dumps(data)
    assert OLD_SECRET not in text and SECRET not in text
    job = next(j for j in data["jobs"] if j["job"] == "publish")
    assert job["status"] == "changed"
    assert job["changes"][0]["field"] == "env" and job["changes"][0]["new"] == [
        "API_TOKEN", "EXTRA", "MODE"]
    # the record keeps digests, not values
    assert SECRET not in state.record_path("default").read_text()
    assert OLD_SECRET not in state.record_path("default").read_text()


def test_value_used_elsewhere_is_masked_too(fake_crontab: FakeCrontab,
                                            tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", f"""
[jobs.leak]
targets = ["cron"]
command = ["curl", "-H", "{SECRET}"]
schedule = "@daily"
env = {{ TOKEN = "{SECRET}" }}
""")
    r = review_diff(cfg)
    assert SECRET not in out.text(r, color=False)
    assert SECRET not in json.dumps(out.as_json(r))


def test_a_value_the_config_says_in_public_does_not_mask_job_names(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    # NALY_CHANNEL = "daily" had turned the job publish-daily into publish-<masked> in
    # every line of the review (its name and description are in the crontab anyway).
    cfg = write_config(tmp_path / "jobs.toml", """
[jobs.publish-daily]
description = "the daily notes"
targets = ["cron"]
command = ["publish", "--channel", "daily"]
schedule = "@daily"
env = { NALY_CHANNEL = "daily" }
""")
    r = review_diff(cfg)
    text = out.text(r, color=False, full=True)
    assert "publish-<masked>" not in text and "the <masked> notes" not in text
    assert "wrappers/publish-daily.sh" in text
    assert "export NALY_CHANNEL=<masked>" in text     # its own line is masked all the same
    assert "--channel daily" not in text and "--channel daily" not in json.dumps(out.as_json(r))


def test_stat_names_files_only(cfg: Path) -> None:
    r = schedgen("diff", "-c", str(cfg), "--stat")
    assert r.returncode == 1
    assert "#!/bin/bash" not in r.stdout and "@@" not in r.stdout
    assert "+ create wrapper " in r.stdout and "(+" in r.stdout
    data = json.loads(schedgen("diff", "-c", str(cfg), "--stat", "--json").stdout)
    assert all("diff" not in c for c in data["changes"]) and data["jobs"]


def test_in_sync_prints_only_the_summary_line(cfg: Path) -> None:
    ap.apply(cfg, say=lambda _: None)
    r = schedgen("diff", "-c", str(cfg))
    assert r.returncode == 0
    assert r.stdout == "namespace default: in sync: 0 to add, 0 to change, 0 to remove, 4 unchanged\n"


def test_removed_and_disabled_jobs_are_named(cfg: Path) -> None:
    ap.apply(cfg, say=lambda _: None)
    cfg.write_text(JOBS.split("[jobs.other]")[0].replace('env = ', 'enabled = false\nenv = '))
    text = out.text(review_diff(cfg), color=False)
    assert "- other: removed (gone from jobs.toml; apply --prune removes its files)\n" in text
    assert "~ publish: changed (disabled: apply removes it)\n    enabled: true -> false\n" in text


def test_record_from_an_older_schedgen_falls_back_to_file_diffs(cfg: Path) -> None:
    ap.apply(cfg, say=lambda _: None)
    path = state.record_path("default")
    data = json.loads(path.read_text())
    del data["jobs"]  # what schedgen 0.1.0 wrote
    path.write_text(json.dumps(data))
    edit(cfg, '"--all"', '"--some"')
    text = out.text(review_diff(cfg), color=False)
    assert "? publish: files differ (no settings in the ownership record (installed by an older " \
           "schedgen): see the file diffs)\n" in text
    lines = text.splitlines()
    assert any(x.startswith("-") and x.endswith("publish --all") for x in lines)
    assert any(x.startswith("+") and x.endswith("publish --some") for x in lines)
    # the next apply records the settings, and the review speaks jobs.toml again
    ap.apply(cfg, say=lambda _: None)
    edit(cfg, '"--some"', '"--none"')
    text = out.text(review_diff(cfg), color=False)
    assert "    command: publish --some -> publish --none\n" in text


def test_failed_crontab_write_keeps_the_old_settings(cfg: Path,
                                                     fake_crontab: FakeCrontab) -> None:
    ap.apply(cfg, say=lambda _: None)
    edit(cfg, 'schedule = "15 6 * * *"', 'schedule = "30 7 * * *"')
    fake_crontab.fail_next_write()
    with pytest.raises(SystemOpError):
        ap.apply(cfg, say=lambda _: None)
    record = state.load("default")
    assert record.settings is not None
    assert record.settings["publish"]["schedule"] == ["15 6 * * *"]  # the crontab still says so
    text = out.text(review_diff(cfg), color=False)
    assert "schedule: '15 6 * * *' (At 06:15 every day) -> '30 7 * * *'" in text


def test_record_is_written_once_per_apply(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saves: list[int] = []
    real = state.save
    monkeypatch.setattr(state, "save", lambda r: (saves.append(len(r.entries)), real(r)))
    ap.apply(cfg, say=lambda _: None)
    assert saves == [4]  # the runtime, two job files and the crontab block, in one write
    ap.apply(cfg, say=lambda _: None)
    assert saves == [4]  # nothing changed: not rewritten


def test_status_and_diff_without_launchctl_or_crontab_report_unknown(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", """
[jobs.mac]
targets = ["launchd"]
command = ["echo", "mac"]
schedule = "40 10,16 * * *"

[jobs.linux]
targets = ["cron"]
command = ["echo", "linux"]
schedule = "@daily"
""")
    (tmp_path / "empty-bin").mkdir()
    env = {"PATH": str(tmp_path / "empty-bin")}  # neither program (nor the test guards)
    r = schedgen("status", "-c", str(cfg), env=env)
    assert r.returncode == 4, r.stderr  # the state is unknown
    # the plist file is seen missing (drift); the crontab is not seen at all (no drift)
    # nothing applied: the files are seen missing (drift); the crontab is not seen at all
    assert "drift      plist: missing" in r.stdout and "crontab lines" not in r.stdout
    assert "unknown: launchctl not found on PATH (launchd runs on macOS only). The plists " \
        "in ~/Library/LaunchAgents were compared" in r.stdout
    assert "launchd    local.schedgen.mac: loaded state unknown (no launchctl here), running " \
           "unknown" in r.stdout
    r = schedgen("diff", "-c", str(cfg), env=env)
    assert r.returncode == 1, r.stderr
    assert "unknown: crontab not found on PATH: this host has no cron installed" in r.stdout
    assert "+ mac: new" in r.stdout and "+ linux: new" in r.stdout


def test_run_policies_show_in_jobs_toml_terms(cfg: Path, tmp_path: Path) -> None:
    ap.apply(cfg, say=lambda _: None)
    # Settings kept before the policy keys existed compare equal to their defaults.
    assert schedgen("diff", "-c", str(cfg)).returncode == 0
    edit(cfg, 'schedule = "15 6 * * *"\n',
         'schedule = "15 6 * * *"\nretries = 2\nretry_delay = "1m"\nlock = { on_busy = "replace" }\n')
    r = schedgen("diff", "-c", str(cfg))
    assert r.returncode == 1, r.stderr
    head = r.stdout.split("files:\n", 1)[0]
    assert "    retries: (none) -> 2\n" in head
    assert "    retry_delay: (none) -> 1m\n" in head
    assert "    lock.on_busy: (none) -> replace\n" in head
    assert "sg_retries=2 sg_retry_delays='60 120' sg_retry_window=82800" in r.stdout
    ap.apply(cfg, say=lambda _: None)
    st = schedgen("status", "-c", str(cfg))
    assert ("  policies   retries 2, 1m apart, then x2 each (at most 1h); "
            "on busy: replace the running run\n") in st.stdout
    js = json.loads(schedgen("status", "-c", str(cfg), "--json").stdout)
    [pub] = [j for j in js["jobs"] if j["job"] == "publish"]
    assert pub["policies"] == {"retries": 2, "retry_delay": 60, "backoff": 2.0,
                               "on_busy": "replace", "stop_on_failure": None}


def test_a_jobs_settings_are_its_fields_in_plain_form(tmp_path: Path, home: Path) -> None:
    # review.settings reads a job's fields without _asdict() copies: the same dict as
    # the plain walk over _asdict() it stands for, on the bundled jobs.toml's varied jobs.
    from typing import Any

    from schedgen.config.load import load
    from schedgen.plan import review

    def plain(v: Any) -> Any:
        if hasattr(v, "_asdict"):
            return {k: plain(x) for k, x in v._asdict().items()}
        if isinstance(v, tuple | list):
            return [plain(x) for x in v]
        if v is None or isinstance(v, str | int | float | bool):
            return v
        return str(v)

    from tests.test_wrapper_portability import _shapes
    from tests.wrapper_kit import make_job

    jobs = list(load(Path(__file__).resolve().parent.parent / "jobs.toml").jobs)
    for shape, fields in _shapes(tmp_path).items():  # every shape of job file
        (tmp_path / shape).mkdir()
        jobs.append(make_job(tmp_path / shape, shape, **fields).job)
    assert len(jobs) > 10
    for job in jobs:
        want = {k: plain(v) for k, v in job._asdict().items() if k != "name"}
        want["schedule"] = [e.text for e in job.schedule]
        want["env"] = {k: review.env_digest(v) for k, v in job.env}
        review._policies_as_before(want)
        assert review.settings(job) == want, job.name
