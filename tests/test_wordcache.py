"""The schedules in words kept between runs: used only when the same code wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedgen import paths
from schedgen.render import wordcache
from schedgen.schedule import describe
from tests.helpers import schedgen, schedgen_process, write_config

JOBS = """
[defaults]
targets = ["cron"]

[jobs.one]
command = ["echo", "one"]
schedule = "17 3 * * 1"

[jobs.two]
command = ["echo", "two"]
schedule = ["0 5 1 * *", "@hourly"]
"""


@pytest.fixture
def cfg(tmp_path: Path, fake_crontab) -> Path:
    return write_config(tmp_path / "jobs.toml", JOBS)


def _file() -> Path:
    return paths.cache_dir() / wordcache.FILE


def test_apply_keeps_the_words_and_diff_says_the_same_with_or_without_them(cfg: Path) -> None:
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    texts = json.loads(_file().read_text())["texts"]
    assert texts["17 3 * * 1"] == describe._explain("17 3 * * 1")
    with_words = schedgen_process("diff", "-c", str(cfg))
    _file().unlink()
    without = schedgen_process("diff", "-c", str(cfg))
    assert (with_words.returncode, with_words.stdout) == (without.returncode, without.stdout) \
        == (0, without.stdout)
    assert not _file().exists()  # diff reads the cache, never writes it


def test_words_written_by_other_code_are_not_used(cfg: Path, monkeypatch) -> None:
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    data = json.loads(_file().read_text())
    # Same key, one entry tampered into two lines: that one is described afresh.
    data["texts"]["17 3 * * 1"] = "At 03:17\n* * * * * rm -rf ~"
    _file().write_text(json.dumps(data))
    monkeypatch.setattr(describe, "KNOWN", {})
    wordcache.load(_file().parent)
    assert "17 3 * * 1" not in describe.KNOWN and "0 5 1 * *" in describe.KNOWN
    # Another key (describers upgraded, describe.py edited): nothing is used.
    data["texts"]["17 3 * * 1"] = "Never, said the old code"
    data["key"] = "0" * 64
    _file().write_text(json.dumps(data))
    monkeypatch.setattr(describe, "KNOWN", {})
    wordcache.load(_file().parent)
    assert describe.KNOWN == {}
    r = schedgen_process("diff", "-c", str(cfg))
    assert r.returncode == 0 and "Never, said" not in r.stdout


def test_the_key_follows_the_describing_code(tmp_path: Path, monkeypatch) -> None:
    code = tmp_path / "describe.py"
    code.write_text("x = 1\n")
    monkeypatch.setattr(wordcache, "_code_files", lambda: [code])
    before = wordcache.key()
    assert wordcache.key() == before
    code.write_text("x = 22\n")  # another size (and mtime)
    assert wordcache.key() != before


def test_an_unwritable_cache_costs_only_time(cfg: Path) -> None:
    paths.cache_dir().parent.mkdir(parents=True, exist_ok=True)
    paths.cache_dir().write_text("not a folder")
    assert schedgen("apply", "-c", str(cfg)).returncode == 0
    r = schedgen_process("diff", "-c", str(cfg))
    assert r.returncode == 0, r.stderr
