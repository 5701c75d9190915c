"""notify.mail and notify.webhook from real wrapper runs and from `check --notify`: mail
through the real msmtp (as sendmail) to an SMTP server on loopback, webhooks to an HTTP
server on loopback through the real curl; every JSON payload checked against the
documented schema (schema/notify-payload.schema.json, docs/outcomes.md)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from schedgen.commands import alerts, check
from tests.fakes import FakeCrontab
from tests.helpers import write_config
from tests.mailhub import MSMTP, MailHub
from tests.pinghub import PingHub
from tests.test_hostile_records import cli
from tests.wrapper_kit import Wrapped, fill_inbox, make_job, queue_fields, wait_for

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "schema"
                     / "notify-payload.schema.json").read_text())
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def valid(payload: dict[str, Any]) -> dict[str, Any]:
    jsonschema.validate(payload, SCHEMA)
    return payload


def posts(hub: PingHub, n: int) -> list[dict[str, Any]]:
    hub.wait_for(n)
    return [json.loads(body) for method, _, body in hub.raw() if method == "POST"]


def job(tmp_path: Path, command: Any, notify: dict[str, Any], **fields: Any) -> Wrapped:
    return make_job(tmp_path, "nj", command=command, lock=False, notify=notify, **fields)


def notify_log(w: Wrapped, text: str) -> str:
    def log() -> str:
        p = w.run_dirs()[-1] / "notify.log"
        return p.read_text() if p.exists() else ""
    wait_for(lambda: text in log(), what=f"{text!r} in notify.log")
    return log()


@pytest.mark.macos
def test_a_failure_and_its_recovery_each_mail_once_through_msmtp(
        tmp_path: Path, mailhub: MailHub) -> None:
    flag = tmp_path / "fail"
    flag.write_text("")
    w = job(tmp_path, f"echo boom >&2; [ ! -e {flag} ] || exit 3",
            {"mail": ["ops@example.com", "me@example.org"], "sendmail": MSMTP})
    assert w.run().returncode == 3
    [(rcpts, msg)] = mailhub.wait_for(1)
    run_id = w.run_dirs()[-1].name
    assert sorted(rcpts) == ["me@example.org", "ops@example.com"]
    assert msg["To"] == "ops@example.com, me@example.org"
    assert msg["Subject"].startswith("[schedgen] nj failed (exit 3) on ")
    assert msg["X-Schedgen-Run-Id"] == run_id and msg["X-Schedgen-Event"] == "failure"
    body = msg.get_content().replace("\r\n", "\n")  # as SMTP carried it
    for line in ("outcome:       failed", "exit code:     3", "attempt:       1 of 1",
                 f"run id:        {run_id}", f"run directory: {w.run_dirs()[-1]}",
                 "Last lines of stderr:\nboom"):
        assert line in body, body
    assert "mail failure: sent" in notify_log(w, "mail failure: sent")

    flag.unlink()
    assert w.run().returncode == 0
    mails = mailhub.wait_for(2)
    assert mails[1][1]["Subject"].startswith("[schedgen] nj recovered on ")
    assert w.run().returncode == 0  # healthy again: nothing more
    notify_log(w, "")
    assert len(mailhub.seen()) == 2


def test_sendmail_is_found_on_the_jobs_path_as_cron_users_have_it(
        tmp_path: Path, mailhub: MailHub) -> None:
    bin_dir = tmp_path / "mta"
    bin_dir.mkdir()
    (bin_dir / "sendmail").symlink_to(MSMTP)  # what msmtp-mta installs as /usr/sbin/sendmail
    w = make_job(tmp_path, "nj", command="exit 2", lock=False, notify={"mail": "root@localhost"},
                 path=[str(bin_dir), "/usr/bin", "/bin"])
    assert w.run().returncode == 2
    [(rcpts, msg)] = mailhub.wait_for(1)
    assert rcpts == ["root@localhost"] and "failed (exit 2)" in msg["Subject"]


@needs_curl
@pytest.mark.macos
def test_the_webhook_json_follows_the_schema_and_says_what_happened(
        tmp_path: Path, pinghub: PingHub) -> None:
    w = job(tmp_path, "echo out; printf 'a \"quoted\" \\\\ line\\n\\tx\\n' >&2; exit 5",
            {"webhook": f"{pinghub.url}/hook/T0K3N"})
    assert w.run().returncode == 5
    [p] = posts(pinghub, 1)
    run = w.run_dirs()[-1]
    valid(p)
    assert (p["event"], p["job"], p["outcome"], p["exit_code"]) == ("failure", "nj", "failed", 5)
    assert (p["run_id"], p["run_dir"], p["log_dir"]) == (run.name, str(run), str(w.log_dir))
    assert (p["attempt"], p["max_attempts"], p["will_retry"], p["item"]) == (1, 1, False, None)
    assert p["stderr_tail"] == 'a "quoted" \\ line\n x'
    assert p["message"].startswith("nj failed (exit 5) on ") and p["failures_in_a_row"] == 1
    assert json.loads((run / "notify.json").read_text()) == p  # kept with the run
    assert "webhook failure: sent (HTTP 200; try 1 of 3)" in notify_log(w, "webhook failure:")
    for f in [w.log_dir / "events.jsonl", *w.log_dir.rglob("*.log"), *w.log_dir.rglob("*.json")]:
        assert "T0K3N" not in f.read_text(), f  # the URL is a secret


@needs_curl
@pytest.mark.parametrize("shape", ["slack", "discord", "teams"])
def test_each_chat_shape_carries_the_message_and_the_stderr_tail(
        tmp_path: Path, pinghub: PingHub, shape: str) -> None:
    w = job(tmp_path, "echo disk full >&2; exit 1",
            {"webhook": f"{pinghub.url}/hook", "webhook_format": shape})
    assert w.run().returncode == 1
    [body] = posts(pinghub, 1)
    if shape == "slack":
        assert set(body) == {"text"}
        text = body["text"]
    elif shape == "discord":
        assert body["username"] == "schedgen"
        text = body["content"]
    else:
        assert body["type"] == "message"
        [att] = body["attachments"]
        assert att["contentType"] == "application/vnd.microsoft.card.adaptive"
        card = att["content"]
        assert card["type"] == "AdaptiveCard"
        text = "\n".join(b["text"] for b in card["body"])
    assert "schedgen: nj: failure" in text and "nj failed (exit 1)" in text
    assert "disk full" in text


@needs_curl
@pytest.mark.macos
def test_a_timeout_says_it_timed_out_after_n_seconds(tmp_path: Path, pinghub: PingHub) -> None:
    w = job(tmp_path, "sleep 30", {"webhook": f"{pinghub.url}/hook"}, timeout=1)
    assert w.run().returncode == 124
    [p] = posts(pinghub, 1)
    valid(p)
    assert (p["outcome"], p["exit_code"], p["timed_out_after"]) == ("timeout", 124, 1)
    assert "timed out after 1s (killed)" in p["message"]
    assert p["stderr_tail"].endswith("schedgen: timed out after 1s; killed")


@needs_curl
@pytest.mark.macos
def test_a_queue_item_says_its_attempt_and_where_it_went(tmp_path: Path,
                                                         pinghub: PingHub) -> None:
    inbox = tmp_path / "q" / "inbox"
    fill_inbox(inbox, ["a.json"])
    w = job(tmp_path, "echo bad item >&2; exit 4", {"webhook": f"{pinghub.url}/hook"},
            queue=queue_fields(tmp_path, max_attempts=2))
    assert w.run().returncode != 0
    [first] = posts(pinghub, 1)
    valid(first)
    assert (first["attempt"], first["max_attempts"], first["will_retry"]) == (1, 2, True)
    assert first["item"] == {"name": "a.json", "to": "inbox", "path": str(inbox / "a.json")}
    assert (first["outcome"], first["exit_code"]) == ("failed", 4)
    assert first["stderr_tail"] == "bad item" and "a.json will be retried" in first["message"]
    assert Path(first["item"]["path"]).exists()  # where it is now, not under processing/

    assert w.run().returncode != 0
    second = posts(pinghub, 2)[1]
    valid(second)
    failed = tmp_path / "q" / "failed" / "a.json"
    assert (second["attempt"], second["max_attempts"], second["will_retry"]) == (2, 2, False)
    assert second["item"] == {"name": "a.json", "to": "failed", "path": str(failed)}
    assert failed.exists() and f"moved to {failed}" in second["message"]
    assert second["failures_in_a_row"] == 2


@needs_curl
def test_no_recovery_while_something_of_the_job_sits_in_failed(tmp_path: Path,
                                                             pinghub: PingHub) -> None:
    inbox = tmp_path / "q" / "inbox"
    fill_inbox(inbox, ["bad.json"])
    w = job(tmp_path, 'case "$SCHEDGEN_ITEM" in *bad*) exit 1 ;; esac',
            {"webhook": f"{pinghub.url}/hook"}, queue=queue_fields(tmp_path, max_attempts=1))
    w.run()
    assert [p["event"] for p in posts(pinghub, 1)] == ["failure"]
    assert (tmp_path / "q" / "failed" / "bad.json").exists()
    assert w.run().returncode == 0  # an empty run: no news
    fill_inbox(inbox, ["good.json"])
    assert w.run().returncode == 0  # ok, but bad.json is still in failed/
    notify_log(w, "")
    assert [p["event"] for p in posts(pinghub, 1)] == ["failure"]
    (tmp_path / "q" / "failed" / "bad.json").unlink()
    fill_inbox(inbox, ["good2.json"])
    assert w.run().returncode == 0
    events = posts(pinghub, 2)
    assert [p["event"] for p in events] == ["failure", "recovery"]
    valid(events[1])


@needs_curl
def test_after_n_alerts_only_from_the_nth_failure_in_a_row(tmp_path: Path,
                                                           pinghub: PingHub) -> None:
    flag = tmp_path / "fail"
    flag.write_text("")
    w = job(tmp_path, f"[ ! -e {flag} ] || exit 1", {"webhook": f"{pinghub.url}/hook",
                                                      "after": 2})
    w.run()
    assert w.run_dirs() and not (w.run_dirs()[-1] / "notify.json").exists()
    flag.unlink()
    w.run()  # one failure, then an ok: nothing was told, so no recovery either
    flag.write_text("")
    w.run()
    w.run()
    [p] = posts(pinghub, 1)
    assert p["failures_in_a_row"] == 2 and "(2 failed runs in a row)" in p["message"]
    flag.unlink()
    w.run()
    events = posts(pinghub, 2)
    assert [e["event"] for e in events] == ["failure", "recovery"]
    assert "ok after 2 failed run(s)" in events[1]["message"]


@needs_curl
def test_a_plain_jobs_retry_fields_come_from_the_runtime(tmp_path: Path,
                                                         pinghub: PingHub) -> None:
    # A plain job's retries (the runtime exports SCHEDGEN_ATTEMPT / SCHEDGEN_MAX_ATTEMPTS
    # for each try) fill attempt n of m; from outside they are cleared.
    w = job(tmp_path, "exit 1", {"webhook": f"{pinghub.url}/hook"})
    w.run(env={**os.environ, "SCHEDGEN_ATTEMPT": "7", "SCHEDGEN_MAX_ATTEMPTS": "9"})
    [p] = posts(pinghub, 1)
    assert (p["attempt"], p["max_attempts"]) == (1, 1)


# --- check --notify --------------------------------------------------------------------

CHECKED = """
[jobs.pub]
command = "true"
schedule = "40 10 * * *"
targets = ["cron"]
log_root = "{root}/logs"
wrapper_dir = "{root}/wrappers"
[jobs.pub.queue]
inbox = "{root}/q/inbox"
[jobs.pub.notify]
on = ["failure", "recovery"]
mail = "ops@example.com"
sendmail = "{msmtp}"
webhook = "{hook}"
"""


def test_check_mails_and_posts_each_problem_once_then_its_recovery(
        tmp_path: Path, fake_crontab: FakeCrontab, mailhub: MailHub, pinghub: PingHub) -> None:
    for d in ("logs/pub", "q/inbox", "q/failed"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    bad = tmp_path / "q/failed/a-bad.json"
    bad.write_text("{}")
    config = write_config(tmp_path / "jobs.toml", CHECKED.format(
        root=tmp_path, msmtp=MSMTP, hook=f"{pinghub.url}/hook/S3CRET"))
    r = cli(config, "check", "--notify", "--json")
    out = json.loads(r.stdout)
    assert sorted((s["channel"], s["sent"]) for s in out["notified"]) == [
        ("mail", True), ("webhook", True)], out
    [(rcpts, msg)] = mailhub.wait_for(1)
    assert rcpts == ["ops@example.com"] and "a-bad.json" in msg["Subject"]
    [p] = posts(pinghub, 1)
    valid(p)
    assert (p["event"], p["problem"], p["run_id"]) == ("failure", "failed-items", None)
    assert "S3CRET" not in r.stdout.decode() + r.stderr.decode()

    cli(config, "check", "--notify")  # once only
    assert len(mailhub.seen()) == 1 and len(posts(pinghub, 1)) == 1

    bad.unlink()
    r = cli(config, "check", "--notify")
    assert b"notify pub (recovery) by mail: mailed to ops@example.com" in r.stderr, r.stderr
    assert mailhub.wait_for(2)[1][1]["Subject"].startswith("[schedgen] pub: resolved: ")
    rec = posts(pinghub, 2)[1]
    valid(rec)
    assert rec["event"] == "recovery"


def test_a_failing_webhook_is_retried_by_later_checks_and_the_mail_is_not_resent(
        tmp_path: Path, fake_crontab: FakeCrontab, mailhub: MailHub, pinghub: PingHub) -> None:
    from datetime import UTC, datetime, timedelta
    for d in ("logs/pub", "q/inbox", "q/failed"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
    (tmp_path / "q/failed/a-bad.json").write_text("{}")
    config = write_config(tmp_path / "jobs.toml", CHECKED.format(
        root=tmp_path, msmtp=MSMTP, hook=f"{pinghub.url}/hook"))
    pinghub.status["/hook"] = 500
    t0 = datetime(2026, 1, 9, 12, 0, tzinfo=UTC)

    def at(after: float) -> list[dict[str, object]]:
        now = t0 + timedelta(seconds=after)
        return alerts.notify(check.check(config, now=now), now=now)

    first = at(0)
    assert sorted((s["channel"], s["sent"]) for s in first) == [("mail", True),
                                                                ("webhook", False)]
    assert "curl exit 22" in str([s["detail"] for s in first if s["channel"] == "webhook"])
    assert [(s["channel"], s["attempt"]) for s in at(61)] == [("webhook", 2)]
    pinghub.status["/hook"] = 200
    assert [(s["channel"], s["sent"]) for s in at(61 + 4 * 60 + 1)] == [("webhook", True)]
    assert at(3600) == []
    assert len(mailhub.seen()) == 1 and len(pinghub.seen()) == 3


def test_the_webhook_url_is_masked_in_diff_like_the_ping_url(tmp_path: Path,
                                                             fake_crontab: FakeCrontab) -> None:
    config = write_config(tmp_path / "jobs.toml", CHECKED.format(
        root=tmp_path, msmtp=MSMTP, hook="https://hooks.example.com/services/T00/B00/XXSECRET"))
    for args in (("diff",), ("diff", "--json"), ("diff", "--full"), ("diff", "--full", "--json")):
        r = cli(config, *args)
        text = r.stdout.decode() + r.stderr.decode()
        assert "XXSECRET" not in text and "hooks.example.com" not in text, (args, text)
    r = cli(config, "diff", "--full")
    assert b"sg_webhook=<masked>" in r.stdout, r.stdout


# --- heartbeats: rid and output ----------------------------------------------------------

@needs_curl
@pytest.mark.macos
def test_the_finish_ping_carries_the_output_and_the_run_id_of_its_start(
        tmp_path: Path, pinghub: PingHub) -> None:
    w = job(tmp_path, "echo to stdout; echo to stderr >&2; exit 3",
            {"ping_url": f"{pinghub.url}/hc-uuid?create=1"})
    assert w.run().returncode == 3
    pinghub.wait_for(2)
    (m1, start, b1), (m2, end, b2) = pinghub.raw()
    assert start.startswith("/hc-uuid/start?create=1&rid=") and b1 == b""
    assert end.startswith("/hc-uuid/3?create=1&rid=") and m2 == "POST"
    rid = start.rsplit("rid=", 1)[1]
    assert end.rsplit("rid=", 1)[1] == rid
    assert len(rid) == 36 and rid[14] == "4"  # a UUID, as healthchecks.io wants it
    assert b2 == b"to stdout\nto stderr\n"
    wait_for(lambda: not (w.run_dirs()[-1] / ".ping-body").exists(), what="the body removed")

    assert w.run().returncode == 3  # the next run: a run ID of its own
    pinghub.wait_for(4)
    assert pinghub.raw()[2][1].rsplit("rid=", 1)[1] != rid


@needs_curl
def test_the_ping_body_is_the_last_10_kb(tmp_path: Path, pinghub: PingHub) -> None:
    w = job(tmp_path, "seq 1 20000; echo last line >&2", {"ping_url": f"{pinghub.url}/hc"})
    assert w.run().returncode == 0
    pinghub.wait_for(2)
    body = pinghub.raw()[1][2]
    assert len(body) == 10_000 and body.endswith(b"20000\nlast line\n")


# --- bounded: a server that hangs holds neither the run nor the alert ---------------------

class Hanging:
    """A TCP server that accepts and then never answers."""

    def __init__(self) -> None:
        import socket
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]


@needs_curl
def test_a_hanging_webhook_neither_holds_the_run_nor_outlives_its_bound(tmp_path: Path) -> None:
    import subprocess
    import time

    from tests.test_notify_sh import NOTIFY_SH
    hang = Hanging()
    run_dir = tmp_path / "logs" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "stderr.log").write_text("boom\n")
    script = tmp_path / "run.sh"
    script.write_text(f"set -u\n. {NOTIFY_SH}\nsg_job=j sg_log_dir={tmp_path}/logs\n"
                      f"sg_notify_on=failure sg_webhook=http://127.0.0.1:{hang.port}/h\n"
                      "sg_notify_timeout=2 sg_webhook_time=60\n"
                      f'sg_notify_finish 1 failed {tmp_path}/logs {run_dir}\nexit 1\n')
    t0 = time.monotonic()
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30)
    returned = time.monotonic() - t0
    assert r.returncode == 1 and r.stderr == ""
    log = run_dir / "notify.log"
    wait_for(lambda: log.exists() and "killed after 2s" in log.read_text(),
             what="the webhook's bound")
    assert returned < 60  # it returned long before curl's own 60 s limit could end it
    assert log.read_text() == "webhook failure: killed after 2s\n"
    hang.sock.close()


def test_a_sendmail_that_hangs_is_killed_with_its_children(tmp_path: Path) -> None:
    import subprocess

    from tests.test_notify_sh import NOTIFY_SH, _alive
    pids = tmp_path / "pids"
    slow = tmp_path / "slowmail"
    slow.write_text(f"#!/bin/sh\nsleep 300 &\necho $! >{pids}\ncat >/dev/null\nwait\n")
    slow.chmod(0o755)
    run_dir = tmp_path / "logs" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    script = tmp_path / "run.sh"
    script.write_text(f"set -u\n. {NOTIFY_SH}\nsg_job=j sg_log_dir={tmp_path}/logs\n"
                      f"sg_notify_on=failure sg_mail=ops@example.com sg_sendmail={slow}\n"
                      "sg_notify_timeout=1\n"
                      f'sg_notify_finish 1 failed {tmp_path}/logs {run_dir}\nexit 1\n')
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    log = run_dir / "notify.log"
    wait_for(lambda: log.exists() and "killed after 1s" in log.read_text(), what="the bound")
    wait_for(pids.exists, what="the pid")
    pid = int(pids.read_text())
    wait_for(lambda: not _alive(pid), what="sendmail's child to be killed")
    mail = (run_dir / "notify.mail").read_text()
    assert mail.startswith("To: ops@example.com\nSubject: [schedgen] j failed (exit 1) on ")
