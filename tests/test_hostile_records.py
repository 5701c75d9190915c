"""What a job's command can write (events.jsonl, its run directory, the queue's file
names) read back by history, logs, check, report and status: never a crash, a bad line
skipped and counted, names shown as escapes, one problem on one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from schedgen.records.shown import shown
from tests.fakes import FakeCrontab
from tests.helpers import write_config

HOST = os.uname().nodename


def jobs_toml(root: Path, notify: str = "cat >>{root}/calls") -> str:
    return f"""
[jobs.pub]
command = "true"
schedule = "40 10 * * *"
targets = ["cron"]
log_root = "{root}/logs"
wrapper_dir = "{root}/wrappers"
[jobs.pub.queue]
inbox = "{root}/q/inbox"
stale_after = "1m"
[jobs.pub.notify]
command = '{notify.format(root=root)}'
on = ["failure"]
"""


def cli(config: Path, *args: str, tz: str = "America/New_York",
        timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """The CLI in its own interpreter, output as bytes (what a terminal would be sent)."""
    return subprocess.run([sys.executable, "-m", "schedgen", *args, "-c", str(config)],
                          capture_output=True, timeout=timeout,
                          env={**os.environ, "TZ": tz, "LANG": "C.UTF-8"})


def event(ev: str, ts: str, run_id: str, **more: object) -> bytes:
    return json.dumps({"ts": ts, "event": ev, "job": "pub", "run_id": run_id, "pid": 4242,
                       "host": "elsewhere", **more}, separators=(",", ":")).encode() + b"\n"


@pytest.fixture
def root(tmp_path: Path, fake_crontab: FakeCrontab) -> Path:
    for d in ("logs/pub", "q/inbox", "q/failed"):
        (tmp_path / d).mkdir(parents=True)
    write_config(tmp_path / "jobs.toml", jobs_toml(tmp_path))
    return tmp_path


def _no_raw_controls(data: bytes) -> None:
    assert not set(data) & (set(range(32)) - {10}) - {9}, data[:400]
    assert b"\x7f" not in data
    data.decode("utf-8")  # what is shown is text, whatever the names were


HOSTILE_LINES = [
    # a pid past any pid_t: os.kill raised OverflowError
    json.dumps({"ts": "2026-01-05T10:40:00Z", "event": "start", "run_id": "20260105T104000Z-1",
                "pid": 99999999999999999999, "host": HOST}).encode(),
    # year 1: fine in UTC, OverflowError once shown west of it
    json.dumps({"ts": "0001-01-01T00:00:00Z", "event": "start", "run_id": "r-year-1"}).encode(),
    json.dumps({"ts": "9999-12-31T23:59:59Z", "event": "start", "run_id": "r-year-9999"}).encode(),
    b"[" * 100_000 + b"]" * 100_000,  # RecursionError, not a ValueError
    b'{"ts":"2026-01-05T10:41:00Z","event":' + b"{" * 100_000,
    b'{"ts": {"deep": [1, 2]}, "event": "start", "run_id": ["x"]}',
    b'{"ts":"2026-01-05T10:42:00Z","event":"start","run_id":"r\\u0000nul","pid":true}',
    b"\xff\xfe\xe9 not utf-8 \x1b[2J",
    b'{"ts":"2026-13-45T99:99:99Z","event":"start","run_id":"r-bad-date"}',
    b'{"ts":"2026-01-05T10:43:00Z","event":"finish","run_id":"r9","outcome":{"a":1},'
    b'"exit_code":1e999,"duration":"NaN"}',
]


def test_odd_event_lines_are_skipped_and_counted_by_every_reader(root: Path) -> None:
    good = event("start", "2026-01-05T10:40:03Z", "20260105T104003Z-4242")
    good += event("finish", "2026-01-05T10:40:04Z", "20260105T104003Z-4242", outcome="ok",
                  exit_code=0, duration=1)
    (root / "logs/pub/events.jsonl").write_bytes(good + b"\n".join(HOSTILE_LINES) + b"\n")
    run = root / "logs/pub/runs/20260105T104000Z-1"
    run.mkdir(parents=True)
    (run / "schedgen-manifest.json").write_text(json.dumps(
        {"run_id": "r\x1b]0;x\x07", "outcome": "running", "pid": 99999999999999999999,
         "host": HOST, "exit_code": "7\n"}))
    config = root / "jobs.toml"
    r = cli(config, "history", "--since", "3650d")
    assert r.returncode == 0, r.stderr
    _no_raw_controls(r.stdout)
    text = r.stdout.decode()
    # The good run, and the start whose pid no process can have (crashed: it is not alive).
    assert "20260105T104003Z-4242" in text and " ok " in text
    assert "unreadable event lines skipped" in text
    assert "r-year-1" not in text and "r-year-9999" not in text and "r-bad-date" not in text
    data = json.loads(cli(config, "history", "--json").stdout)
    assert data["jobs"][0]["skipped_lines"] >= 7
    for args in (["check"], ["check", "--json"], ["status"], ["status", "--json"], ["next"],
                 ["report", "-o", str(root / "r.html")], ["logs", "pub"]):
        r = cli(config, *args)
        assert r.returncode in (0, 1, 2), (args, r.stderr)  # 2: a clean "no such log"
        assert b"unexpected error" not in r.stderr, (args, r.stderr)
        if args[0] != "logs":
            _no_raw_controls(r.stdout)


def test_a_name_not_utf8_neither_stops_the_report_nor_silences_alerting(root: Path) -> None:
    open(os.path.join(bytes(root / "q/failed"), b"caf\xe9.json"), "w").close()
    (root / "logs/pub/events.jsonl").write_bytes(
        event("start", "2026-01-05T10:40:03Z", "20260105T104003Z-4242",
              item="caf\udce9.json".encode("utf-8", "surrogateescape").decode("latin-1")))
    config = root / "jobs.toml"
    r = cli(config, "report", "-o", str(root / "r.html"), "--days", "3650")
    assert r.returncode == 0, r.stderr
    html = (root / "r.html").read_bytes()
    assert b"\x1b" not in html and b"\x07" not in html
    r = cli(config, "check", "--notify")
    assert r.returncode == 1, r.stderr
    assert "caf\\xe9.json" in r.stdout.decode()
    assert (root / "calls").read_text().count("caf\\xe9.json") == 1
    # What went out was remembered: the next check sends nothing again.
    assert cli(config, "check", "--notify").returncode == 1
    assert (root / "calls").read_text().count("caf\\xe9.json") == 1


ESCAPES = "a\x1b]0;PWNED\x07\x1b[2J\x1b[31mred"
FORGED = "x\n20260105T000000Z-1  2026-01-05 00:00:00  1s  ok  0"


def test_names_reach_the_terminal_as_escapes_and_never_split_a_row(root: Path) -> None:
    for name in (ESCAPES, FORGED):
        (root / "q/inbox" / name).write_text("")
        (root / "q/failed" / name).write_text("")
        os.utime(root / "q/inbox" / name, (1, 1))
    lines = b"".join(event("start", f"2026-01-05T10:4{i}:03Z", f"20260105T104{i}03Z-4242",
                           item=name) for i, name in enumerate((ESCAPES, FORGED)))
    (root / "logs/pub/events.jsonl").write_bytes(lines)
    config = root / "jobs.toml"
    r = cli(config, "history")
    _no_raw_controls(r.stdout)
    rows = [x for x in r.stdout.decode().splitlines() if x.startswith("  2026")]
    assert len(rows) == 2  # the forged row is text inside the item, not a row
    assert any(shown(ESCAPES) in x for x in rows) and any(shown(FORGED) in x for x in rows)
    r = cli(config, "check", "--notify")
    _no_raw_controls(r.stdout)
    problems = json.loads(cli(config, "check", "--json").stdout)["problems"]
    assert len(r.stdout.decode().splitlines()) == len(problems), r.stdout
    sent = (root / "calls").read_text().splitlines()
    assert len(sent) == 2, sent  # one problem, one line, also in what is sent
    cli(config, "report", "-o", str(root / "r.html"), "--days", "3650")
    html = (root / "r.html").read_bytes()
    assert b"\x1b" not in html and b"\x07" not in html and b"\\e]0;PWNED\\a" in html


def test_logs_never_follows_a_run_id_out_of_runs(root: Path) -> None:
    (root / "elsewhere").mkdir()
    (root / "elsewhere/stdout.log").write_text("not a run's output\n")
    (root / "logs/pub/runs/20260105T104003Z-4242").mkdir(parents=True)
    (root / "logs/pub/runs/20260105T104003Z-4242/stdout.log").write_text("the run's output\n")
    (root / "logs/pub/events.jsonl").write_bytes(
        event("start", "2026-01-05T10:40:03Z", "20260105T104003Z-4242")
        + event("start", "2026-01-05T10:41:03Z", "../../../elsewhere"))
    r = cli(root / "jobs.toml", "logs", "pub")
    assert r.stdout == b"the run's output\n"


def test_shown_escapes_what_a_terminal_would_act_on() -> None:
    assert shown("plain name.json") == "plain name.json"
    assert shown("caf\udce9.json") == "caf\\xe9.json"
    assert shown("a\x1b]0;T\x07b\nc\td\x7f\x9b\u202e") == "a\\e]0;T\\ab\\nc\\td\\x7f\\x9b\\u202e"
    assert shown("\u2028") == "\\u2028"
