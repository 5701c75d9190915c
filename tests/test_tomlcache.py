"""jobs.toml as parsed, kept between runs (config/tomlcache.py): the same document as
tomllib reads, written only by commands that write, and any other text parsed afresh."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from schedgen import paths
from schedgen.config import load as cfg
from schedgen.config import tomlcache
from schedgen.render.artifacts import storing_compiled_templates
from tests.helpers import schedgen_process, write_config

CONFIG = """
[defaults]
targets = ["cron"]
env = { A = "x y", B = "é" }

[jobs.a]
command = ["echo", "a"]
schedule = "*/5 * * * *"
timeout = "1h"
description = "it's 100% \\"quoted\\""

[jobs.b]
command = "echo b | tr b c"
schedule = ["@daily", "0 3 * * 1-5"]
lock = { name = "x", wait = 5 }
"""


def _kept(home: Path) -> list[Path]:
    return sorted((home / ".cache/schedgen" / tomlcache.FOLDER).glob("*"))


def test_a_kept_document_is_tomllibs_and_is_read_back_instead_of_parsed(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tomlcache._PENDING.clear()  # what other tests' loads left to keep
    path = write_config(tmp_path / "jobs.toml", CONFIG)
    text = path.read_text()
    first = cfg.load(path)
    assert _kept(home) == []  # not a writing command: nothing kept
    with storing_compiled_templates():
        again = cfg.load(path)
    assert again == first and len(_kept(home)) == 1
    assert tomlcache.read(paths.cache_dir(), path, text) == tomllib.loads(text)
    parsed: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda t: parsed.append(t) or real(t))
    assert cfg.load(path) == first and parsed == []  # read back, not parsed
    path.write_text(text.replace('"echo", "a"', '"echo", "A"'))
    changed = cfg.load(path)
    assert parsed and changed.jobs[0].command == ("echo", "A")  # another text: parsed


def test_a_document_marshal_cannot_hold_or_a_damaged_file_is_parsed(
        tmp_path: Path, home: Path) -> None:
    tomlcache._PENDING.clear()  # what other tests' loads left to keep
    data: dict[str, Any] = {"when": __import__("datetime").date(2026, 1, 1)}
    tomlcache.remember(tmp_path / "d.toml", "t", data)
    assert tomlcache._PENDING == {}  # a date: not kept
    path = write_config(tmp_path / "jobs.toml", CONFIG)
    with storing_compiled_templates():
        cfg.load(path)
    [kept] = _kept(home)
    for damage in (b"", b"garbage", kept.read_bytes().split(b"\n")[0] + b"\n\xff\x00"):
        kept.write_bytes(damage)
        assert tomlcache.read(paths.cache_dir(), path, path.read_text()) is None
        assert cfg.load(path).jobs  # parsed afresh


def test_diff_and_status_keep_nothing_apply_does(
        tmp_path: Path, home: Path, fake_crontab: Any) -> None:
    path = write_config(tmp_path / "jobs.toml", CONFIG)
    assert schedgen_process("diff", "-c", str(path)).returncode == 1
    assert schedgen_process("status", "-c", str(path)).returncode in (0, 3)
    assert _kept(home) == []
    assert schedgen_process("apply", "-c", str(path)).returncode == 0
    assert len(_kept(home)) == 1
    r = schedgen_process("diff", "-c", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
