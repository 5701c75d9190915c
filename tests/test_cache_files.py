"""The caches a render trusts (render/compiled.py's code, config/tomlcache.py's document)
against damaged, hostile or odd files: the files installed are jinja2's and tomllib's
either way, and no command hangs or writes through a planted link."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from schedgen.config import tomlcache
from schedgen.render import compiled, wordcache
from schedgen.schedule import describe
from tests.helpers import write_config

CONFIG = """
[defaults]
targets = ["cron"]

[jobs.a]
command = ["echo", "marker-word"]
schedule = "*/5 * * * *"
description = "the description"
"""


def _render(cfg: Path, out: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    return subprocess.run([sys.executable, "-m", "schedgen", "render", "-c", str(cfg), "--out",
                           str(out)], capture_output=True, text=True, env=env, timeout=30)


def _files(out: Path) -> dict[str, bytes]:
    return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}


def _stored(home: Path) -> tuple[Path, Path]:
    cache = home / ".cache/schedgen"
    code = next(cache.glob("jinja-*")) / "crontab.j2.code"
    [toml] = (cache / tomlcache.FOLDER).glob("*")
    return code, toml


def test_a_damaged_but_readable_cache_file_never_changes_the_files(
        tmp_path: Path, home: Path) -> None:
    """A bit flipped on disk inside a text the code or the document holds: marshal reads it
    fine, so only a check of the body itself can tell."""
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    assert _render(cfg, tmp_path / "a", home).returncode == 0
    code, toml = _stored(home)
    for path, old, new in ((code, b"lines between BEGIN", b"lines between BEGIX"),
                           (toml, b"marker-word", b"marker-wore")):
        data = path.read_bytes()
        assert data.count(old) == 1
        path.write_bytes(data.replace(old, new))
    r = _render(cfg, tmp_path / "b", home)
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "b") == _files(tmp_path / "a")


def test_a_fifo_in_place_of_a_cache_file_does_not_hang_a_command(
        tmp_path: Path, home: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    assert _render(cfg, tmp_path / "a", home).returncode == 0
    for path in (*_stored(home), home / ".cache/schedgen" / wordcache.FILE):
        path.unlink()
        os.mkfifo(path)
    r = _render(cfg, tmp_path / "b", home)  # times out (raises) if a read blocks
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "b") == _files(tmp_path / "a")


def test_a_link_planted_where_the_cache_writes_is_not_written_through(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A shared or foreign cache folder: the temporary name must not be guessable-and-followed."""
    folder = tmp_path / "cache"
    (folder / tomlcache.FOLDER).mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    name = "crontab.j2.code"
    os.symlink(victim, folder / f".{name}.{os.getpid()}")
    compiled.store(folder, "crontab.j2", "0" * 64, compile("x = 1", "t", "exec"))
    tomlcache._PENDING.clear()
    tomlcache.remember(tmp_path / "jobs.toml", "t", {"a": 1})
    [kept] = tomlcache._PENDING
    os.symlink(victim, folder / tomlcache.FOLDER / f".{kept}.{os.getpid()}")
    tomlcache.store(folder)
    monkeypatch.setitem(describe.KNOWN, "@never-seen", "a description")
    os.symlink(victim, folder / f".{wordcache.FILE}.{os.getpid()}")
    wordcache.store(folder)
    assert victim.read_text() == "precious\n"
    assert (folder / name).is_file() and (folder / tomlcache.FOLDER / kept).is_file()


def test_cache_files_of_another_user_are_not_run(tmp_path: Path, monkeypatch: Any) -> None:
    """A HOME shared with another account (sudo keeping HOME): code it could write is not
    run, a document it could write is not read."""
    folder = tmp_path / "cache"
    code = compile("def root(context, missing, environment):\n    yield 'x'\n", "t", "exec")
    compiled.store(folder, "t.j2", "k" * 64, code)
    tomlcache._PENDING.clear()
    path = tmp_path / "jobs.toml"
    tomlcache.remember(path, "t", {"a": 1})
    tomlcache.store(folder)
    assert compiled.load(folder, "t.j2", "k" * 64) is not None
    assert tomlcache.read(folder, path, "t") == {"a": 1}
    me = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: me + 1)  # as if the files were another's
    assert compiled.load(folder, "t.j2", "k" * 64) is None
    assert tomlcache.read(folder, path, "t") is None


BAD = """
[defaults]
targets = ["cron"]

[jobs.a]
command = ["echo", "a"]
schedule = "61 * * * *"
timeout = "soon"

[jobs.b]
command = 5
schedule = "@daily"
lokc = 1
"""


def _problems(path: Path) -> str:
    from schedgen.config import load as cfg
    from schedgen.errors import ConfigError

    try:
        cfg.load(path)
    except ConfigError as exc:
        return str(exc)
    raise AssertionError("the config loaded")


def test_a_kept_document_reports_every_problem_as_a_parse_does(tmp_path: Path, home: Path) -> None:
    """Problems come from the document and the text alike, kept or parsed; a text tomllib
    rejects is never kept (so the error stays tomllib's, with its line)."""
    from schedgen import paths
    from schedgen.render.artifacts import storing_compiled_templates

    tomlcache._PENDING.clear()
    path = write_config(tmp_path / "jobs.toml", BAD)
    fresh = _problems(path)
    assert "jobs.a" in fresh and "jobs.b" in fresh and fresh.count("\n  ") >= 4
    tomlcache.remember(path, path.read_text(), __import__("tomllib").loads(path.read_text()))
    tomlcache.store(paths.cache_dir())
    assert tomlcache.read(paths.cache_dir(), path, path.read_text()) is not None
    assert _problems(path) == fresh  # from the kept document
    path.write_text(BAD + "\n[jobs.c\n")
    broken = _problems(path)
    with storing_compiled_templates():
        assert _problems(path) == broken
    assert tomlcache.read(paths.cache_dir(), path, path.read_text()) is None
    assert "syntax error" in broken and "(line 15)" in broken
