"""`check --notify`: each send bounded as a whole and judged by its own exit status, what
went out remembered before the next send (a killed check included), a failing send
tried a bounded number of times and then recorded as given up."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schedgen.commands import alerts, check
from tests.fakes import FakeCrontab
from tests.helpers import write_config
from tests.test_hostile_records import cli, jobs_toml
from tests.wrapper_kit import needs_proc, wait_for

T0 = datetime(2026, 1, 9, 12, 0, tzinfo=UTC)


def scene(root: Path, notify: str) -> Path:
    for d in ("logs/pub", "q/inbox", "q/failed"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "q/failed/a-bad.json").write_text("{}")
    return write_config(root / "jobs.toml", jobs_toml(root, notify))


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


@needs_proc
def test_a_notify_leaving_a_child_that_escaped_its_group_does_not_hold_check(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    config = scene(tmp_path, "setsid sleep 300 & echo $! >{root}/pids; cat >>{root}/calls")
    # Without a bound on the escaped child, check waits for the end of its pipe: 300 s.
    r = cli(config, "check", "--notify", timeout=100)
    assert r.returncode == 1
    assert b"notify pub (failure): sent" in r.stderr, r.stderr
    assert (tmp_path / "calls").read_text().count("a-bad.json") == 1
    pid = int((tmp_path / "pids").read_text())
    wait_for(lambda: gone(pid), what="the escaped child to be killed")


@needs_proc
def test_a_notify_that_exits_0_leaving_a_child_in_its_group_is_a_success(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    config = scene(tmp_path, "sleep 300 & echo $! >{root}/pids; cat >>{root}/calls; exit 0")
    r = cli(config, "check", "--notify", timeout=100)
    assert b"notify pub (failure): sent" in r.stderr, r.stderr
    assert b"killed" not in r.stderr
    pid = int((tmp_path / "pids").read_text())
    wait_for(lambda: gone(pid), what="the child left in the group to be killed")
    memory = json.loads(alerts.memory_path("default").read_text())["sent"]
    assert [v["state"] for v in memory.values()] == ["sent"]


def test_a_failing_send_is_tried_a_bounded_number_of_times_then_given_up(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    config = scene(tmp_path, "cat >>{root}/calls; exit 1")

    def at(after: float) -> list[dict[str, object]]:
        now = T0 + timedelta(seconds=after)
        return alerts.notify(check.check(config, now=now), now=now)

    def calls() -> int:
        return len((tmp_path / "calls").read_text().splitlines())

    first = at(0)
    assert [(s["sent"], s["attempt"]) for s in first] == [(False, 1)]
    assert "exit 1" in str(first[0]["detail"])
    assert at(30) == [] and calls() == 1  # not before RETRY_AFTER
    assert [s["attempt"] for s in at(61)] == [2]
    assert at(61 + 4 * 60 - 5) == [] and calls() == 2  # four times longer after the second
    last = at(61 + 4 * 60 + 1)
    assert [s["attempt"] for s in last] == [3] and "gave up after 3 tries" in str(last[0]["detail"])
    for later in (3600, 86400, 7 * 86400):
        assert at(later) == []
    assert calls() == alerts.MAX_ATTEMPTS
    # Cleared, it is forgotten (no recovery for what was never told); back, it is new.
    (tmp_path / "q/failed/a-bad.json").unlink()
    assert at(8 * 86400) == []
    (tmp_path / "q/failed/a-bad.json").write_text("{}")
    assert [s["attempt"] for s in at(9 * 86400)] == [1] and calls() == alerts.MAX_ATTEMPTS + 1


TWO = """
[defaults]
targets = ["cron"]
log_root = "{root}/logs"
wrapper_dir = "{root}/wrappers"
[jobs.a]
command = "true"
schedule = "@reboot"
queue = {{ inbox = "{root}/a/inbox" }}
notify = {{ command = 'cat >>{root}/calls-a', on = ["failure"] }}
[jobs.b]
command = "true"
schedule = "@reboot"
queue = {{ inbox = "{root}/b/inbox" }}
notify = {{ command = 'if [ -e {root}/kill ]; then rm {root}/kill; kill -9 $PPID; sleep 5; fi; cat >>{root}/calls-b', on = ["failure"] }}
"""


def test_what_went_out_is_remembered_when_check_is_killed_during_the_next_send(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    for job in ("a", "b"):
        (tmp_path / job / "failed").mkdir(parents=True)
        (tmp_path / job / "failed" / "x.json").write_text("{}")
    config = write_config(tmp_path / "jobs.toml", TWO.format(root=tmp_path))
    (tmp_path / "kill").touch()
    r = cli(config, "check", "--notify")
    assert r.returncode == -9  # killed by b's notify, after a's went out
    assert len((tmp_path / "calls-a").read_text().splitlines()) == 1
    r = cli(config, "check", "--notify")
    assert r.returncode == 1
    assert len((tmp_path / "calls-a").read_text().splitlines()) == 1  # not sent again
    memory = json.loads(alerts.memory_path("default").read_text())["sent"]
    b = next(v for k, v in memory.items() if k.startswith("b:"))
    assert (b["state"], b["attempts"]) == ("sending", 1)  # the cut-short try counts
    later = datetime.now(UTC) + timedelta(minutes=2)
    sent = alerts.notify(check.check(config, now=later), now=later)
    assert [(s["job"], s["sent"], s["attempt"]) for s in sent] == [("b", True, 2)]
    assert len((tmp_path / "calls-b").read_text().splitlines()) == 1


@pytest.mark.parametrize("text", ["line one\nline two", "nul\0byte", "\udce9 not utf-8"])
def test_a_send_gets_its_text_on_one_line_whatever_it_holds(
        tmp_path: Path, fake_crontab: FakeCrontab, text: str) -> None:
    scene(tmp_path, "cat >>{root}/calls; printf %s \"$SCHEDGEN_MESSAGE\" >>{root}/env")
    config = check.check(tmp_path / "jobs.toml").jobs[0]
    assert alerts.send(config, "failure", "failed-items", text) == (True, "sent")
    assert len((tmp_path / "calls").read_text().splitlines()) == 1
    assert "\n" not in (tmp_path / "env").read_text()
    assert os.path.getsize(tmp_path / "env") > 0


def test_a_system_job_and_a_user_job_of_one_name_keep_their_sends_apart(
        tmp_path: Path, fake_crontab: FakeCrontab) -> None:
    # root's own jobs.toml and the machine's, both of namespace "default", each with a
    # job "pub" whose queue has a failed item; each checked in turn, twice.
    configs = []
    for side, extra in (("mine", ""), ("machine", 'scope = "system"\nuser = "nobody"\n')):
        root = tmp_path / side
        scene(root, "cat >>{root}/calls")
        text = jobs_toml(root, "cat >>{root}/calls").replace(
            'on = ["failure"]', 'on = ["failure", "recovery"]')
        configs.append(write_config(root / "jobs.toml",
                                    text.replace('[jobs.pub.queue]', extra + '[jobs.pub.queue]')))
    for _ in range(2):
        for config in configs:
            alerts.notify(check.check(config, now=T0), now=T0)
    for side in ("mine", "machine"):    # each problem once (same key), no false "resolved"
        calls = tmp_path / side / "calls"
        assert (calls.read_text().splitlines() if calls.exists() else []) == [
            f"pub: 1 item in {tmp_path / side}/q/failed (newest a-bad.json)"]
    assert [v["job"] for v in json.loads(alerts.memory_path("default", "system")
                                         .read_text())["sent"].values()] == ["pub"]
