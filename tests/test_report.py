"""`schedgen report`: a self-contained page, opened in a real headless Chromium.

Records come from real wrapper runs under faketime (ok, failed, timeout, busy, and two
firings missed while "the machine was off"); the 10,000-run lane repeats one real run's
events at other times (tests/records_kit.py).
"""

from __future__ import annotations

import fcntl
import json
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
from urllib.parse import unquote

import pytest

from schedgen.commands import report as htmlreport
from schedgen.config.load import loads
from schedgen.machine import ownership as state
from tests import faked_clock, report_scenes
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
        self.drawn: Counter[str] = Counter()  # job -> elements drawn for its runs
        self.counts: dict[str, list[str]] = {}  # job -> its count labels
        self.failures: list[str] = []  # the failure list's anchors, in order
        self.hrefs: list[str] = []
        self.elements: Counter[str] = Counter()
        self._count = False
        self.table_jobs: list[str] = []
        self._lane = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements[tag] += 1
        if tag == "section" and "lane" in (a.get("class") or ""):
            self._lane = a.get("data-job") or ""
            self.lanes[self._lane] = Counter()
            self.modes[self._lane] = a.get("data-mode") or ""
            self.counts[self._lane] = []
        elif tag == "tr" and a.get("data-job"):
            self._lane = ""
            self.table_jobs.append(a["data-job"] or "")
        elif tag == "li" and a.get("id"):
            self.failures.append(a["id"] or "")
        elif a.get("data-outcome") and self._lane:
            self.lanes[self._lane][a["data-outcome"] or ""] += int(a.get("data-count") or 0)
            self.drawn[self._lane] += 1
        elif tag == "span" and a.get("class") == "count" and self._lane:
            self._count = True
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")

    def handle_data(self, data: str) -> None:
        if self._count:
            self.counts[self._lane].append(data)
            self._count = False


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
    r = faked_clock.run(NOW, [sys.executable, "-m", "schedgen", "report", "--out", str(out),
                              "--days", "7", "-c", str(config)], frozen=True,
                        capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {out} (10008 runs in the last 7 days)\n"
    return out


def chromium(*args: str, height: int = 800) -> subprocess.CompletedProcess[str]:
    """One headless Chromium; given both --dump-dom and --screenshot, one start does both
    (a start costs about a second of CPU)."""
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--window-size=1280,{height}", *args],
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
    shot = tmp_path / "report.png"
    r = chromium("--dump-dom", f"--screenshot={shot}", page.as_uri())
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
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
    assert dom.drawn["big"] <= htmlreport.BINS * 2

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


# --- screenshots of a fresh install and of a month with failures, checked by their pixels

needs_browser = pytest.mark.skipif(CHROMIUM is None or shutil.which("faketime") is None,
                                   reason="chromium and faketime are installed by .ci/run")
# The page's layout (report.CSS) at a 1280-pixel window: 32px of body padding either side,
# a 200px name column, then the lane's track across the rest.
TRACK_X0, TRACK_X1 = 232, 1248
LANE_BG, PLOT_BG = (0xF5, 0xF7, 0xFA), (0xEE, 0xF3, 0xFB)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return (int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16))


class Shot:
    """A screenshot of a page: its lanes' track and plot bands found by their backgrounds
    just inside the track's left edge, and a time's x from the page's window."""

    def __init__(self, png: Path, page_text: str) -> None:
        self.width, self.height, self.px = pixels(png)
        m = re.search(r'<body data-start="(\d+)" data-end="(\d+)">', page_text)
        assert m, "the page does not say its window"
        self.start, self.end = int(m[1]), int(m[2])
        assert self.px[self.at(TRACK_X0 - 2, self.bands(LANE_BG)[0][0])] != LANE_BG, \
            "the track does not start where the layout says"
        self.tracks, self.plots = self.bands(LANE_BG), self.bands(PLOT_BG)

    def at(self, x: int, y: int) -> int:
        return y * self.width + x

    def bands(self, colour: tuple[int, int, int]) -> list[tuple[int, int]]:
        rows = [y for y in range(self.height)
                if colour in (self.px[self.at(TRACK_X0 + 2, y)], self.px[self.at(TRACK_X0 + 4, y)])]
        out: list[tuple[int, int]] = []
        for y in rows:
            if out and y == out[-1][1] + 1:
                out[-1] = (out[-1][0], y)
            else:
                out.append((y, y))
        return [b for b in out if b[1] - b[0] >= 10]

    def x(self, when: str) -> int:
        t = at(when).timestamp()
        return round(TRACK_X0 + (t - self.start) / (self.end - self.start) * (TRACK_X1 - TRACK_X0))

    def seen(self, band: tuple[int, int], x: int, colour: str, slack: int = 3) -> int:
        """Pixels of a colour in a band within ``slack`` pixels of x."""
        c = rgb(colour)
        return sum(1 for y in range(band[0], band[1] + 1)
                   for xx in range(x - slack, x + slack + 1) if self.px[self.at(xx, y)] == c)

    def top(self, band: tuple[int, int], x: int, colour: str, slack: int = 3) -> int | None:
        """The highest row of a band with the colour near x (the plot's line there)."""
        c = rgb(colour)
        return next((y for y in range(band[0], band[1] + 1)
                     if any(self.px[self.at(xx, y)] == c for xx in range(x - slack, x + slack + 1))),
                    None)


