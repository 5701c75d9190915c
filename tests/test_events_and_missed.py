"""events.jsonl read backwards (block edges, rotated copies, torn lines) and the rules that
judge firings: one run per firing, busy counts, launchd's coalesced wake run is late."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from schedgen.commands.history import JobHistory, history_text, rows
from schedgen.config.load import loads
from schedgen.machine.ownership import Record
from schedgen.machine.record_format import Installed as Entry
from schedgen.outcomes import events, history
from schedgen.outcomes.missed import judge, missed

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def line(ev: str, t: datetime, run_id: str, pid: int | None = None, **more: object) -> str:
    """An event as the wrapper writes it; each run ID its own process unless told."""
    pid = pid if pid is not None else 1000 + sum(map(ord, run_id))
    return json.dumps({"ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "event": ev, "job": "j",
                       "run_id": run_id, "pid": pid, "host": "elsewhere", **more},
                      separators=(",", ":"))


def test_lines_come_back_newest_first_across_blocks_and_rotated_copies(tmp_path: Path) -> None:
    # Lines of every length around the 64 KB block size, so some straddle block edges.
    old = [f'{{"event":"x","n":{i},"pad":"{"p" * (i % 300)}"}}' for i in range(2000)]
    new = [f'{{"event":"x","n":{i},"pad":"{"q" * (i % 700)}"}}' for i in range(2000, 2600)]
    (tmp_path / "events.jsonl.1").write_text("\n".join(old) + "\n")
    (tmp_path / "events.jsonl").write_text("\n".join(new) + "\n" + '{"event":"x","n":26')  # torn
    assert events.BLOCK < (tmp_path / "events.jsonl.1").stat().st_size
    got = [ev["n"] for ev in events.back(tmp_path)]
    assert got == list(range(2599, -1, -1))


def test_a_line_glued_to_one_a_full_disk_cut_short_is_read_whole(tmp_path: Path) -> None:
    # A run's line cut short (no newline) and the next run's line appended right after it:
    # the next line is still read, also through the prefix-only path of stamps_back.
    first = line("start", T0, "r1")
    second = line("finish", T0 + timedelta(seconds=5), "r2", exit_code=0, outcome="ok",
                  message='{"ts":"not a record start: quoted"}')
    (tmp_path / "events.jsonl").write_text(first + "\n" + first[:40] + second + "\n")
    assert [ev["run_id"] for ev in events.back(tmp_path)] == ["r2", "r1"]
    assert [name for _, name, _ in events.stamps_back(tmp_path, frozenset({"start", "finish"}))] \
        == ["finish", "start"]


def test_epoch_matches_the_calendar() -> None:
    for t in (T0, datetime(2000, 2, 29, 23, 59, 59, tzinfo=UTC), datetime(1999, 12, 31, tzinfo=UTC),
              datetime(2100, 3, 1, 1, 2, 3, tzinfo=UTC)):
        assert events.epoch(t.strftime("%Y-%m-%dT%H:%M:%SZ")) == int(t.timestamp())
    assert events.epoch("2026-01-05T10:00:00+02:00") == int(T0.timestamp()) - 7200
    assert events.epoch("garbage") is None


def e(t: datetime) -> int:
    return int(t.timestamp())


def test_each_run_answers_one_firing_within_the_grace() -> None:
    firings = [e(T0 + timedelta(minutes=m)) for m in range(10)]
    # Runs at 10:00:20 and 10:04: the first answers 10:00, the second the oldest firing still
    # open within its 5 minutes (10:01); one run never answers two firings.
    begins = [e(T0 + timedelta(seconds=20)), e(T0 + timedelta(minutes=4))]
    got = judge(firings, begins, launchd=False, z=UTC)
    assert [f.at.minute for f in got] == [2, 3, 4, 5, 6, 7, 8, 9]
    assert all(f.state == "missed" for f in got)


def test_a_run_just_before_its_firing_still_counts() -> None:
    assert judge([e(T0)], [e(T0 - timedelta(seconds=20))], launchd=False, z=UTC) == []
    assert len(judge([e(T0)], [e(T0 - timedelta(seconds=40))], launchd=False, z=UTC)) == 1


def test_launchd_wake_run_makes_the_slept_firings_late_but_not_older_ones() -> None:
    hour = timedelta(hours=1)
    firings = [e(T0 + k * hour) for k in range(6)]  # 10:00 ... 15:00
    begins = [e(T0), e(T0 + hour), e(T0 + 4 * hour + timedelta(minutes=37))]  # wake at 14:37
    got = judge(firings, begins, launchd=True, z=UTC)
    assert [(f.at.hour, f.state) for f in got] == [(12, "late"), (13, "late"), (14, "late"),
                                                  (15, "missed")]
    assert got[0].ran_at == T0 + 4 * hour + timedelta(minutes=37)
    # On cron there is no coalescing: the same records are three missed firings... and a
    # run that answered none.
    assert [f.state for f in judge(firings, begins, launchd=False, z=UTC)] == ["missed"] * 4


def job_with_events(tmp_path: Path, lines: list[str], keep: int = 5, rotated: bool = False):  # noqa: ANN201
    text = (f'[jobs.j]\ncommand = "true"\nschedule = "0 * * * *"\ntargets = ["cron"]\n'
            f'log_root = "{tmp_path}"\n[jobs.j.logs]\nkeep = {keep}\n')
    job = loads(text, tmp_path / "jobs.toml").jobs[0]
    job.log_dir.mkdir(parents=True, exist_ok=True)
    (job.log_dir / "events.jsonl").write_text("\n".join(lines) + "\n")
    if rotated:
        for k in range(1, keep + 1):
            (job.log_dir / f"events.jsonl.{k}").write_text("")
    record = Record("default", {"cron": Entry("cron", None, "x", jobs=("j",),
                                              installed_at="2026-01-05T09:30:00Z")})
    return job, record


def test_busy_and_empty_runs_answer_their_firings(tmp_path: Path) -> None:
    lines = [line("start", T0, "a"), line("finish", T0 + timedelta(minutes=90), "a",
                                          exit_code=0, outcome="ok", duration=5400),
             line("busy", T0 + timedelta(hours=1, seconds=1), "b"),
             line("empty", T0 + timedelta(hours=2, seconds=1), "c")]
    job, record = job_with_events(tmp_path, lines)
    m = missed(job, record, T0 + timedelta(hours=3, minutes=10))
    assert m is not None and [f.at.hour for f in m.missed] == [13]
    runs = history.runs(job)
    assert [(r.outcome, r.exit_code, r.duration) for r in runs] == [
        ("empty", 0, 0), ("busy", 75, 0), ("ok", 0, 5400)]


def test_firings_before_the_oldest_event_left_are_not_judged_once_rotation_dropped_some(
        tmp_path: Path) -> None:
    lines = [line("start", T0 + timedelta(hours=h), f"r{h}") for h in (3, 4)]
    now = T0 + timedelta(hours=4, minutes=10)
    job, record = job_with_events(tmp_path, lines)
    m = missed(job, record, now)
    assert m is not None and [f.at.hour for f in m.missed] == [10, 11, 12]
    job, record = job_with_events(tmp_path / "rotated", lines, keep=2, rotated=True)
    m = missed(job, record, now)
    assert m is not None and m.missed == () and m.since == T0 + timedelta(hours=3)


def test_a_job_that_was_never_installed_or_has_no_calendar_is_not_judged(tmp_path: Path) -> None:
    job, _ = job_with_events(tmp_path, [])
    assert missed(job, Record("default"), T0) is None
    boot = loads('[jobs.b]\ncommand = "true"\nschedule = "@reboot"\n', tmp_path / "x.toml").jobs[0]
    assert missed(boot, Record("default", {"w": Entry("wrapper", "/w", "x", job="b",
                                                      installed_at="2026-01-01T00:00:00Z")}),
                  T0) is None


def test_the_last_finish_of_a_run_is_its_word(tmp_path: Path) -> None:
    lines = [line("start", T0, "a"),
             line("finish", T0, "a", exit_code=0, outcome="failed", duration=0),
             line("finish", T0, "a", exit_code=0, outcome="ok", duration=0)]
    job, _ = job_with_events(tmp_path, lines)
    assert [r.outcome for r in history.runs(job)] == ["ok"]


def test_one_wrapper_draining_a_queue_answers_one_firing(tmp_path: Path) -> None:
    # Every minute; one run at 10:00 takes its items until 10:04 (one start each, one pid).
    lines = [line("start", T0 + timedelta(minutes=k), f"q{k}", pid=77, item=f"{k}.json")
             for k in range(5)]
    text = (f'[jobs.j]\ncommand = ["x", "{{item}}"]\nschedule = "* * * * *"\n'
            f'targets = ["cron"]\nlog_root = "{tmp_path}"\n[jobs.j.queue]\ninbox = "{tmp_path}/in"\n')
    job = loads(text, tmp_path / "jobs.toml").jobs[0]
    job.log_dir.mkdir(parents=True)
    (job.log_dir / "events.jsonl").write_text("\n".join(lines) + "\n")
    record = Record("default", {"cron": Entry("cron", None, "x", jobs=("j",),
                                              installed_at="2026-01-05T09:59:30Z")})
    m = missed(job, record, T0 + timedelta(minutes=10))
    assert m is not None and [f.at.minute for f in m.missed] == [1, 2, 3, 4, 5]


def test_history_shows_a_zoned_jobs_runs_in_its_own_zone(tmp_path: Path) -> None:
    lines = [line("start", T0, "a"), line("finish", T0 + timedelta(seconds=5), "a",
                                          exit_code=0, outcome="ok", duration=5)]
    job, _ = job_with_events(tmp_path, lines)
    zoned = job._replace(timezone="Asia/Kathmandu")  # +05:45: 10:00 UTC is 15:45 there
    h = JobHistory(zoned, tuple(history.runs(zoned)), None, False)
    assert rows(h)[0][1][1] == "2026-01-05 15:45 +05:45"
    assert "times in Asia/Kathmandu" in history_text([h])
