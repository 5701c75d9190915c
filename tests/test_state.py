"""The ownership record: versioned, true to the disk, refused when newer; applies serialised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen import __version__, state
from schedgen.errors import SchedgenError
from tests.fakes import FakeCrontab, fake_bin, fake_crontab  # noqa: F401
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
targets = ["cron"]
namespace = "ns1"

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = "echo beta"
schedule = "@hourly"
"""


@pytest.fixture
def cfg(fake_crontab: FakeCrontab, tmp_path: Path) -> Path:  # noqa: F811
    return write_config(tmp_path / "jobs.toml", JOBS)


def test_record_lists_path_hash_and_version(cfg: Path, home: Path) -> None:
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    path = state.record_path("ns1")
    assert path == home / ".local/state/schedgen/installed/ns1.json"
    assert path.stat().st_mode & 0o777 == 0o600
    data = json.loads(path.read_text())
    assert data["format"] == state.FORMAT and data["schedgen_version"] == __version__
    assert data["namespace"] == "ns1" and data["config"] == str(cfg)
    wrappers = [a for a in data["artifacts"] if a["kind"] == "wrapper"]
    assert {Path(a["path"]).name for a in wrappers} == {"alpha.sh", "beta.sh"}
    from schedgen.plan import digest

    for a in wrappers:
        assert a["sha256"] == digest(Path(a["path"]).read_text())
        assert a["schedgen_version"] == __version__ and a["mode"] == 0o755
    cron = next(a for a in data["artifacts"] if a["kind"] == "cron")
    assert cron["path"] is None and cron["jobs"] == ["alpha", "beta"]


def test_newer_record_format_is_refused(cfg: Path) -> None:
    path = state.record_path("ns1")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": state.FORMAT + 1, "schedgen_version": "9.0",
                                "artifacts": []}))
    for cmd in ("apply", "diff", "status", "uninstall"):
        r = schedgen(cmd, "-c", str(cfg))
        assert r.returncode == 2, cmd
        assert "written by schedgen 9.0" in r.stderr and "Upgrade schedgen" in r.stderr
    assert "format" in path.read_text()  # left as it was


def test_unreadable_record_is_a_clear_error(cfg: Path) -> None:
    path = state.record_path("ns1")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(SchedgenError, match="cannot read the ownership record"):
        state.load("ns1")


def test_namespaces_have_separate_records(cfg: Path, tmp_path: Path,
                                          fake_crontab: FakeCrontab) -> None:  # noqa: F811
    other = write_config(tmp_path / "other.toml", JOBS.replace("ns1", "ns2")
                         .replace("alpha", "gamma").replace("beta", "delta"))
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    assert schedgen("apply", "-c", str(other)).returncode == 0
    table = fake_crontab.read() or b""
    assert b"namespace=ns1" in table and b"namespace=ns2" in table
    assert schedgen("uninstall", "-c", str(cfg)).returncode == 0
    table = fake_crontab.read() or b""
    assert b"namespace=ns1" not in table and b"namespace=ns2" in table
    assert state.record_path("ns2").exists() and not state.record_path("ns1").exists()


def test_two_applies_at_once_are_serialised(cfg: Path, fake_crontab: FakeCrontab,  # noqa: F811
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Each crontab call takes 0.5 s, so two unserialised applies would both see an
    # empty table and both write it.
    monkeypatch.setenv("FAKE_CRONTAB_DELAY", "0.5")
    cmd = [sys.executable, "-m", "schedgen", "apply", "-c", str(cfg)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert len(fake_crontab.writes()) == 1
    summaries = sorted(o[0].splitlines()[-1] for o in outs)
    assert summaries == ["done: namespace ns1: 0 added, 0 changed, 0 removed, 4 unchanged",
                         "done: namespace ns1: 4 added, 0 changed, 0 removed, 0 unchanged"]
    assert any("waiting for another schedgen apply" in o[0] for o in outs)
    table = fake_crontab.read() or b""
    assert table.count(b"# BEGIN schedgen namespace=ns1") == 1