def _scene(tmp_path_factory: pytest.TempPathFactory, guard: Path, make: str,
           ) -> Iterator[report_scenes.Scene]:
    root = tmp_path_factory.mktemp(make)
    with isolated(root, guard, FakeCrontab) as mp:
        mp.setenv("TZ", "UTC")
        yield getattr(report_scenes, make)(root)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, _guard_bin: Path,
          ) -> Iterator[report_scenes.Scene]:
    yield from _scene(tmp_path_factory, _guard_bin, "fresh")


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory, _guard_bin: Path,
          ) -> Iterator[report_scenes.Scene]:
    yield from _scene(tmp_path_factory, _guard_bin, "month")


def _look(scene: report_scenes.Scene, tmp_path: Path, height: int) -> tuple[Dom, Shot]:
    png = tmp_path / "shot.png"
    r = chromium("--dump-dom", f"--screenshot={png}", scene.page.as_uri(), height=height)
    assert r.returncode == 0 and png.exists(), r.stderr[-2000:]
    dom = Dom()
    dom.feed(r.stdout)
    return dom, Shot(png, scene.page.read_text())


def _links_resolve(scene: report_scenes.Scene, dom: Dom) -> list[str]:
    logs = [h for h in dom.hrefs if h.endswith(".log")]
    for h in logs:
        assert "//" not in h and not h.startswith("/"), h
        assert (scene.page.parent / unquote(h)).is_file(), h
    return logs


@needs_browser
def test_a_fresh_install_fills_the_width_and_shows_each_failure(
        fresh: report_scenes.Scene, tmp_path: Path) -> None:
    # The window is the hour there is (from the install, a minute before), not 7 days.
    assert fresh.stdout.endswith("(60 runs since 2026-01-09 10:59)\n"), fresh.stdout
    dom, shot = _look(fresh, tmp_path, 900)
    assert shot.end - shot.start == 61 * 60
    assert dom.lanes["sync"] == Counter(ok=57, failed=2, timeout=1)
    assert dom.lanes["nightly"] == Counter() and dom.counts["sync"] == []
    assert len(shot.tracks) >= 2 and len(shot.plots) >= 2
    sync, nightly = shot.tracks[0], shot.tracks[1]
    failed, timeout, ok = (htmlreport.COLOURS[k] for k in ("failed", "timeout", "ok"))
    for when, mode in fresh.real["sync"]:
        colour = {"fail": failed, "slow": timeout, "ok": ok}[mode]
        assert shot.seen(sync, shot.x(when), colour) >= 20, (when, mode)
    # Each run its own mark, a minute (16px) apart: lane between them, nothing before.
    assert shot.seen(sync, shot.x("2026-01-09 11:30:02"), ok) >= 20
    assert shot.seen(sync, shot.x("2026-01-09 11:30:32"), ok, slack=2) == 0
    assert shot.seen(sync, shot.x("2026-01-09 10:59:30"), ok, slack=2) == 0
    assert all(shot.seen(nightly, x, c, slack=0) == 0 for c in (ok, failed, timeout)
               for x in range(TRACK_X0, TRACK_X1, 8))
    # The duration plot: a line across the hour, up at the timeout (1s or more) from the
    # ok runs (copies of one that took 0s, or 1s on a slow machine).
    plot = shot.plots[0]
    line = htmlreport.DURATION
    assert sum(shot.seen(plot, x, line, slack=0) for x in range(TRACK_X0, TRACK_X1)) > 500
    took = {json.loads(x)["run_id"][:16]: json.loads(x)["duration"] for x in
            (fresh.page.parent / "sync" / "events.jsonl").read_text().splitlines()
            if '"finish"' in x}
    high = shot.top(plot, shot.x("2026-01-09 11:57:01"), line)
    flat = shot.top(plot, shot.x("2026-01-09 11:30:02"), line)
    assert high is not None and flat is not None
    if took["20260109T115701Z"] > took["20260109T113002Z"]:
        assert high < flat - 20, (high, flat, took)
    else:
        assert abs(high - flat) <= 2, (high, flat, took)
    # Last and next run, and every failure with why, readable without hovering.
    text = fresh.page.read_text()
    row = re.search(r'<tr data-job="sync">.*?</tr>', text)
    assert row and "2026-01-09 11:59 failed (exit 3)" in row[0] and "2026-01-09 12:01" in row[0]
    row = re.search(r'<tr data-job="nightly">.*?</tr>', text)
    assert row and "2026-01-10 02:30" in row[0]
    assert dom.failures == ["f0-0", "f0-1", "f0-2"]
    items = re.findall(r'<li id="f0-\d".*?</li>', text, re.S)
    assert "connection refused (db.internal:5432)" in items[0] and "exit 3" in items[0]
    assert "timeout, exit 124" in items[1] and "copying..." in items[1]
    assert len(_links_resolve(fresh, dom)) == 6  # stderr.log and stdout.log of each
    assert {f"#f0-{i}" for i in range(3)} <= set(dom.hrefs)  # each failure's mark links to it


