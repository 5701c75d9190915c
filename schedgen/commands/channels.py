"""Mail and webhook, for `check --notify`: the same payload, mail and bodies as a run's
alerts (templates/notify.sh), each sent as one bounded process (sendout.py).

Mail goes through the local sendmail interface (`sendmail -t -i`: msmtp, postfix, exim
all have it), the webhook through curl (the URL on curl's stdin, never on its command
line), so neither adds a dependency to schedgen and both stop at their time limit with
whatever they started.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from typing import Any

from schedgen.commands import sendout
from schedgen.config.model import Job

SCHEMA = "schedgen.notify/1"
WEBHOOK_TIME = 10  # seconds one POST may take
SENDMAILS = ("/usr/sbin/sendmail", "/usr/lib/sendmail")  # where MTAs put it


def payload(job: Job, event: str, kind: str, text: str,
            now: datetime | None = None) -> dict[str, Any]:
    """A check's alert as the documented payload (schema/notify-payload.schema.json): a
    check knows the job and the problem, not a run."""
    now = now or datetime.now(UTC)
    return {"schema": SCHEMA, "event": event, "job": job.name,
            "host": os.uname().nodename or "localhost", "run_id": None, "outcome": None,
            "exit_code": None, "attempt": 1, "max_attempts": 1, "will_retry": False,
            "item": None, "duration": None, "timed_out_after": None, "failures_in_a_row": 0,
            "run_dir": None, "log_dir": str(job.log_dir), "stderr_tail": "",
            "message": f"{job.name}: {text}", "problem": kind or None,
            "time": now.strftime("%Y-%m-%dT%H:%M:%SZ")}


def mail_text(p: dict[str, Any], to: tuple[str, ...]) -> str:
    """The mail as sendmail -t reads it (recipients from To:)."""
    subject = f"[schedgen] {p['message']}"[:200]
    lines = [f"To: {', '.join(to)}", f"Subject: {subject}", "MIME-Version: 1.0",
             "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit",
             f"X-Schedgen-Job: {p['job']}", f"X-Schedgen-Event: {p['event']}",
             f"X-Schedgen-Run-Id: {p['run_id'] or ''}", "", p["message"], "",
             f"job:           {p['job']}", f"event:         {p['event']}",
             f"host:          {p['host']}"]
    if p["problem"]:
        lines.append(f"problem:       {p['problem']}")
    lines += [f"log directory: {p['log_dir']}"]
    if p["stderr_tail"]:
        lines += ["", "Last lines of stderr:", p["stderr_tail"]]
    return "\n".join("." + t if t == "." else t for t in lines) + "\n"


def webhook_body(p: dict[str, Any], shape: str) -> dict[str, Any]:
    """The webhook's JSON: the payload itself, or the Slack/Discord/Teams shape of it."""
    if shape == "json":
        return p
    title = f"schedgen: {p['job']}: {p['event']}"
    tail = p["stderr_tail"]
    if shape == "slack":
        return {"text": f"{title}: {p['message']}" + (f"\n```\n{tail}\n```" if tail else "")}
    if shape == "discord":
        return {"username": "schedgen", "content": f"{title}: {p['message']}"
                + (f"\n```\n{tail[:1500]}\n```" if tail else "")}
    text = p["message"] + (f"\n\n{tail}" if tail else "")
    return {"type": "message", "attachments": [{
        "contentType": "application/vnd.microsoft.card.adaptive",
        "content": {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard", "version": "1.4", "body": [
                        {"type": "TextBlock", "text": title, "weight": "Bolder", "wrap": True},
                        {"type": "TextBlock", "text": text, "wrap": True}]}}]}


def sendmail_program(job: Job) -> str | None:
    """notify.sendmail, else sendmail on the job's PATH, else where MTAs put it."""
    assert job.notify is not None
    if job.notify.sendmail:
        prog = job.notify.sendmail
        return prog if "/" in prog else shutil.which(prog, path=":".join(job.path))
    found = shutil.which("sendmail", path=":".join(job.path))
    return found or next((p for p in SENDMAILS if os.access(p, os.X_OK)), None)


def send_mail(job: Job, p: dict[str, Any], env: dict[str, str],
              limit: float = sendout.TIME_LIMIT) -> sendout.Sent:
    assert job.notify is not None
    prog = sendmail_program(job)
    if prog is None:
        return sendout.Sent(False, "no sendmail program: set notify.sendmail, or install "
                                   "an MTA (msmtp, postfix)")
    r = sendout.run_bounded([prog, "-t", "-i"], env, mail_text(p, job.notify.mail), None,
                            limit, what="sendmail")
    return r if not r.ok else sendout.Sent(True, f"mailed to {', '.join(job.notify.mail)}")


def send_webhook(job: Job, p: dict[str, Any], env: dict[str, str],
                 limit: float = sendout.TIME_LIMIT) -> sendout.Sent:
    assert job.notify is not None and job.notify.webhook is not None
    curl = shutil.which("curl", path=":".join(job.path) + ":" + env.get("PATH", ""))
    if curl is None:
        return sendout.Sent(False, "curl not found on PATH")
    body = json.dumps(webhook_body(p, job.notify.webhook_format), ensure_ascii=False)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".json") as fh:
        fh.write(body + "\n")
        fh.flush()
        # -q first: the user's ~/.curlrc stays out; -f: an HTTP error is a failure.
        argv = [curl, "-q", "-sS", "-f", "-o", "/dev/null", "-m", str(WEBHOOK_TIME),
                "-H", "Content-Type: application/json", "--data-binary", f"@{fh.name}",
                "-K", "-"]
        r = sendout.run_bounded(argv, env, f'url = "{job.notify.webhook}"\n', None, limit,
                                what="curl")
    return r if not r.ok else sendout.Sent(True, "posted")
