"""An in-sync apply, diff and status prove it without rendering; anything else still shows.

Each artifact's record carries a digest of what it was made from (render/source.py).
These tests count the renders (the real render functions, wrapped) and edit the
installed files by hand, as a user would.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from schedgen.commands import apply as ap
from schedgen.machine import ownership as state
from schedgen.plan import changes as p
from schedgen.render import artifacts, shipped, source
from schedgen.targets.cron import render as cron_render
from schedgen.targets.launchd import render as launchd_render
from schedgen.targets.systemd import render as systemd_render
from tests.fakes import FakeCrontab, FakeLaunchctl, FakeSystemctl
from tests.helpers import schedgen, write_config

JOBS = """
[defaults]
targets = ["cron"]

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = "echo beta"
schedule = "@hourly"
targets = ["cron", "launchd"]

[jobs.gamma]
command = ["echo", "gamma"]
schedule = "0 3 * * *"
targets = ["systemd"]
"""
USER = b"# mine\nSHELL = /bin/bash\n0 1 * * * echo mine \\% done\n"


@pytest.fixture
def installed(fake_crontab: FakeCrontab, fake_launchctl: FakeLaunchctl,
              fake_systemctl: FakeSystemctl, tmp_path: Path) -> Path:
    fake_crontab.set(USER)
    config = write_config(tmp_path / "jobs.toml", JOBS)
    r = schedgen("apply", "-c", str(config))
    assert r.returncode == 0, r.stderr
    return config


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Renders by kind, counted in the real render functions."""
    count: Counter[str] = Counter()

    def counting(module: object, name: str, kind: str) -> None:
        real = getattr(module, name)

        def wrapped(*args: object, **kwargs: object) -> str:
            count[kind] += 1
            return str(real(*args, **kwargs))
        monkeypatch.setattr(module, name, wrapped)

    counting(artifacts, "wrapper", "wrapper")
    counting(launchd_render, "plist", "plist")
    counting(systemd_render, "service", "service")
    counting(systemd_render, "timer", "timer")
    counting(cron_render, "cron_block", "cron")
    return count


def pending(config: Path) -> dict[str, p.Change]:
    return {c.key: c for c in ap.diff(config).changes if c.pending}


def test_in_sync_apply_diff_and_status_render_nothing(installed: Path,
                                                      renders: Counter[str]) -> None:
    for args in (("apply",), ("diff",), ("status",), ("apply", "--dry-run")):
        r = schedgen(*args, "-c", str(installed))
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    assert "0 to add, 0 to change, 0 to remove" in schedgen("diff", "-c", str(installed)).stdout
    assert renders == Counter()


def test_the_record_keeps_a_source_digest_per_artifact(installed: Path) -> None:
    data = json.loads(state.record_path("default").read_text())
    kinds = {a["kind"] for a in data["artifacts"] if "source" in a}
    assert kinds == {"runtime", "wrapper", "cron", "plist", "service", "timer"}


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "# edited by hand\n")


@pytest.mark.parametrize("what", ["wrapper", "plist", "service", "timer"])
def test_a_hand_edited_file_is_still_found(installed: Path, renders: Counter[str],
                                           home: Path, what: str) -> None:
    path = {"wrapper": home / ".local/share/schedgen/wrappers/beta.sh",
            "plist": home / "Library/LaunchAgents/local.schedgen.beta.plist",
            "service": home / ".config/systemd/user/local.schedgen.gamma.service",
            "timer": home / ".config/systemd/user/local.schedgen.gamma.timer"}[what]
    assert path.is_file(), sorted(str(x) for x in home.rglob("*"))
    _edit(path)
    changes = pending(installed)
    assert list(changes) == [f"{what}:{path}"]
    c = changes[f"{what}:{path}"]
    assert c.action == p.UPDATE and c.edited and "# edited by hand" in c.unified_diff()
    assert renders == Counter({what: 1})  # the one that differs, and only it
    r = schedgen("apply", "-c", str(installed))
    assert r.returncode == 0, r.stderr
    assert "# edited by hand" not in path.read_text()
    assert pending(installed) == {}


def test_a_changed_mode_is_still_found(installed: Path, home: Path) -> None:
    path = home / ".local/share/schedgen/wrappers/alpha.sh"
    path.chmod(0o755)
    c = pending(installed)[f"wrapper:{path}"]
    assert c.action == p.UPDATE and "mode 755" in c.note


def test_a_hand_edited_crontab_block_is_still_found(installed: Path, renders: Counter[str],
                                                    fake_crontab: FakeCrontab) -> None:
    table = fake_crontab.read()
    assert table is not None
    fake_crontab.set(table.replace(b"--cron\n", b"--cron # hand\n", 1))
    changes = pending(installed)
    assert list(changes) == ["cron"] and changes["cron"].edited
    assert renders == Counter({"cron": 1})
    assert schedgen("apply", "-c", str(installed)).returncode == 0
    assert fake_crontab.read() == table