@needs_browser
def test_a_month_shows_every_failure_and_timeout_and_each_lane_s_durations(
        month: report_scenes.Scene, tmp_path: Path) -> None:
    dom, shot = _look(month, tmp_path, 1000)
    # From the first record (Jan 2 02:00), a little before, to now.
    first = at("2026-01-02 02:00:01").timestamp()
    assert first - 86400 < shot.start < first and shot.end == at("2026-02-01 12:00:00").timestamp()
    assert dom.modes == {"hourly": "binned", "nightly": "marks", "burst": "marks"}
    assert dom.lanes["hourly"] == Counter(ok=705, failed=15)
    assert dom.lanes["nightly"] == Counter(ok=24, failed=5, timeout=1, missed=1)
    assert dom.lanes["burst"] == Counter(ok=26, failed=4, timeout=2, missed=3)
    # The six runs within 25 minutes are one mark, counted, failures and timeouts both seen.
    assert dom.counts["burst"] == ["6"] and dom.counts["nightly"] == []
    assert "#f2-5" in dom.hrefs  # the group links to its first failure (09:00)
    hourly, nightly, burst = shot.tracks[:3]
    failed, timeout, missed = (htmlreport.COLOURS[k] for k in ("failed", "timeout", "missed"))
    for i in range(49, 719, 50):  # the copies' failures, one in 50, and the real one
        when = (at("2026-01-02 12:00:01") + timedelta(hours=i)).strftime("%Y-%m-%d %H:%M:%S")
        assert shot.seen(hourly, shot.x(when), failed) >= 8, when
    assert shot.seen(hourly, shot.x("2026-02-01 11:00:01"), failed) >= 8
    for when, mode in month.real["nightly"]:
        if mode != "ok":
            assert shot.seen(nightly, shot.x(when), failed if mode == "fail" else timeout) >= 20
    for i in (6, 13, 20):
        when = (at("2026-01-02 02:00:01") + timedelta(days=i)).strftime("%Y-%m-%d %H:%M:%S")
        assert shot.seen(nightly, shot.x(when), failed) >= 20, when
    assert shot.seen(nightly, shot.x("2026-02-01 02:00:00"), missed, slack=6) >= 10
    x = shot.x("2026-01-28 09:12:00")
    assert shot.seen(burst, x, failed) >= 20 and shot.seen(burst, x, timeout) >= 10
    for plot in shot.plots[:3]:
        assert sum(shot.seen(plot, xx, htmlreport.DURATION, slack=0)
                   for xx in range(TRACK_X0, TRACK_X1)) > 500
    # Every failure listed, newest first, the real ones with their log.
    text = month.page.read_text()
    assert "Failures and timeouts (27)" in text and len(dom.failures) == 27
    starts = re.findall(r'<li id="f\d+-\d+" class="failure" data-kind="\w+">[^<]*<span[^>]*>'
                        r"</span><b>([^<]+)</b>", text)
    assert len(starts) == 27 and starts == sorted(starts, reverse=True)
    assert len(_links_resolve(month, dom)) == 2 * (1 + 3 + 6)
    assert text.count("no run folder") == 14 + 3  # the copies have none


