"""Shell completion of job names, run IDs and --target values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from schedgen import completion
from tests.helpers import write_config

JOBS = """
[defaults]
namespace = "comp"
targets = ["cron"]

[jobs.backup]
command = ["true"]
schedule = "@daily"

[jobs.beacon]
command = ["true"]
schedule = "@hourly"

[jobs.report]
command = ["true"]
schedule = "@weekly"
"""


def ctx(**params: object) -> SimpleNamespace:
    return SimpleNamespace(params=params)


def test_targets() -> None:
    assert completion.targets("") == ["launchd", "cron", "systemd", "kubernetes"]
    assert completion.targets("k") == ["kubernetes"]


def test_job_names_from_the_config(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", JOBS)
    assert completion.jobs(ctx(config=str(cfg)), "b") == ["backup", "beacon"]
    assert completion.jobs(ctx(config=str(cfg)), "") == ["backup", "beacon", "report"]
    # a job already given is not offered again (history JOB...)
    assert completion.jobs(ctx(config=str(cfg), jobs=["backup"]), "b") == ["beacon"]
    # no config, or a broken one: nothing, and no error in the prompt
    assert completion.jobs(ctx(config=str(tmp_path / "none.toml")), "") == []
    bad = write_config(tmp_path / "bad.toml", "[jobs.x]\ncommand = 1\n")
    assert completion.jobs(ctx(config=str(bad)), "") == []


def test_run_ids_newest_first(tmp_path: Path, home: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", JOBS)
    from schedgen.config.load import load

    runs = load(cfg).job("backup").log_dir / "runs"  # type: ignore[union-attr]
    for rid in ("20261201T060000Z-1", "20261202T060000Z-2", "20261130T060000Z-3"):
        (runs / rid).mkdir(parents=True)
    (runs / "not-a-dir").write_text("")
    got = completion.run_ids(ctx(config=str(cfg), job="backup"), "")
    assert got == ["20261202T060000Z-2", "20261201T060000Z-1", "20261130T060000Z-3"]
    assert completion.run_ids(ctx(config=str(cfg), job="backup"), "202612") == [
        "20261202T060000Z-2", "20261201T060000Z-1"]
    assert completion.run_ids(ctx(config=str(cfg), job="nosuch"), "") == []
    assert completion.run_ids(ctx(config=str(cfg), job="report"), "") == []  # no runs yet


def test_the_shell_protocol_reaches_them(tmp_path: Path) -> None:
    """As bash asks: the completion script sets these variables and runs schedgen."""
    write_config(tmp_path / "jobs.toml", JOBS)

    script = Path(sys.executable).parent / "schedgen"  # the installed command: its name
    if not script.exists():                          # keys the completion variable
        pytest.skip("the schedgen command is not installed beside this python")

    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "_SCHEDGEN_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(cword)}
        return subprocess.run([str(script)], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60).stdout.split()

    assert complete("schedgen run re", 2) == ["report"]
    assert complete("schedgen status --target sy", 3) == ["systemd"]
    assert complete("schedgen logs ba", 2) == ["backup"]
