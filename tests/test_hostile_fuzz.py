"""Every reader of run records fed adversarial event lines and hostile file names: no
crash, no row that no wrapper wrote, nothing a terminal would act on.

Each line is made with its verdict known: `bad` lines (cut short, not JSON, nested past
any limit, a field of the wrong kind, a time no wrapper writes) must make no row;
`hostile` lines are records a wrapper could have written, with hostile text in them
(control characters, bytes that are not UTF-8, newlines that would split a row), and
each makes exactly one. The rows a reader shows are then exactly the genuine runs plus
the hostile begins. A hypothesis test draws small mixes; a corpus test puts 10,000+
lines and 1,000+ names through every reader at once, in-process and through the CLI.
SCHEDGEN_TEST_THOROUGH=1 multiplies both.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedgen.commands import alerts, check, history, report, status
from schedgen.commands.next import next_cmd
from schedgen.config import load as cfg
from schedgen.errors import SchedgenError
from schedgen.machine import ownership as state
from schedgen.machine.ownership import Record
from schedgen.machine.record_format import Installed
from schedgen.output import next as next_out
from schedgen.output import status as status_out
from tests.budget import THOROUGH, examples
from tests.fakes import FakeCrontab
from tests.helpers import write_config

NOW = datetime(2026, 1, 9, 12, 0, tzinfo=UTC)
START = NOW - timedelta(days=6)  # inside the week check and status judge
HOST = os.uname().nodename
BEGINS = ("start", "busy", "empty", "precondition")
SCALE = 4 if THOROUGH else 1

# Text a command could put in a name or a field: controls, escapes, not UTF-8, newlines.
NASTY = ["\x1b]0;PWNED\x07", "\x1b[2J\x1b[31m", "a\nb", "\r", "\x00", "\x7f", "\x9b31m",
         "\u202e", "\u2028", "caf\udce9", "\udcff\udcfe", "\t", "\x08\x08", "ok",
         "20260101T000000Z-1  2026-01-01 00:00:00  1s  ok  0", "</title><script>x</script>"]
BAD_TS: list[Any] = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-13-45T99:99:99Z",
                     "", "garbage", 20260105, None, [], {"a": 1}, "2026-01-05T10:00:00Z" * 4,
                     "\udce9" * 20, "１９７０-01-01T00:00:00Z", "-001-01-01T00:00:00Z"]
ODD_VALUES: list[Any] = [99999999999999999999, -99999999999999999999, 2**63, -1, 0, True,
                         None, 1e308, float("inf"), float("nan"), "7", [], {"k": [1]}, *NASTY]


def config_text(root: Path) -> str:
    return f"""