def test_a_failure_s_log_is_shown_bounded_and_escaped(tmp_path: Path) -> None:
    from schedgen.commands import report_fail
    from schedgen.outcomes.history import Run

    run_dir = tmp_path / "logs" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    big = b"".join(b"line %d\n" % i for i in range(200_000))
    (run_dir / "stderr.log").write_bytes(
        big + b"<script>alert(1)</script>\n\x1b]0;PWNED\x07 caf\xe9 \xe2\x80\xae\n" + b"x" * 300)
    run = Run("pub", "r1", at(NOW), 3, "failed", 1, "<b>item</b>", 1)
    page = report_fail.item("j<ob>", tmp_path / "logs", report_fail.Failure("f0-0", run),
                            tmp_path)
    tail = re.search(r"<pre[^>]*>(.*)</pre>", page, re.S)
    assert tail is not None
    lines = tail[1].split("\n")
    assert len(lines) <= report_fail.TAIL_LINES and len(tail[1]) < report_fail.TAIL_BYTES * 2
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in lines
    assert "\\e]0;PWNED\\a caf\\xe9 \\u202e" in lines
    assert lines[-1].endswith(" …") and len(lines[-1]) == report_fail.LINE_CHARS + 2
    assert "<script" not in page and "<b>item" not in page and "j&lt;ob&gt;" in page
    assert not [c for c in page if ord(c) < 32 and c != "\n"]
    assert 'href="logs/runs/r1/stderr.log"' in page
    # Written elsewhere than beside the logs: the tail, no link that would break.
    elsewhere = report_fail.item("pub", tmp_path / "logs", report_fail.Failure("f0-0", run),
                                 tmp_path / "other")
    assert "href" not in elsewhere and "line 199999" in elsewhere


