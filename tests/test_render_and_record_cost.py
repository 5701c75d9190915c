"""Work done once, not per job: the job template compiled once per process, the record
written by the C JSON encoder (one artifact per line) and read back the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.machine import ownership
from schedgen.render import artifacts, shipped

JOBS = "[defaults]\ntargets = [\"cron\"]\n" + "".join(
    f'\n[jobs.j{i}]\ncommand = ["echo", "{i}"]\nschedule = "{i} * * * *"\n' for i in range(5))


def test_the_job_template_is_read_and_compiled_once_for_all_jobs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real = shipped.text
    monkeypatch.setattr(shipped, "text", lambda name: read.append(name) or real(name))
    artifacts._environment.cache_clear()
    artifacts._source.cache_clear()  # read once a process, by both paths (render/compiled.py)
    artifacts._key.cache_clear()
    artifacts._RUNNERS.clear()
    compiled: list[str] = []
    try:
        config = loads(JOBS, tmp_path / "jobs.toml")
        env = artifacts._env()
        real_compile = env.compile
        monkeypatch.setattr(env, "compile", lambda *a, **k: compiled.append("x")
                            or real_compile(*a, **k))
        texts = [artifacts.wrapper(j, config) for j in config.jobs]
    finally:
        artifacts._environment.cache_clear()
    assert len(set(texts)) == 5
    assert read.count("job.sh.j2") == 1 and len(compiled) <= 1


def test_the_record_has_an_artifact_per_line_and_reads_back_the_same(home: Path) -> None:
    entries = {f"wrapper:/w/j{i}.sh": ownership.Installed(
        kind="wrapper", path=f"/w/j{i}.sh", sha256="ab" * 32, job=f"j{i}", targets=("cron",),
        mode=0o755, installed_at="2026-01-01T00:00:00Z") for i in range(3)}
    record = ownership.Record("default", entries, "/c/jobs.toml",
                              settings={"j0": {"command": ["echo", "é"]}})
    ownership.save(record)
    text = ownership.record_path("default").read_text()
    assert sum('"kind": "wrapper"' in line for line in text.splitlines()) == 3
    assert len([ln for ln in text.splitlines() if '"kind"' in ln]) == 3
    back = ownership.load("default")
    assert back.entries == record.entries and back.settings == record.settings
    assert back.config == record.config
