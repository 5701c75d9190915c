"""The ownership record: versioned, true to the disk, refused when newer; applies serialised."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen import __version__
from schedgen.errors import RecordError
from schedgen.machine import ownership as state
from tests.fakes import FakeCrontab
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
def cfg(fake_crontab: FakeCrontab, tmp_path: Path) -> Path:
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
    from schedgen.plan.changes import digest

    for a in wrappers:
        assert a["sha256"] == digest(Path(a["path"]).read_text())
        assert a["schedgen_version"] == __version__ and a["mode"] == 0o700
    cron = next(a for a in data["artifacts"] if a["kind"] == "cron")
    assert cron["path"] is None and cron["jobs"] == ["alpha", "beta"]


def test_newer_record_format_is_refused(cfg: Path) -> None:
    path = state.record_path("ns1")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": state.FORMAT + 1, "schedgen_version": "9.0",
                                "artifacts": []}))
    for cmd in ("apply", "diff", "status", "uninstall"):
        r = schedgen(cmd, "-c", str(cfg))
        assert r.returncode == 3, cmd  # a record problem: "a system operation failed"
        assert "written by schedgen 9.0" in r.stderr and "Upgrade schedgen" in r.stderr
    assert "format" in path.read_text()  # left as it was


def test_unreadable_record_is_a_clear_error(cfg: Path) -> None:
    path = state.record_path("ns1")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(RecordError, match="cannot read the ownership record"):
        state.load("ns1")


def test_namespaces_have_separate_records(cfg: Path, tmp_path: Path,
                                          fake_crontab: FakeCrontab) -> None:
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


def test_two_applies_at_once_are_serialised(cfg: Path, fake_crontab: FakeCrontab,
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


def test_applies_with_different_state_dirs_take_turns(tmp_path: Path) -> None:
    """The crontab is per user, so the apply lock is too, whatever XDG_STATE_HOME says."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = FakeCrontab(bin_dir, tmp_path)
    cfg = tmp_path / "jobs.toml"
    cfg.write_text('[jobs.a]\ntargets = ["cron"]\ncommand = ["true"]\nschedule = "@daily"\n')
    env = {**os.environ, **fake.env, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "XDG_STATE_HOME": str(tmp_path / "other-state")}
    env.pop("PYTHONUNBUFFERED", None)  # a pipe, as a user's: lines in blocks, not each alone
    with state.apply_lock():
        proc = subprocess.Popen([sys.executable, "-m", "schedgen", "apply", "-c", str(cfg)],
                                env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=60), "apply neither waited nor finished"
        first = proc.stdout.readline()
        assert first.startswith("waiting for another schedgen apply to finish"), first
        assert fake.writes() == []  # it waits before touching anything
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "done: namespace default: 3 added" in out
    assert not (tmp_path / "home" / ".local/state/schedgen/installed").exists()
    assert (tmp_path / "other-state/schedgen/installed/default.json").exists()


def test_apply_lock_is_one_private_folder_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(state.TEST_LOCK)
    path = state.lock_path()
    assert path == Path("/tmp") / f"schedgen-{os.getuid()}" / "apply.lock"
    monkeypatch.setenv("XDG_STATE_HOME", "/elsewhere")
    monkeypatch.setenv("HOME", "/nowhere")
    assert state.lock_path() == path  # neither HOME nor the state dir moves it
    with state.apply_lock():
        st = os.lstat(path.parent)
        assert st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o700



def test_the_records_lines_are_json_dumps_of_each_value() -> None:
    # The record's layout encodes with json's C encoder made once (machine/ownership.py):
    # byte for byte what json.dumps of each value gives, laid out the same way.
    import json

    from schedgen.machine.ownership import _layout

    values = ["plain", "é ünïcode ✓", "\x00\x1f\x7f\u2028", 'q"uo\\te', "", 0, -7, 2**70,
              1.5, 1e-300, float("inf"), True, False, None, [1, [2, {"a": None}]],
              {"k": {"é": [1.25, "x"]}, "": 0}]
    data = {"format": 1, "list": values, "map": {f"k{i}": v for i, v in enumerate(values)},
            **{f"top{i}": v for i, v in enumerate(values)}}

    def value(v: object) -> str:  # the layout, by json.dumps value by value
        if isinstance(v, list) and v:
            return "[\n" + ",\n".join(f"    {json.dumps(x)}" for x in v) + "\n  ]"
        if isinstance(v, dict) and v:
            return "{\n" + ",\n".join(f"    {json.dumps(k)}: {json.dumps(x)}"
                                      for k, x in v.items()) + "\n  }"
        return json.dumps(v)

    want = "{\n" + ",\n".join(f"  {json.dumps(k)}: {value(v)}" for k, v in data.items()) + "\n}\n"
    assert _layout(data) == want
