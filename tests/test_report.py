"""`schedgen report`: a self-contained page, opened in a real headless Chromium.

Records come from real wrapper runs under faketime (ok, failed, timeout, busy, and two
firings missed while "the machine was off"); the 10,000-run lane repeats one real run's
events at other times (tests/records_kit.py).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from schedgen.commands import report as htmlreport
from schedgen.config.load import loads
from schedgen.machine import ownership as state
from tests.fakes import FakeCrontab
from tests.helpers import write_config
from tests.plugin import isolated
from tests.pngread import colour_counts, pixels
from tests.records_kit import at, replicate
from tests.test_outcomes import INSTALLED, run_at

needs_faketime = pytest.mark.skipif(shutil.which("faketime") is None,
                                    reason="faketime is not installed (.ci/run installs it)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOW = "2026-01-09 12:00:00"

JOBS = """
[defaults]
targets = ["cron"]
log_root = "{root}/logs"
lock_dir = "{root}/locks"
wrapper_dir = "{root}/wrappers"

[jobs.pub]
command = 'case "${{MODE:-ok}}" in fail) exit 3;; slow) sleep 30;; *) echo fine;; esac'
schedule = "40 10,16 * * *"
timeout = "1s"

[jobs.quiet]
description = "Never ran"
command = "true"
schedule = "@reboot"

[jobs.big]
command = "true"
schedule = "* * * * *"
"""


class Dom(HTMLParser):
    """The lanes of a dumped DOM: job -> Counter(outcome -> runs drawn)."""

    def __init__(self) -> None:
        super().__init__()
        self.lanes: dict[str, Counter[str]] = {}
        self.modes: dict[str, str] = {}
        self.elements: Counter[str] = Counter()
        self.table_jobs: list[str] = []
        self._lane = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements[tag] += 1
        if tag == "section" and "lane" in (a.get("class") or ""):
            self._lane = a.get("data-job") or ""
            self.lanes[self._lane] = Counter()
            self.modes[self._lane] = a.get("data-mode") or ""
        elif tag == "tr" and a.get("data-job"):
            self.table_jobs.append(a["data-job"] or "")
        elif a.get("data-outcome") and self._lane:
            self.lanes[self._lane][a["data-outcome"] or ""] += int(a.get("data-count") or 0)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, _guard_bin: Path) -> Iterator[Path]:
    """The report of some real runs and 10,000 copies: made once per worker that runs the
    tests reading it, in a home and with a fake crontab of its own."""
    root = tmp_path_factory.mktemp("page")
    with isolated(root, _guard_bin, FakeCrontab) as mp:
        mp.setenv("TZ", "UTC")
        yield _make_page(root)


def _make_page(root: Path) -> Path:
    config = write_config(root / "jobs.toml", JOBS.format(root=root))
    subprocess.run([sys.executable, "-m", "schedgen", "apply", "-c", str(config)], check=True,
                   capture_output=True)
    record = state.load("default")
    for k, e in record.entries.items():
        record.entries[k] = e._replace(installed_at=INSTALLED)
    state.save(record)
    for when, mode in [("2026-01-05 10:40:02", "ok"), ("2026-01-05 16:40:01", "fail"),
                       ("2026-01-06 10:40:02", "ok"), ("2026-01-06 16:40:01", "slow"),
                       ("2026-01-07 16:40:02", "fail"), ("2026-01-09 10:40:02", "ok")]:
        run_at(root, "pub", when, MODE=mode)
    (root / "locks").mkdir(exist_ok=True)
    fd = os.open(root / "locks" / "pub.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    run_at(root, "pub", "2026-01-07 10:40:01")  # busy
    os.close(fd)
    # Off from the 8th 10:40 to the 8th 16:40: two missed firings. big: one real run, then
    # 10,000 like it, one a minute, 2% failed.
    assert run_at(root, "big", "2026-01-09 11:59:00") == 0
    replicate(root / "logs" / "big", 10_000, at(NOW) - timedelta(minutes=10_001),
              timedelta(minutes=1), outcomes=(("ok", 0),) * 49 + (("failed", 1),))
    out = root / "report.html"
    r = subprocess.run(["faketime", "-f", NOW, sys.executable, "-m", "schedgen", "report",
                        "--out", str(out), "--days", "7", "-c", str(config)],
                       capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {out} (10008 runs in the last 7 days)\n"
    return out


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1280,800", *args],
                          capture_output=True, text=True, timeout=120)


@needs_faketime
def test_the_page_is_self_contained(page: Path) -> None:
    text = page.read_text()
    assert "<script" not in text.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text)
    assert "@import" not in text and "url(" not in text
    assert len(text) < 400_000  # 10,000 runs are aggregated, not drawn one by one


@needs_faketime
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_chromium_shows_a_lane_per_job_and_the_right_marks(page: Path, tmp_path: Path) -> None:
    r = chromium("--dump-dom", page.as_uri())
    assert r.returncode == 0, r.stderr[-2000:]
    dom = Dom()
    dom.feed(r.stdout)
    assert list(dom.lanes) == ["pub", "quiet", "big"] and dom.table_jobs == ["pub", "quiet", "big"]
    events = (page.parent / "logs" / "pub" / "events.jsonl").read_text()
    assert dom.lanes["pub"] == Counter(ok=3, failed=2, timeout=1, busy=1, missed=2), events
    assert dom.modes["pub"] == "marks" and dom.lanes["quiet"] == Counter()
    assert "no runs in the last 7 days" in r.stdout
    # big: every run counted, drawn as at most one rect per outcome per column.
    assert dom.modes["big"] == "binned"
    assert dom.lanes["big"] == Counter(ok=9801, failed=200)
    assert dom.elements["rect"] <= 7 + htmlreport.BINS * 2

    shot = tmp_path / "report.png"
    r = chromium(f"--screenshot={shot}", page.as_uri())
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    width, height, _ = pixels(shot)
    assert (width, height) == (1280, 800)
    colours = colour_counts(shot)
    assert len(colours) > 50, "the screenshot is (nearly) blank"
    for name in ("ok", "failed", "timeout", "busy", "missed"):
        rgb = tuple(int(htmlreport.COLOURS[name][i:i + 2], 16) for i in (1, 3, 5))
        assert colours[rgb] >= 20, f"no {name} marks visible ({colours[rgb]} pixels)"  # type: ignore[index]


def test_fifty_jobs_and_no_runs_still_make_a_page(tmp_path: Path) -> None:
    text = "\n".join(f'[jobs.j{i:02d}]\ncommand = "true"\nschedule = "@daily"\n'
                     f'log_root = "{tmp_path}/logs"\n' for i in range(50))
    config = loads(text, tmp_path / "jobs.toml")
    (tmp_path / "jobs.toml").write_text(text)
    namespace, lanes, start, end = htmlreport.collect(tmp_path / "jobs.toml", 3, at(NOW))
    html = htmlreport.render(namespace, lanes, start, end)
    assert html.count('<section class="lane"') == 50 == len(config.jobs)
    assert html.count("no runs in the last 3 days") == 50
    assert "0 runs in the last 3 days" in html


def test_a_config_without_jobs_is_refused(tmp_path: Path) -> None:
    from tests.helpers import schedgen

    write_config(tmp_path / "jobs.toml", "[defaults]\n")
    r = schedgen("report", "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    assert r.returncode == 2 and not (tmp_path / "r.html").exists()
