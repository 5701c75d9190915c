"""The ownership record is read key by key: damage is exit 3 naming every problem, and
keys a newer minor version adds survive a round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedgen.errors import EXIT_SYSTEM, RecordError
from schedgen.machine import ownership
from schedgen.machine.record_format import FORMAT, Installed, read
from tests.helpers import schedgen, write_config

SHA = "0" * 64
WRAPPER = {"kind": "wrapper", "path": "/w/a.sh", "sha256": SHA, "job": "a", "jobs": [],
           "targets": ["cron"], "mode": 0o755, "schedgen_version": "0.1.0",
           "installed_at": "2026-01-01T00:00:00Z"}


def write_record(namespace: str, data: dict) -> Path:
    path = ownership.record_path(namespace)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def doc(*artifacts: dict, **top: object) -> dict:
    return {"format": FORMAT, "schedgen_version": "0.1.0", "namespace": "ns", "config": "/c",
            "artifacts": list(artifacts), **top}


def test_a_valid_record_reads_into_typed_entries() -> None:
    d = read(doc(WRAPPER, {"kind": "cron", "path": None, "sha256": SHA, "jobs": ["a", "b"]}),
             Path("r.json"), "ns")
    assert d.artifacts[0] == Installed("wrapper", "/w/a.sh", SHA, "a", (), ("cron",), 0o755,
                                       "0.1.0", "2026-01-01T00:00:00Z")
    assert d.artifacts[1].jobs == ("a", "b") and d.artifacts[1].key == "cron"


def test_unknown_keys_from_a_newer_minor_version_are_kept_on_save() -> None:
    write_record("ns", doc({**WRAPPER, "owner_hint": {"x": [1]}}, retention="30d"))
    record = ownership.load("ns")
    assert record.get("wrapper:/w/a.sh") is not None
    ownership.save(record)
    saved = json.loads(ownership.record_path("ns").read_text())
    assert saved["retention"] == "30d"
    assert saved["artifacts"][0]["owner_hint"] == {"x": [1]}
    assert saved["artifacts"][0]["sha256"] == SHA


@pytest.mark.parametrize("bad, where", [
    ({**WRAPPER, "sha256": 5}, "artifacts[0].sha256: expected a string, got an integer"),
    ({**WRAPPER, "sha256": "abc"}, "artifacts[0].sha256: not a SHA-256 hex digest"),
    ({**WRAPPER, "kind": "unit"}, "artifacts[0].kind: 'unit' is not one of"),
    ({**WRAPPER, "targets": "cron"}, "artifacts[0].targets: expected a list of strings"),
    ({**WRAPPER, "mode": True}, "artifacts[0].mode: expected permission bits"),
    ({k: v for k, v in WRAPPER.items() if k != "sha256"}, "artifacts[0].sha256: missing"),
    ({k: v for k, v in WRAPPER.items() if k != "path"}, "artifacts[0].path: missing"),
    ("wrapper", "artifacts[0]: expected an object, got a string"),
])
def test_each_damaged_key_is_named(bad: object, where: str) -> None:
    with pytest.raises(RecordError) as info:
        read(doc(bad), Path("r.json"), "ns")
    assert where in str(info.value) and info.value.exit_code == EXIT_SYSTEM


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(RecordError) as info:
        read(doc({**WRAPPER, "sha256": 1}, {**WRAPPER, "path": "/w/b.sh", "jobs": [3]},
                 namespace="other"), Path("r.json"), "ns")
    text = str(info.value)
    assert "3 problems" in text
    assert "artifacts[0].sha256" in text and "artifacts[1].jobs" in text
    assert "says 'other'" in text


@pytest.mark.parametrize("data, message", [
    ({"artifacts": []}, "no format number"),
    ({"format": True}, "no format number"),
    ([1, 2], "no format number"),
    ({"format": 0}, "record format 0 is not one schedgen ever wrote"),
    ({"format": FORMAT + 1, "schedgen_version": "9.0"}, "Upgrade schedgen"),
])
def test_a_record_of_an_unknown_format_is_refused(data: object, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        read(data, Path("r.json"), "ns")


def test_a_damaged_record_is_exit_3_for_every_command_and_changes_nothing(
        tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", '[defaults]\nnamespace = "ns"\ntargets = ["cron"]'
                       '\n[jobs.a]\ncommand = "true"\nschedule = "@daily"\n')
    path = write_record("ns", doc({**WRAPPER, "sha256": 7}))
    before = path.read_text()
    for cmd in ("diff", "apply", "status", "uninstall"):
        r = schedgen(cmd, "-c", str(cfg))
        assert r.returncode == 3, (cmd, r.stdout, r.stderr)
        assert "artifacts[0].sha256" in r.stderr and "Traceback" not in r.stderr
    assert path.read_text() == before
