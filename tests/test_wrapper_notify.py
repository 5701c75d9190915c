"""Real wrapper runs with notify settings and queue folders: notify.sh and fscheck.sh as
the runtime calls them (pings go to a local HTTP server through the real curl)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from schedgen.render.artifacts import notify_path, wrapper
from schedgen.render.desired import desired
from tests import wrapper_kit
from tests.pinghub import PingHub
from tests.wrapper_kit import Wrapped, fill_inbox, make_job, queue_fields, wait_for

needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def notify_job(tmp_path: Path, command: Any, notify: dict[str, Any], **fields: Any) -> Wrapped:
    return make_job(tmp_path, "nj", command=command, lock=False, notify=notify, **fields)


def calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def recorder(tmp_path: Path) -> tuple[list[str], Path]:
    """A notify command that appends its event, exit code and stdin to a file."""
    out = tmp_path / "calls.txt"
    script = tmp_path / "rec.sh"
    script.write_text('{ printf "%s %s %s\\n" "$SCHEDGEN_EVENT" "$SCHEDGEN_EXIT_CODE" '
                      '"$SCHEDGEN_OUTCOME"; sed "s/^/stdin: /"; } >>"$1"\n')
    return ["bash", str(script), str(out)], out


@needs_curl
def test_a_failing_run_notifies_and_pings_its_code_then_a_success_recovers(
        tmp_path: Path, pinghub: PingHub) -> None:
    cmd, out = recorder(tmp_path)
    flag = tmp_path / "fail"
    flag.write_text("")
    w = notify_job(tmp_path, f"echo boom >&2; [ ! -e {flag} ] || exit 3",
                   {"command": cmd, "ping_url": f"{pinghub.url}/hc-1"})
    r = w.run()
    assert r.returncode == 3  # the job's status is its command's, notify or not
    assert pinghub.wait_for(2) == ["/hc-1/start", "/hc-1/3"]
    wait_for(lambda: len(calls(out)) >= 2, what="the failure notification")
    assert calls(out) == ["failure 3 failed", "stdin: boom"]
    # the URL never reaches the shared logs
    for f in [w.log_dir / "events.jsonl", *w.log_dir.rglob("*.log")]:
        assert "hc-1" not in f.read_text() and "127.0.0.1" not in f.read_text(), f

    flag.unlink()
    r = w.run()
    assert r.returncode == 0
    assert pinghub.wait_for(4)[2:] == ["/hc-1/start", "/hc-1"]
    wait_for(lambda: len(calls(out)) >= 4, what="the recovery notification")
    assert calls(out)[2:] == ["recovery 0 ok", "stdin: boom"]

    r = w.run()  # a second success: a ping, no notification
    assert r.returncode == 0
    assert pinghub.wait_for(6)[4:] == ["/hc-1/start", "/hc-1"]
    wait_for(lambda: "ping success: sent" in (w.run_dirs()[-1] / "notify.log").read_text()
             if (w.run_dirs()[-1] / "notify.log").exists() else False, what="notify.log")
    assert len(calls(out)) == 4


@pytest.mark.macos
@needs_curl
def test_a_ping_only_job_pings_start_then_success(tmp_path: Path, pinghub: PingHub) -> None:
    w = notify_job(tmp_path, ["true"], {"ping_url": f"{pinghub.url}/p?x=1"})
    assert "sg_notify_cmd" not in w.text
    r = w.run()
    assert r.returncode == 0 and r.stderr == ""
    assert pinghub.wait_for(2) == ["/p/start?x=1", "/p?x=1"]


@needs_curl
def test_a_users_curlrc_does_not_reach_the_pings(tmp_path: Path, home: Path,
                                                pinghub: PingHub) -> None:
    # A ~/.curlrc that would send the ping through a dead proxy, trace it to a file and
    # add its own output to the status code the wrapper reads.
    trace = tmp_path / "trace.txt"
    (home / ".curlrc").write_text(f'proxy = "http://127.0.0.1:9"\ntrace-ascii = "{trace}"\n'
                                  'write-out = "hostile"\nfail\n')
    w = notify_job(tmp_path, ["true"], {"ping_url": f"{pinghub.url}/rc"})
    r = w.run(env={"HOME": str(home)})
    assert r.returncode == 0 and r.stderr == ""
    assert pinghub.wait_for(2) == ["/rc/start", "/rc"]
    log = w.run_dirs()[-1] / "notify.log"
    wait_for(lambda: "ping success:" in (log.read_text() if log.exists() else ""),
             what="notify.log")
    assert "ping success: sent (HTTP 200)" in log.read_text()
    assert not trace.exists()



@pytest.mark.macos
@needs_curl
def test_a_standalone_job_file_sends_the_same(tmp_path: Path, pinghub: PingHub) -> None:
    w = notify_job(tmp_path, "exit 4", {"ping_url": f"{pinghub.url}/s"})
    alone = tmp_path / "alone" / "nj.sh"
    alone.parent.mkdir()
    alone.write_text(wrapper(w.job, w.config, standalone=True))
    p = subprocess.run([wrapper_kit.BASH, str(alone)], env=w.env(), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 4
    assert pinghub.wait_for(2) == ["/s/start", "/s/4"]


@pytest.mark.macos
def test_a_precondition_failure_notifies_with_78(tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path)
    w = notify_job(tmp_path, ["true"], {"command": cmd, "on": ["failure"]},
                   working_dir=str(tmp_path / "missing"))
    r = w.run()
    assert r.returncode == 78
    wait_for(lambda: calls(out) != [], what="the precondition notification")
    assert calls(out) == ["failure 78 precondition"]


def test_a_smoke_run_sends_nothing(tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path)
    w = notify_job(tmp_path, ["false"], {"command": cmd}, smoke=["false"])
    r = w.run(env={"SCHEDGEN_SMOKE": "1"})
    assert r.returncode == 1
    assert not out.exists() and not (w.log_dir / ".notify-failed").exists()


@needs_curl
def test_a_queue_job_sends_one_pair_per_call_and_an_empty_queue_pings_success(
        tmp_path: Path, pinghub: PingHub) -> None:
    q = queue_fields(tmp_path, batch=0)  # all items in one call
    w = notify_job(tmp_path, ["cat", "{item}"], {"ping_url": f"{pinghub.url}/q"}, queue=q)
    fill_inbox(Path(q["inbox"]), ["a.json", "b.json", "c.json"])
    assert w.run().returncode == 0
    assert len(w.events("finish")) == 3
    assert pinghub.wait_for(2) == ["/q/start", "/q"]
    assert w.run().returncode == 0  # empty: nothing started, the end still pinged
    assert pinghub.wait_for(3) == ["/q/start", "/q", "/q"], pinghub.seen()


def test_queue_folders_on_two_file_systems_stop_the_run_with_78(tmp_path: Path) -> None:
    # A stat on PATH that reports another device for processed/: the call path of a
    # second file system (tests do not mount one).
    q = queue_fields(tmp_path)
    processed = tmp_path / "q" / "processed"
    real = shutil.which("stat")
    assert real
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    stub = bindir / "stat"
    stub.write_text(f"""#!/bin/bash
