""".pre-commit-hooks.yaml: the hooks exist, match jobs.toml files, and their entries work
on several files at once (pre-commit passes every changed jobs.toml)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOOKS = REPO / ".pre-commit-hooks.yaml"


def hooks() -> dict[str, dict[str, str]]:
    """The hooks' one-line keys (the file is a flat list; no YAML library needed)."""
    out: dict[str, dict[str, str]] = {}
    for block in re.split(r"(?m)^- ", HOOKS.read_text())[1:]:
        keys = dict(re.findall(r"(?m)^ *(\w+): (?!>)(.+)$", "  " + block))
        out[keys["id"]] = keys
    return out


def test_hooks_are_offered() -> None:
    found = hooks()
    assert set(found) == {"schedgen-validate", "schedgen-diff"}
    for hook in found.values():
        assert hook["language"] == "python"
        files = re.compile(hook["files"])
        assert files.search("jobs.toml") and files.search("ops/cron/jobs.toml")
        assert not files.search("jobs.toml.bak") and not files.search("myjobs.toml")
    assert found["schedgen-diff"]["stages"] == "[manual]"  # opt-in: it reads the machine


def test_validate_entry_checks_every_file_and_fails_on_any(tmp_path: Path) -> None:
    good = tmp_path / "jobs.toml"
    good.write_text('[jobs.a]\ncommand = "true"\nschedule = "@daily"\n')
    bad = tmp_path / "sub" / "jobs.toml"
    bad.parent.mkdir()
    bad.write_text('[jobs.a]\ncommand = "true"\nschedule = "@daly"\n')
    # pre-commit runs the entry from the hook's venv, where `schedgen` is on PATH.
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    entry = shlex.split(hooks()["schedgen-validate"]["entry"])
    out = subprocess.run([*entry, str(good), str(bad)], capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert f"{good}: valid" in out.stdout
    assert "unknown macro '@daly'" in out.stderr
    ok = subprocess.run([*entry, str(good)], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