[jobs.pub]
command = "true"
schedule = "*/30 * * * *"
targets = ["cron"]
log_root = "{root}/logs"
wrapper_dir = "{root}/wrappers"
[jobs.pub.queue]
inbox = "{root}/q/inbox"
stale_after = "1m"
[jobs.pub.notify]
command = 'cat >>{root}/calls'
on = ["failure", "missed"]
"""


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def record(ev: dict[str, Any]) -> bytes:
    """One line as the wrapper writes it (JSON, ASCII escapes; NaN as the bare word)."""
    return json.dumps(ev, separators=(",", ":")).encode()


def genuine(n: int) -> list[bytes]:
    """n runs of the job, each a start and its finish, in time order."""
    out = []
    for i in range(n):
        t = START + timedelta(minutes=30 * i, seconds=3)
        rid = t.strftime("%Y%m%dT%H%M%SZ") + f"-{4000 + i}"
        out.append(record({"ts": stamp(t), "event": "start", "job": "pub", "run_id": rid,
                           "pid": 4000 + i, "host": "elsewhere"}))
        out.append(record({"ts": stamp(t + timedelta(seconds=1)), "event": "finish",
                           "run_id": rid, "outcome": "ok", "exit_code": 0, "duration": 1}))
    return out


# --- lines with their verdict: (line, rows it makes) --------------------------------------
def hostile_begin(rng: random.Random, t: datetime) -> bytes:
    """A record a wrapper could write, with hostile text and odd numbers in it: one row."""
    ev: dict[str, Any] = {"ts": stamp(t), "event": rng.choice(BEGINS), "job": "pub",
                          "run_id": rng.choice(NASTY) + str(rng.randrange(10**6))}
    for key in ("pid", "host", "item", "attempt", "smoke", "exit_code"):
        if rng.random() < 0.6:
            ev[key] = rng.choice(ODD_VALUES)
    if rng.random() < 0.2:
        ev["pid"], ev["host"] = rng.choice(ODD_VALUES[:4]), HOST  # os.kill would overflow
    return record(ev)


def hostile_finish(rng: random.Random, t: datetime, run_ids: list[str]) -> bytes:
    """A finish (no row of its own) with hostile values, maybe for a genuine run."""
    return record({"ts": stamp(t), "event": "finish", "run_id": rng.choice(run_ids),
                   "outcome": rng.choice(ODD_VALUES), "exit_code": rng.choice(ODD_VALUES),
                   "duration": rng.choice(ODD_VALUES)})


def bad_line(rng: random.Random, t: datetime, template: bytes) -> bytes:
    """A line that must make no row."""
    kind = rng.randrange(9)
    if kind == 0:  # cut short: never valid JSON
        return template[:rng.randrange(1, len(template) - 1)]
    if kind == 1:  # a begin with a time no wrapper writes
        return record({"ts": rng.choice(BAD_TS), "event": rng.choice(BEGINS), "run_id": "bad-ts"})
    if kind == 2:  # a begin whose run ID is no string
        return record({"ts": stamp(t), "event": rng.choice(BEGINS),
                       "run_id": rng.choice([None, 1, [], {"a": 1}, 2**70, True])})
    if kind == 3:  # nested past any limit
        depth = rng.choice([1000, 100_000])
        return b'{"ts":"' + stamp(t).encode() + b'","event":"start","run_id":' + b"[" * depth
    if kind == 4:  # no event, or one that is no string or no begin
        return record({"ts": stamp(t), "event": rng.choice([None, 1, ["start"], "fin\nish",
                                                            "START", "start "]),
                       "run_id": "odd-event"})
    if kind == 5:  # JSON, but not an object
        return rng.choice([b"[]", b"1", b'"start"', b"null", b"true", b"[" * 50_000])
    if kind == 6:  # bytes (never the record start `{"ts":"`)
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        return data.replace(b"\n", b" ").replace(b'{"ts":"', b"{")
    if kind == 7:  # not UTF-8 inside what would be a record
        return template.replace(b'"event"', b'"ev\xe9nt"', 1)
    # a bare control sequence, or a terminal escape as a whole line
    return rng.choice(list(NASTY)).encode("utf-8", "surrogateescape").replace(b"\n", b" ") \
        or b"\x1b"


def mix(rng: random.Random, n: int, runs: int) -> tuple[list[bytes], int]:
    """Genuine runs with n adversarial lines among them; the rows a reader must show."""
    base = genuine(runs)
    run_ids = [json.loads(x)["run_id"] for x in base[::2]] or ["no-such-run"]
    templates = base or genuine(1)
    lines = list(base)
    rows = runs
    span = (NOW - timedelta(minutes=10) - START).total_seconds()
    for _ in range(n):
        t = START + timedelta(seconds=rng.uniform(0, span))
        r = rng.random()
        if r < 0.15:
            lines.insert(rng.randrange(len(lines) + 1), hostile_begin(rng, t))
            rows += 1
        elif r < 0.25:
            lines.insert(rng.randrange(len(lines) + 1), hostile_finish(rng, t, run_ids))
        else:
            lines.insert(rng.randrange(len(lines) + 1), bad_line(rng, t, rng.choice(templates)))
    return lines, rows


def hostile_name(rng: random.Random) -> bytes:
    """A file name a command or an SMB share could make: any bytes but / and NUL."""
    if rng.random() < 0.5:
        text = "".join(rng.choice(NASTY) for _ in range(rng.randrange(1, 4)))
        name = text.encode("utf-8", "surrogateescape").replace(b"\x00", b"")
    else:
        name = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 60)))
    name = name.replace(b"/", b"_")[:250]
    return name if name not in (b"", b".", b"..") and not name.startswith(b".") else b"x" + name


# --- the readers, and what each must hold to -----------------------------------------
def clean(text: str, what: str) -> None:
    """Text fit for a terminal: UTF-8, and no control character but the newline."""
    text.encode("utf-8")  # a surrogate here would stop the output (UnicodeEncodeError)
    bad = [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0
           or c in "\u2028\u2029\u202e"]
    assert not bad, f"{what}: raw {bad[:5]!r}"


def scene(root: Path, lines: list[bytes], names: list[bytes]) -> Path:
    logs = root / "logs/pub"
    for d in (logs / "runs", root / "q/inbox", root / "q/failed", root / "q/processing/r1"):
        d.mkdir(parents=True, exist_ok=True)
    (logs / "events.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    for i, name in enumerate(names):
        folder = (root / "q/inbox", root / "q/failed", root / "q/processing/r1",
                  logs / "runs")[i % 4]
        path = os.path.join(bytes(folder), name)
        if i % 4 == 3:
            os.makedirs(path, exist_ok=True)
            with open(os.path.join(path, b"schedgen-manifest.json"), "wb") as f:
                f.write(record({"run_id": name.decode("utf-8", "surrogateescape"),
                                "outcome": "running", "pid": 99999999999999999999,
                                "host": HOST, "item": NASTY[i % len(NASTY)]}))
        else:
            with open(path, "wb"):
                pass
            os.utime(path, (1, 1))
    config = root / "jobs.toml"
    if not config.exists():
        write_config(config, config_text(root))
        state.save(Record("default", {"cron": Installed("cron", None, "0" * 64, jobs=("pub",),
                                                        installed_at=stamp(START))}))
    return config


def read_all(config: Path, rows: int, files: int) -> None:
    """Every reader, in-process, on the scene: the properties hold."""
    [h] = history.job_history(config, None, 10**9, None, now=NOW)
    assert len(h.runs) == rows, (len(h.runs), rows)  # no forged row, none lost
    text = history.history_text([h])
    clean(text, "history")
    table = [x for x in text.splitlines()[2:] if x.startswith("  ") and "missed" not in x
             and "unreadable" not in x and "firing" not in x]
    assert len([x for x in table if not x.lstrip().startswith("-")]) == rows  # one line each
    json.dumps(history.history_json([h]))
    health = check.check(config, now=NOW)
    out = check.as_text(health)
    clean(out, "check")
    assert len(out.splitlines()) == len(health.problems)  # one problem, one line
    json.dumps(check.as_json(health))
    st_ = status.status(config, now=NOW)
    clean(status_out.as_text(st_), "status")
    json.dumps(status_out.as_json(st_))
    q = st_.jobs[0].queue
    assert q is not None and q.inbox + q.failed + q.processing == files
    clean(next_out.as_text(next_cmd(config, None, 3)), "next")
    namespace, lanes, start, end = report.collect(config, 7, now=NOW)
    page = report.render(namespace, lanes, start, end)
    page.encode("utf-8")
    assert not [c for c in page if ord(c) < 32 and c not in "\n"], "raw control in the report"
    for run_dir in sorted((config.parent / "logs/pub/runs").iterdir())[:None if THOROUGH else 25]:
        try:
            found = history.log_file(config, "pub", run_dir.name, False)
        except SchedgenError:
            continue
        assert found.parent.parent == config.parent / "logs/pub/runs"


line_strategy = st.builds(lambda seed, n, runs: (seed, n, runs), st.integers(0, 2**32),
                          st.integers(0, 60), st.integers(0, 12))


@settings(max_examples=examples(30) * SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mixes=st.lists(line_strategy, min_size=1, max_size=3),
       names=st.lists(st.binary(min_size=1, max_size=40), max_size=12))
def test_any_mix_of_lines_and_names_holds_in_every_reader(
        tmp_path_factory: pytest.TempPathFactory, fake_crontab: FakeCrontab,
        mixes: list[tuple[int, int, int]], names: list[bytes]) -> None:
    root = tmp_path_factory.mktemp("mix")
    lines: list[bytes] = []
    rows = 0
    for seed, n, runs in mixes:
        more, r = mix(random.Random(seed), n, runs)
        lines += more
        rows += r
    safe = list(dict.fromkeys(
        b"x" + n.replace(b"/", b"_").replace(b"\0", b"_") for n in names))
    config = scene(root, lines, safe)
    read_all(config, rows, sum(1 for i in range(len(safe)) if i % 4 != 3))


def test_a_corpus_of_10000_lines_and_1000_names_through_every_reader(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    rng = random.Random(36)
    lines, rows = mix(rng, 10_000 * SCALE, 200)
    names: dict[bytes, None] = {}
    while len(names) < 1_000 * SCALE:
        names[hostile_name(rng)] = None
    assert len(lines) >= 10_000 and len(names) >= 1_000
    config = scene(tmp_path, lines, list(names))
    files = sum(1 for i in range(len(names)) if i % 4 != 3)
    read_all(config, rows, files)
    # Alerts: each problem sent once, on one line, and remembered.
    health = check.check(config, now=NOW)
    sent = alerts.notify(health, now=NOW)
    assert sent and all(s["sent"] for s in sent), sent
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == len(sent)
    clean("\n".join(calls), "notify text")
    assert alerts.notify(check.check(config, now=NOW), now=NOW) == []
    # The same through the CLI, as a terminal gets it: bytes, and exit codes of no crash.
    env = {**os.environ, "TZ": "America/New_York", "LANG": "C.UTF-8"}
    commands = [["history", "--since", "3650d"], ["check", "--notify"],
                ["report", "-o", str(tmp_path / "r.html"), "--days", "3650"]]
    if THOROUGH:  # the rest print what the in-process readers above gave
        commands += [["history", "--json"], ["check"], ["status"], ["next"], ["logs", "pub"]]
    for args in commands:
        r = subprocess.run([sys.executable, "-m", "schedgen", *args, "-c", str(config)],
                           capture_output=True, env=env, timeout=300)
        assert r.returncode in (0, 1, 2) and b"unexpected error" not in r.stderr, (args, r.stderr)
        if args[0] != "logs":  # a run's output is the command's own bytes
            clean(r.stdout.decode("utf-8"), " ".join(args))
        if args[0] == "history":
            assert b"unreadable event lines skipped" in r.stdout
    page = (tmp_path / "r.html").read_bytes()
    assert b"\x1b" not in page and b"\x07" not in page
    assert cfg.load(config).jobs[0].name == "pub"
