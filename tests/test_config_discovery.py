"""Which config a command reads: -c, $SCHEDGEN_CONFIG, ./jobs.toml, then the last apply's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config


def config(folder: Path, namespace: str, job: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(folder / "jobs.toml", f"""
[defaults]
namespace = "{namespace}"
targets = ["cron"]

[jobs.{job}]
command = ["echo", "{job}"]
schedule = "@hourly"
""")


def test_status_from_elsewhere_uses_the_config_the_last_apply_recorded(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    cfg = config(tmp_path / "project", "one", "alpha")
    assert schedgen("apply", cwd=cfg.parent).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = schedgen("status", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("namespace one: in sync\nalpha  [cron]  installed")
    assert r.stderr == f"using {cfg} (recorded by the last apply of namespace one)\n"
    # --json stays clean: the note goes to stderr
    assert json.loads(schedgen("status", "--json", cwd=elsewhere).stdout)["namespace"] == "one"

    # ./jobs.toml, $SCHEDGEN_CONFIG and -c come first, without a word
    here = config(elsewhere, "two", "beta")
    r = schedgen("validate", cwd=elsewhere)
    assert r.returncode == 0 and "using" not in r.stderr and "namespace 'two'" in r.stdout
    here.unlink()
    other = config(tmp_path / "third", "three", "gamma")
    r = schedgen("validate", cwd=elsewhere, env={"SCHEDGEN_CONFIG": str(other)})
    assert r.returncode == 0 and r.stderr == "" and "namespace 'three'" in r.stdout
    r = schedgen("validate", "-c", str(other), cwd=elsewhere)
    assert r.returncode == 0 and r.stderr == "" and "namespace 'three'" in r.stdout


def test_several_recorded_namespaces_ask_for_c(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    a = config(tmp_path / "a", "one", "alpha")
    b = config(tmp_path / "b", "two", "beta")
    assert schedgen("apply", cwd=a.parent).returncode == 0
    assert schedgen("apply", cwd=b.parent).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = schedgen("check", cwd=elsewhere)
    assert r.returncode == 2
    assert (f"no jobs.toml here, and the last applies of several namespaces recorded their "
            f"configs (namespace one: {a}; namespace two: {b}); give one with -c/--config"
            ) in r.stderr
    assert schedgen("check", "-c", str(b), cwd=elsewhere).returncode == 0
    # uninstall by namespace needs no config at all
    r = schedgen("uninstall", "--namespace", "one", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    r = schedgen("status", cwd=elsewhere)  # one namespace left: its config is used
    assert r.returncode == 0 and r.stderr == f"using {b} (recorded by the last apply of " \
                                             "namespace two)\n"


def test_a_recorded_config_that_is_gone_is_not_used(fake_crontab: FakeCrontab,
                                                    tmp_path: Path) -> None:
    cfg = config(tmp_path / "project", "one", "alpha")
    assert schedgen("apply", cwd=cfg.parent).returncode == 0
    cfg.unlink()
    r = schedgen("status", cwd=tmp_path)
    assert r.returncode == 2 and "jobs.toml: no such config file" in r.stderr
