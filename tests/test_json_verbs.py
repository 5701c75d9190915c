"""`--json` on the verbs that act: apply, uninstall, run, import. stdout is one JSON
document and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
namespace = "js"
targets = ["cron"]

[jobs.hello]
command = ["echo", "hello from the job"]
schedule = "*/5 * * * *"
"""


def test_apply_and_uninstall_json(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", JOBS)
    dry = json.loads(schedgen("apply", "--json", "--dry-run", "-c", str(cfg)).stdout)
    assert dry["dry_run"] is True and dry["summary"]["create"] == 3
    assert any(line.startswith("would create: crontab block namespace=js") for line in dry["done"])
    assert fake_crontab.writes() == []
    r = schedgen("apply", "--json", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    assert done["namespace"] == "js" and done["dry_run"] is False
    assert "created: crontab block namespace=js (1 job: hello)" in done["done"]
    assert {c["kind"] for c in done["changes"]} == {"runtime", "wrapper", "cron"}
    assert all("diff" not in c for c in done["changes"])
    gone = json.loads(schedgen("uninstall", "--json", "-c", str(cfg)).stdout)
    assert gone["done"][0] == "removed: crontab block namespace=js"
    assert gone["summary"]["delete"] == 3


def test_run_json_is_the_runs_record_and_the_jobs_output_goes_to_stderr(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    from tests.helpers import schedgen_process

    cfg = write_config(tmp_path / "jobs.toml", JOBS)
    r = schedgen_process("run", "hello", "--json", "-c", str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # nothing else on stdout
    assert data["job"] == "hello" and data["exit_code"] == 0 and data["outcome"] == "ok"
    assert data["started_at"].endswith("Z") and data["run_id"]
    assert Path(data["stdout_log"]).read_text() == "hello from the job\n"
    assert "hello from the job" in r.stderr


def test_import_json(tmp_path: Path) -> None:
    table = tmp_path / "crontab"
    table.write_text("*/5 * * * * /usr/local/bin/backup.sh --quick\n")
    r = schedgen("import", "--from", "cron", "--file", str(table), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["from"] == "cron" and data["out"] is None and len(data["jobs"]) == 1
    assert "[jobs." in data["text"] and data["origins"][0]["job"] == data["jobs"][0]
    out = tmp_path / "jobs.toml"
    r = schedgen("import", "--from", "cron", "--file", str(table), "--json", "-o", str(out),
                 cwd=tmp_path)
    data = json.loads(r.stdout)
    assert data["out"] == str(out) and data["text"] is None and out.exists()