@pytest.mark.parametrize(("args", "said"), [
    (["--since", "2d"], "(0 runs in the last 2 days)"),
    (["--days", "3"], "(0 runs in the last 3 days)"),
    ([], "(0 runs in the last 1 day)"),  # no record at all: a day
    (["--since", "2026-01-05", "--until", "2026-01-06T12:00"],
     "(0 runs from 2026-01-05 00:00 to 2026-01-06 12:00)"),
    (["--since", "90m"], "(0 runs since 2026-01-09 10:30)"),
    (["--days", "2", "--since", "1d"], "--days and --since both"),
    (["--since", "2026-01-06", "--until", "2026-01-05"], "--since must be before --until"),
    (["--since", "last week"], "is neither a time ago"),
])
@needs_faketime
def test_the_window_options(tmp_path: Path, fake_crontab: FakeCrontab, args: list[str],
                            said: str) -> None:
    write_config(tmp_path / "jobs.toml", f'[jobs.a]\ncommand = "true"\nschedule = "@daily"\n'
                 f'log_root = "{tmp_path}/logs"\n')
    r = faked_clock.run(NOW, [sys.executable, "-m", "schedgen", "report", "-o",
                              str(tmp_path / "r.html"), "-c", str(tmp_path / "jobs.toml"), *args],
                        frozen=True, capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    if said.startswith("("):
        assert r.returncode == 0 and r.stdout.endswith(said + "\n"), (r.stdout, r.stderr)
    else:
        assert r.returncode == 2 and said in r.stderr and not (tmp_path / "r.html").exists()


def test_a_log_that_is_no_plain_file_of_the_run_is_not_read(tmp_path: Path) -> None:
    """A job's command owns its run folder: its logs may be replaced by a link to a file
    the reader can read and the job cannot (/etc/shadow when root makes the page), a FIFO
    (open would wait for a writer for ever) or a device. None is read or linked."""
    import signal

    from schedgen.commands import report_fail
    from schedgen.outcomes.history import Run

    logs = tmp_path / "logs"
    secret = tmp_path / "secret"
    secret.write_text("root:SECRETHASH:20000::::::\n")
    (logs / "runs").mkdir(parents=True)
    for rid, make in [("link", lambda p: p.symlink_to(secret)),
                      ("fifo", lambda p: os.mkfifo(p)),
                      ("dev", lambda p: p.symlink_to("/dev/zero"))]:
        (logs / "runs" / rid).mkdir()
        make(logs / "runs" / rid / "stderr.log")
    # A run folder that is itself a link out of the runs folder.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "stderr.log").write_text("root:SECRETHASH:20000::::::\n")
    (logs / "runs" / "away").symlink_to(tmp_path / "elsewhere")

    def hung(*_: object) -> None:
        raise AssertionError("reading a log hung")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        pages = [report_fail.item("pub", logs, report_fail.Failure("f0-0", Run(
            "pub", rid, at(NOW), 3, "failed", 1, None, None)), tmp_path)
            for rid in ("link", "fifo", "dev", "away")]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    for page in pages:
        assert "SECRETHASH" not in page and "href" not in page and "\\0" not in page, page


def _hourly(tmp_path: Path, extra: list[dict[str, object]], first: bool = False) -> Path:
    """A job with 20 hourly runs up to NOW (events as the wrapper writes them) and
    ``extra`` events appended after them, or put before them with ``first``."""
    logs = tmp_path / "logs"
    config = write_config(tmp_path / "jobs.toml", f'[defaults]\ntargets = ["cron"]\n'
                          f'log_root = "{logs}"\n[jobs.pub]\ncommand = "true"\n'
                          'schedule = "@hourly"\n')
    lines: list[dict[str, object]] = []
    for i in range(20):
        t = at(NOW) - timedelta(hours=20 - i)
        ts, rid = t.strftime("%Y-%m-%dT%H:%M:%SZ"), f"{t:%Y%m%dT%H%M%SZ}-{100 + i}"
        lines += [{"ts": ts, "event": "start", "run_id": rid, "pid": 100 + i},
                  {"ts": ts, "event": "finish", "run_id": rid, "pid": 100 + i,
                   "outcome": "ok", "exit_code": 0, "duration": 2}]
    lines = extra + lines if first else lines + extra
    (logs / "pub").mkdir(parents=True)
    (logs / "pub" / "events.jsonl").write_text(
        "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return config


def _skewed(ts: str) -> list[dict[str, object]]:
    # A run of a machine whose clock was reset (a board without a clock, before NTP), or
    # what a job's command wrote into its own events.
    return [{"ts": ts, "event": "start", "run_id": "skewed", "pid": 7},
            {"ts": ts, "event": "finish", "run_id": "skewed", "pid": 7, "outcome": "ok",
             "exit_code": 0, "duration": 1}]


def test_one_run_stamped_long_ago_hides_no_other_from_days(tmp_path: Path) -> None:
    config = _hourly(tmp_path, _skewed("1970-01-01T00:00:10Z"))
    _, lanes, start, end = htmlreport.collect(config, days=2, now=at(NOW))
    assert end - start == timedelta(days=2) and len(lanes[0].runs) == 20


def test_one_run_stamped_long_ago_does_not_stretch_the_fitted_window(tmp_path: Path) -> None:
    config = _hourly(tmp_path, _skewed("1970-01-01T00:00:10Z"), first=True)
    _, lanes, start, end = htmlreport.collect(config, now=at(NOW))
    assert end - start <= htmlreport.FIT_MAX and len(lanes[0].runs) == 20
    page = htmlreport.render("default", lanes, start, end, words="since then")
    assert "1 older run not drawn" in page
    labels = re.findall(r'class="tick"[^>]*>([^<]+)<', page)
    assert labels and all(re.search(r"\b(2025|2026)\b", x) for x in labels), labels


@pytest.mark.parametrize(("days", "since", "until", "said"), [
    (None, "99999999999d", None, "--since: '99999999999d' reaches before 1970"),
    (None, "1000000d", None, "--since: '1000000d' reaches before 1970"),
    (1_000_000, None, None, "--days 1000000 reaches before 1970"),
    (99_999_999_999_999, None, None, "--days 99999999999999 reaches before 1970"),
    (None, "0001-01-01T00:00+01:00", None, "reaches before 1970"),
    (None, "0001-01-01", None, "reaches before 1970"),
    (None, None, "9999-12-31T23:59", "--until: '9999-12-31T23:59' is after 9998"),
])
def test_a_window_no_record_can_be_in_is_a_usage_error(tmp_path: Path, days: int | None,
                                                       since: str | None, until: str | None,
                                                       said: str) -> None:
    from schedgen.commands.report_when import when
    from schedgen.errors import UsageError

    config = _hourly(tmp_path, [])
    with pytest.raises(UsageError, match=re.escape(said)):
        htmlreport.collect(config, days, at(NOW), when(since, at(NOW), "--since"),
                           when(until, at(NOW), "--until"))


def test_events_that_are_a_fifo_do_not_hang_the_page(tmp_path: Path) -> None:
    import signal

    config = _hourly(tmp_path, [])
    events = tmp_path / "logs" / "pub" / "events.jsonl"
    events.unlink()
    os.mkfifo(events)  # what a job's command can leave in its own log folder

    def hung(*_: object) -> None:
        raise AssertionError("reading the events hung")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        _, lanes, _, _ = htmlreport.collect(config, now=at(NOW))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert lanes[0].runs == ()