[ "$1" = -L ] && [ "$2" = -c ] || exit 1
shift 4
for p; do
  if [ "$p" = {processed} ]; then echo 99999; else {real} -L -c %d -- "$p"; fi
done
""")
    stub.chmod(0o755)
    cmd, out = recorder(tmp_path)
    w = make_job(tmp_path, "qj", command=["cat", "{item}"], lock=False, queue=q,
                 path=[str(bindir), "/usr/bin", "/bin"],
                 notify={"command": cmd, "on": ["failure"]})
    fill_inbox(Path(q["inbox"]), ["a.json"])
    r = w.run()
    assert r.returncode == 78, r.stderr
    assert "another file system" in r.stderr and str(processed) in r.stderr
    assert (Path(q["inbox"]) / "a.json").exists()
    assert not list(processed.iterdir())
    assert [e["what"] for e in w.events("precondition")] == ["queue"]
    assert w.events("start") == []
    wait_for(lambda: calls(out) != [], what="the precondition notification")
    assert calls(out) == ["failure 78 precondition"]


@pytest.mark.macos
def test_queue_folders_on_one_file_system_run(tmp_path: Path) -> None:
    q = queue_fields(tmp_path)
    w = make_job(tmp_path, "qj", command=["cat", "{item}"], lock=False, queue=q)
    fill_inbox(Path(q["inbox"]), ["a.json"])
    assert w.run().returncode == 0
    assert (tmp_path / "q" / "processed" / "a.json").exists()


def test_the_notify_file_is_installed_only_beside_jobs_that_need_it(tmp_path: Path) -> None:
    w = notify_job(tmp_path, ["true"], {"ping_url": "https://hc.example/x"})
    kinds = [(a.kind, Path(a.rel).name) for a in desired(w.config)]
    assert ("runtime", notify_path(w.job, w.config).name) in kinds
    (tmp_path / "p").mkdir()
    (tmp_path / "m").mkdir()
    plain = make_job(tmp_path / "p", "pj", command=["true"])
    names = [Path(a.rel).name for a in desired(plain.config)]
    assert not any(n.startswith("schedgen-notify") for n in names)
    # a notify table with only check's event (missed) costs the runs nothing
    m = make_job(tmp_path / "m", "mj", command=["true"],
                 notify={"command": ["true"], "on": ["missed"]})
    assert "sg_notify" not in m.text and "sg_ping" not in m.text


@needs_curl
def test_a_failing_queue_item_notifies_once_with_its_status(
        tmp_path: Path, pinghub: PingHub) -> None:
    cmd, out = recorder(tmp_path)
    q = queue_fields(tmp_path, batch=0)
    w = notify_job(tmp_path, ["bash", "-c", 'case $1 in *b.json) echo bad >&2; exit 5;; esac',
                              "_", "{item}"],
                   {"command": cmd, "ping_url": f"{pinghub.url}/q"}, queue=q)
    fill_inbox(Path(q["inbox"]), ["a.json", "b.json", "c.json"])
    r = w.run()
    assert r.returncode == 5  # the failed item ends the call with its status
    assert pinghub.wait_for(2) == ["/q/start", "/q/5"]
    wait_for(lambda: len(calls(out)) >= 2, what="the failure notification")
    assert calls(out) == ["failure 5 failed", "stdin: bad"]


@pytest.mark.macos
def test_a_timeout_notifies_with_124(tmp_path: Path) -> None:
    cmd, out = recorder(tmp_path)
    w = notify_job(tmp_path, "sleep 30", {"command": cmd, "on": ["failure"]}, timeout=1)
    r = w.run()
    assert r.returncode == 124
    wait_for(lambda: len(calls(out)) >= 2, what="the timeout notification")
    # its stdin says what happened, not just the command's `Terminated`
    assert calls(out) == ["failure 124 timeout", "stdin: schedgen: timed out after 1s; killed"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_queue_jobs_notify_command_can_be_stopped_by_term(tmp_path: Path) -> None:
    # A queue job's finish is sent from the run's end, which ignores INT, TERM and HUP:
    # ignored signals stay ignored across exec, so the notify command's time limit had
    # needed its KILL. It now starts with the default ones.
    out = tmp_path / "sigign"
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    w = notify_job(tmp_path, "exit 3",
                   {"command": ["sh", "-c", f"grep SigIgn /proc/$$/status >{out}"],
                    "on": ["failure"]}, queue=queue_fields(tmp_path))
    assert w.run().returncode == 3
    wait_for(out.exists, what="the notify command")
    wait_for(lambda: out.read_text().strip() != "", what="its line")
    mask = int(out.read_text().split()[1], 16)
    assert not mask & (1 << (15 - 1) | 1 << (2 - 1) | 1 << (1 - 1)), hex(mask)
