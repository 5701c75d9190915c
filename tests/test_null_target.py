"""A fifth target, defined in tests/null_target/ alone and named in the registry by one
line (SCHEDGEN_TEST_TARGETS), goes through every command as the others do: the
target interface is all the rest of schedgen needs of a target."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from schedgen.targets import registry
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
targets = ["null"]

[jobs.tick]
command = ["sh", "-c", "echo ticked > {out}"]
schedule = "*/5 * * * *"
"""


@pytest.fixture
def null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "null-queue"
    folder.mkdir()
    monkeypatch.setenv(registry.EXTRA_ENV, "tests.null_target")  # the one registry line
    monkeypatch.setenv("SCHEDGEN_NULL_DIR", str(folder))
    return folder


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "jobs.toml", JOBS.replace("{out}", str(tmp_path / "out")))


def test_a_target_from_one_folder_goes_through_every_command(null: Path, tmp_path: Path) -> None:
    cfg = str(_config(tmp_path))
    assert "null" in registry.names()
    assert schedgen("validate", "-c", cfg).returncode == 0

    out = tmp_path / "rendered"
    r = schedgen("render", "-c", cfg, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "null" / "tick.at").is_file() and (out / "wrappers" / "tick.sh").is_file()

    d = schedgen("diff", "-c", cfg, "--json")
    assert d.returncode == 1, d.stderr
    plan = json.loads(d.stdout)
    mine = [c for c in plan["changes"] if c["target"] == "null"]
    assert [(c["kind"], c["action"], c["queued"]) for c in mine] == [("nullfile", "create", False)]

    a = schedgen("apply", "-c", cfg)
    assert a.returncode == 0, a.stderr
    queued = (null / "tick.at").read_text()
    assert "schedgen-managed" in queued
    assert schedgen("diff", "-c", cfg).returncode == 0  # in sync

    # The "scheduler" fires: it runs the job file its entry names, as cron would.
    wrapper = queued.split("run ", 1)[1].strip()
    fired = subprocess.run(["/bin/bash", wrapper], capture_output=True, text=True, timeout=60)
    assert fired.returncode == 0, fired.stderr
    assert (tmp_path / "out").read_text() == "ticked\n"

    s = schedgen("status", "-c", cfg, "--json")
    assert s.returncode == 0, s.stderr
    job = json.loads(s.stdout)["jobs"][0]
    assert job["installed"] and job["drift"] == [] and job["last_run"]["outcome"] == "ok"
    assert job["null"] == {"file": str(null / "tick.at"), "present": True}
    text = schedgen("status", "-c", cfg).stdout
    assert f"  null       {null / 'tick.at'}: queued" in text

    # doctor asks it for its own checks, beside the shared ones.
    d = schedgen("doctor", "-c", cfg)
    assert f"  ok       null folder: {null} is there" in d.stdout.splitlines(), d.stdout + d.stderr

    # A hand edit of its file is drift, named in the target's words.
    (null / "tick.at").write_text(queued + "# edited\n")
    s = schedgen("status", "-c", cfg, "--json")
    assert json.loads(s.stdout)["jobs"][0]["drift"] == ["null file: hand-edited"]
    (null / "tick.at").write_text(queued)

    u = schedgen("uninstall", "-c", cfg)
    assert u.returncode == 0, u.stderr
    assert list(null.iterdir()) == [], u.stdout + u.stderr
    assert list(null.iterdir()) == [] and not Path(wrapper).exists()


def test_its_refusal_is_validates_and_renders_alike(null: Path, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", JOBS.replace('"*/5 * * * *"', '"@reboot"'))
    v = schedgen("validate", "-c", str(cfg))
    assert v.returncode != 0 and "target null: @reboot: the null folder never boots" in v.stderr
    cron_cfg = write_config(tmp_path / "cron.toml", JOBS.replace('["null"]', '["cron"]')
                            .replace('"*/5 * * * *"', '"@reboot"'))
    r = schedgen("render", "-c", str(cron_cfg), "--target", "null", "--out", str(tmp_path / "o"))
    assert "jobs.tick: not rendered for null: null: @reboot: the null folder never boots" in r.stderr


def test_without_its_registry_line_the_name_is_unknown(tmp_path: Path) -> None:
    assert "null" not in registry.names()
    v = schedgen("validate", "-c", str(_config(tmp_path)))
    assert v.returncode != 0 and "unknown target 'null'" in v.stderr