def test_a_changed_setting_renders_that_job_again(installed: Path, renders: Counter[str],
                                                  home: Path) -> None:
    installed.write_text(installed.read_text().replace('"echo beta"', '"echo BETA"'))
    changes = pending(installed)
    wrappers = home / ".local/share/schedgen/wrappers"
    assert set(changes) == {f"wrapper:{wrappers / 'beta.sh'}"}
    # beta's files and the crontab block it is in; alpha's and gamma's are not rendered
    assert renders == Counter({"wrapper": 1, "plist": 1, "cron": 1})


def test_a_changed_runtime_text_renders_again(installed: Path, renders: Counter[str],
                                              home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = shipped.text
    monkeypatch.setattr(shipped, "text", lambda name: real(name) + (
        "sg_newer_runtime=1\n" if name == "runtime/70-main.bash" else ""))
    for cached in (artifacts.runtime_text, source.templates_digest, source._base):
        cached.cache_clear()
    try:
        changes = pending(installed)
        runtime = home / ".local/share/schedgen/wrappers/schedgen-runtime.default.bash"
        assert set(changes) == {f"runtime:{runtime}"}
        # every artifact's source names the templates: all rendered, found equal
        assert renders == Counter({"wrapper": 3, "plist": 1, "service": 1, "timer": 1,
                                   "cron": 1})
    finally:
        monkeypatch.undo()
        for cached in (artifacts.runtime_text, source.templates_digest, source._base):
            cached.cache_clear()


def test_a_record_without_source_digests_is_adopted_then_fast(installed: Path,
                                                              renders: Counter[str]) -> None:
    path = state.record_path("default")
    data = json.loads(path.read_text())
    for a in data["artifacts"]:
        a.pop("source", None)  # as an older schedgen wrote it
    path.write_text(json.dumps(data))
    assert pending(installed) == {}
    assert renders["wrapper"] == 3  # compared by rendering, as before
    assert schedgen("apply", "-c", str(installed)).returncode == 0
    renders.clear()
    assert pending(installed) == {}
    assert renders == Counter()


def test_a_bad_source_digest_is_a_damaged_record(installed: Path) -> None:
    path = state.record_path("default")
    data = json.loads(path.read_text())
    data["artifacts"][0]["source"] = "not a digest"
    path.write_text(json.dumps(data))
    r = schedgen("diff", "-c", str(installed))
    assert r.returncode == 3 and "artifacts[0].source: not a SHA-256 hex digest" in r.stderr


def test_the_source_digest_names_every_shipped_template() -> None:
    folder = shipped._folder()
    assert folder is not None
    assert sorted(source.TEMPLATES) == sorted(
        f.name for f in folder.iterdir() if f.is_file() and f.name != "__init__.py")
    assert sorted(artifacts.RUNTIME_PARTS) == sorted(
        f.name for f in (folder / "runtime").iterdir() if f.is_file())


def test_settings_kept_by_an_in_sync_apply_are_the_jobs(installed: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.config import load
    from schedgen.plan import review

    calls: list[str] = []
    real = review.settings
    monkeypatch.setattr(review, "settings", lambda job: calls.append(job.name) or real(job))
    assert schedgen("apply", "-c", str(installed)).returncode == 0
    assert calls == []  # proven unchanged: not computed again
    config = load.load(installed)
    kept = state.load("default").settings
    assert kept == {j.name: real(j) for j in config.jobs}
    installed.write_text(installed.read_text().replace('"echo beta"', '"echo BETA"'))
    assert schedgen("apply", "-c", str(installed)).returncode == 0
    assert calls == ["alpha", "beta"]  # alpha shares the crontab block that changed
    assert state.load("default").settings == {j.name: real(j) for j in load.load(installed).jobs}


def test_a_change_to_schedgens_own_code_is_not_taken_for_in_sync(tmp_path: Path) -> None:
    """The digest covers the code that renders: a module edited in place (an editable
    install) or reinstalled at the same version changes it."""
    pkg = tmp_path / "pkg"
    (pkg / "render").mkdir(parents=True)
    (pkg / "render" / "x.py").write_text("A = 1\n")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython.pyc").write_bytes(b"\0")
    before = source.tree_digest(str(pkg))
    assert source.tree_digest(str(pkg)) == before
    (pkg / "__pycache__" / "y.cpython.pyc").write_bytes(b"\0")  # byte code is not code
    assert source.tree_digest(str(pkg)) == before
    (pkg / "render" / "x.py").write_text("A = 2\n")
    os.utime(pkg / "render" / "x.py", ns=(1, 1))
    assert source.tree_digest(str(pkg)) != before
    assert source.code_digest() == source.tree_digest(
        str(Path(source.__file__).resolve().parent.parent))
