"""Metrics: the wrapper's .prom file (metrics_dir), `schedgen metrics`, and a real
node_exporter scraping them (textfile collector) with promtool checking the text."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedgen.commands.metrics import metrics_cmd
from schedgen.outcomes import metrics
from tests import wrapper_kit
from tests.wrapper_kit import finish, make_job, start_together, wait_for

NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
PROMTOOL = shutil.which("promtool")
CMD = ["sh", "-c", 'case ${MODE:-ok} in ok) exit 0 ;; fail) exit 3 ;; '
       'sleep) sleep "${NAP:-5}" ;; esac']


def _key(series_text: str) -> str:
    """A series with its labels sorted (node_exporter sorts them; the wrapper does not)."""
    name, _, rest = series_text.partition("{")
    pairs = sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest))
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in pairs) + "}"


def samples(text: str) -> dict[str, float]:
    """name{labels} -> value, for the schedgen series of an exposition."""
    out = {}
    for line in text.splitlines():
        if line.startswith("schedgen_"):
            key, value = line.rsplit(" ", 1)
            out[_key(key)] = float(value)
    return out


def series(name: str, job: str, extra: str = "", ns: str = "default") -> str:
    return _key(f'schedgen_job_{name}{{namespace="{ns}",job="{job}"{extra}}}')


def prom(w: wrapper_kit.Wrapped) -> Path:
    path = metrics.prom_path(w.job, w.config.namespace)
    assert path is not None
    return path


def job(tmp_path: Path, name: str = "m", **fields: object) -> wrapper_kit.Wrapped:
    fields.setdefault("command", CMD)
    return make_job(tmp_path, name, metrics_dir=str(tmp_path / "metrics"), **fields)


@pytest.mark.macos
def test_each_outcome_lands_in_the_file_and_counters_survive_rotation(tmp_path: Path) -> None:
    w = job(tmp_path, timeout="1s")
    env = {"SCHEDGEN_TEST_KILL_GRACE": "1"}
    assert w.run(env={**env, "MODE": "ok"}).returncode == 0
    assert w.run(env={**env, "MODE": "fail"}).returncode == 3
    assert w.run(env={**env, "MODE": "sleep"}).returncode == 124
    s = samples(prom(w).read_text())
    starts = [e for e in w.events("start")]
    fins = {e["outcome"]: e for e in w.events("finish")}
    assert s[series("runs_total", "m", ',outcome="ok"')] == 1
    assert s[series("runs_total", "m", ',outcome="failed"')] == 1
    assert s[series("runs_total", "m", ',outcome="timeout"')] == 1
    assert s[series("runs_total", "m", ',outcome="interrupted"')] == 0
    assert s[series("last_exit_code", "m")] == 124
    assert s[series("last_duration_seconds", "m")] == fins["timeout"]["duration"] >= 1
    # The times are the records' own (the wrapper's clock).
    from schedgen.outcomes.events import epoch
    assert s[series("last_start_timestamp_seconds", "m")] == epoch(starts[-1]["ts"])
    assert s[series("last_success_timestamp_seconds", "m")] == epoch(fins["ok"]["ts"])
    assert s[series("last_failure_timestamp_seconds", "m")] == epoch(fins["timeout"]["ts"])
    assert oct(prom(w).stat().st_mode & 0o777) == "0o644"   # the collector's user reads it
    # Rotation takes the run dirs and events away; the counters go on from the state file.
    shutil.rmtree(w.log_dir / "runs")
    (w.log_dir / "events.jsonl").unlink()
    assert w.run(env={**env, "MODE": "ok"}).returncode == 0
    s = samples(prom(w).read_text())
    assert s[series("runs_total", "m", ',outcome="ok"')] == 2
    assert s[series("runs_total", "m", ',outcome="timeout"')] == 1
    assert s[series("last_exit_code", "m")] == 0
    assert not list(prom(w).parent.glob(".*"))   # no temp file left behind


@pytest.mark.macos
def test_busy_runs_are_counted_while_the_holder_runs(tmp_path: Path) -> None:
    w = job(tmp_path)
    holder = w.popen(env={"MODE": "sleep", "NAP": "30"})
    wait_for(lambda: w.events("start"), what="the holder's start")
    n = 6
    procs = start_together([w.argv()] * n, w.env(), tmp_path)
    assert [rc for rc, _, _ in finish(procs)] == [75] * n
    assert (w.log_dir / ".metrics-busy").read_text().split() == [str(n)]
    os.killpg(holder.pid, 15)
    holder.communicate(timeout=30)
    s = samples(prom(w).read_text())
    assert s[series("lock_busy_total", "m")] == n
    assert s[series("runs_total", "m", ',outcome="interrupted"')] == 1


@pytest.mark.macos
def test_concurrent_runs_without_a_lock_lose_no_count(tmp_path: Path) -> None:
    w = job(tmp_path, lock=False)
    n = 12
    procs = start_together([w.argv()] * n, w.env({"MODE": "ok"}), tmp_path)
    assert [rc for rc, _, _ in finish(procs)] == [0] * n
    procs = start_together([w.argv()] * n, w.env({"MODE": "fail"}), tmp_path)
    assert [rc for rc, _, _ in finish(procs)] == [3] * n
    s = samples(prom(w).read_text())
    assert s[series("runs_total", "m", ',outcome="ok"')] == n
    assert s[series("runs_total", "m", ',outcome="failed"')] == n
    assert len(w.events("finish")) == 2 * n


@pytest.mark.macos
def test_queue_depth_by_folder(tmp_path: Path) -> None:
    q = wrapper_kit.queue_fields(tmp_path, batch=2)
    w = job(tmp_path, "q", command=["sh", "-c", 'case $SCHEDGEN_ITEM in *bad*) exit 1 ;; esac'],
            queue={**q, "max_attempts": 1})
    inbox = Path(q["inbox"])
    wrapper_kit.fill_inbox(inbox, ["a.bad", "b.ok", "c.ok", "d.ok"])
    w.run()
    s = samples(prom(w).read_text())
    assert w.job.queue is not None
    failed = [f for f in w.job.queue.failed.iterdir() if not f.name.startswith(".")]
    assert s[series("queue_items", "q", ',state="inbox"')] == len(list(inbox.iterdir())) < 4
    assert s[series("queue_items", "q", ',state="processing"')] == 0
    assert s[series("queue_items", "q", ',state="failed"')] == len(failed) == 1
    fins = w.events("finish")
    assert s[series("runs_total", "q", ',outcome="failed"')] == 1
    assert s[series("runs_total", "q", ',outcome="ok"')] == len(fins) - 1


def test_the_command_prints_what_the_wrapper_wrote_and_the_schedule(tmp_path: Path) -> None:
    w = job(tmp_path)
    w.run(env={"MODE": "ok"})
    w.run(env={"MODE": "fail"})
    text = metrics_cmd(w.config.path, "m", tmp_path / "out")
    assert text.startswith(prom(w).read_text())   # the same families, the same words
    s = samples(text)
    assert s[series("missed_firings", "m")] == 0
    assert s[series("next_firing_timestamp_seconds", "m")] > time.time()
    sched = (tmp_path / "out" / "schedgen-schedule_default_m.prom").read_text()
    assert "runs_total" not in sched and "next_firing" in sched


def test_the_command_reads_records_when_the_state_is_not_ours(tmp_path: Path) -> None:
    w = job(tmp_path)
    for mode in ("ok", "ok", "fail"):
        w.run(env={"MODE": mode})
    (w.log_dir / ".metrics").write_bytes(b"1 99 x\n\x00garbage")
    (w.log_dir / ".metrics-busy").write_bytes(b"\xff\xfe")
    with (w.log_dir / "events.jsonl").open("ab") as f:
        f.write(b'{"event":"finish","run_id":\n\x00\xff not json\n')
    s = samples(metrics_cmd(w.config.path, "m", None))
    assert s[series("runs_total", "m", ',outcome="ok"')] == 2
    assert s[series("runs_total", "m", ',outcome="failed"')] == 1
    assert s[series("last_exit_code", "m")] == 3
    assert s[series("lock_busy_total", "m")] == 0


def test_label_values_are_escaped() -> None:
    assert metrics.label_value('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
    assert metrics.labels("ns", "j") == 'namespace="ns",job="j"'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def node_exporter(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    if NODE_EXPORTER is None:
        pytest.skip("prometheus-node-exporter is not installed (.ci/run installs it)")
    folder = tmp_path / "metrics"
    folder.mkdir()
    for _ in range(5):
        port = _free_port()
        p = subprocess.Popen([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{port}",
                              "--collector.disable-defaults", "--collector.textfile",
                              f"--collector.textfile.directory={folder}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}/metrics"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and p.poll() is None:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                time.sleep(0.05)
        if p.poll() is None:
            break
    else:
        pytest.fail("node_exporter did not start")
    try:
        yield folder, url
    finally:
        p.terminate()
        p.wait(timeout=10)


def _scrape(url: str) -> str:
    return urllib.request.urlopen(url, timeout=5).read().decode()


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (.ci/run installs it)")
def test_node_exporter_scrapes_the_series_and_promtool_finds_them_clean(
        tmp_path: Path, node_exporter: tuple[Path, str]) -> None:
    folder, url = node_exporter
    w = job(tmp_path, "ne", timeout="1s", lock={"name": "shared"})
    hold = job(tmp_path, "hold", lock={"name": "shared"})
    v = job(tmp_path, "other", command=["true"])
    env = {"SCHEDGEN_TEST_KILL_GRACE": "1"}
    assert w.run(env={**env, "MODE": "ok"}).returncode == 0
    assert w.run(env={**env, "MODE": "fail"}).returncode == 3
    assert w.run(env={**env, "MODE": "sleep"}).returncode == 124
    # Busy: another job holds the lock they share; the count shows from ne's next run.
    holder = hold.popen(env={"MODE": "sleep", "NAP": "30"})
    wait_for(lambda: hold.events("start"), what="the holder's start")
    assert w.run().returncode == 75
    os.killpg(holder.pid, 15)
    holder.communicate(timeout=30)
    assert w.run(env={"MODE": "ok"}).returncode == 0
    v.run()
    assert folder == prom(w).parent
    body = _scrape(url)
    # The collector says it read every file without error.
    assert 'node_textfile_scrape_error 0' in body
    s = samples(body)
    assert s[series("runs_total", "ne", ',outcome="ok"')] == 2
    assert s[series("runs_total", "ne", ',outcome="failed"')] == 1
    assert s[series("runs_total", "ne", ',outcome="timeout"')] == 1
    assert s[series("runs_total", "ne", ',outcome="interrupted"')] == 0
    assert s[series("lock_busy_total", "ne")] == 1
    assert s[series("last_exit_code", "ne")] == 0
    assert s[series("runs_total", "hold", ',outcome="interrupted"')] == 1
    assert s[series("last_exit_code", "hold")] == 143
    assert s[series("runs_total", "other", ',outcome="ok"')] == 1
    assert s[series("last_failure_timestamp_seconds", "other")] == 0
    # promtool's lint: the files as written, the command's output and the whole scrape.
    sched = tmp_path / "cmd.prom"
    sched.write_text(metrics_cmd(w.config.path, None, folder))
    for path in [*sorted(folder.glob("*.prom")), sched]:
        r = subprocess.run([str(PROMTOOL), "check", "metrics"], input=path.read_text(),
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), (path, r)
    body = _scrape(url)   # now with the command's schedule files too
    assert 'node_textfile_scrape_error 0' in body
    assert series("next_firing_timestamp_seconds", "ne") in body


def test_metrics_dir_is_validated_and_given_in_defaults_or_per_job(tmp_path: Path) -> None:
    from schedgen.config.load import loads
    from schedgen.errors import ConfigError

    base = '[jobs.a]\ncommand = ["true"]\nschedule = "@daily"\n'
    c = loads(f'[defaults]\nmetrics_dir = "{tmp_path}/m"\n{base}'
              '[jobs.b]\ncommand = ["true"]\nschedule = "@daily"\nmetrics_dir = "rel"\n',
              tmp_path / "jobs.toml")
    a, b = c.job("a"), c.job("b")
    assert a is not None and b is not None
    assert a.metrics_dir == tmp_path / "m"
    assert b.metrics_dir == tmp_path / "rel"   # relative to the config, as other paths
    assert loads(base, tmp_path / "jobs.toml").jobs[0].metrics_dir is None
    with pytest.raises(ConfigError, match=r"jobs\.a\.metrics_dir"):
        loads(base + "metrics_dir = 3\n", tmp_path / "jobs.toml")


@pytest.mark.macos
def test_a_metrics_file_that_cannot_be_written_leaves_the_run_its_status(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where the folder should be")
    w = make_job(tmp_path, "m", command=CMD, metrics_dir=str(tmp_path / "blocker" / "m"))
    r = w.run(env={"MODE": "ok"})
    assert r.returncode == 0
    assert "could not write the metrics file" in r.stderr
    assert w.events("finish")[-1]["outcome"] == "ok"


@pytest.mark.macos
def test_a_state_file_that_is_not_ours_starts_the_counts_again(tmp_path: Path) -> None:
    w = job(tmp_path)
    w.log_dir.mkdir(parents=True)
    (w.log_dir / ".metrics").write_bytes(b"1 x -3 99999999999999999999 \xff\n")
    (w.log_dir / ".metrics-busy").write_bytes(b"07\n")
    assert w.run(env={"MODE": "fail"}).returncode == 3
    s = samples(prom(w).read_text())
    assert s[series("runs_total", "m", ',outcome="failed"')] == 1
    assert s[series("runs_total", "m", ',outcome="ok"')] == 0
    assert s[series("runs_total", "m", ',outcome="timeout"')] == 0
    assert s[series("lock_busy_total", "m")] == 0


@pytest.mark.macos
@pytest.mark.parametrize("line", [
    "1 5 2 0123 1 10 20 30 4 0",  # leading 0: octal to bash
    "1 5 2 1234567890123456789 1 10 20 30 4 0",  # 19 digits: past bash's arithmetic
    "1 5 2 7x 1 10 20 30 4 0",  # not a number
    "1 5 2 3 1 10 20",  # the fields from the last failure on missing (empty)
])
def test_a_bad_field_in_the_state_resets_that_count_only(tmp_path: Path, line: str) -> None:
    w = job(tmp_path)
    w.log_dir.mkdir(parents=True)
    (w.log_dir / ".metrics").write_text(line + "\n")
    assert w.run(env={"MODE": "ok"}).returncode == 0
    s = samples(prom(w).read_text())
    assert s[series("runs_total", "m", ',outcome="ok"')] == 6
    assert s[series("runs_total", "m", ',outcome="failed"')] == 2
    short = line.endswith(" 20")
    assert s[series("runs_total", "m", ',outcome="timeout"')] == (3 if short else 0)
    assert s[series("runs_total", "m", ',outcome="interrupted"')] == 1
    assert s[series("last_failure_timestamp_seconds", "m")] == (0 if short else 30)
