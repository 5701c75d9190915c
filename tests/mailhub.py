"""A real SMTP server on 127.0.0.1 (aiosmtpd) and msmtp set up to hand it mail: the MTA
path a job's `notify.mail` takes on a machine with msmtp as its sendmail."""

from __future__ import annotations

import email
import email.policy
import shutil
import socket
import threading
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

MSMTP = shutil.which("msmtp") or "/usr/bin/msmtp"


class MailHub:
    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[tuple[list[str], EmailMessage]] = []  # (envelope rcpts, message)
        self._lock = threading.Lock()
        hub = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any,  # noqa: N802
                                  envelope: Any) -> str:
                msg = email.message_from_bytes(envelope.original_content or envelope.content,
                                               policy=email.policy.default)
                with hub._lock:
                    hub.messages.append((list(envelope.rcpt_tos), msg))  # type: ignore[arg-type]
                return "250 OK"

        # A free port picked first: the controller checks it started by connecting to it.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()

    def seen(self) -> list[tuple[list[str], EmailMessage]]:
        with self._lock:
            return list(self.messages)

    def wait_for(self, n: int, timeout: float = 30) -> list[tuple[list[str], EmailMessage]]:
        deadline = time.monotonic() + timeout
        while len(self.seen()) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} mails, got {len(self.seen())}")
            time.sleep(0.05)
        return self.seen()

    def msmtprc(self, home: Path) -> Path:
        """~/.msmtprc sending everything to this server (msmtp wants it private)."""
        rc = home / ".msmtprc"
        rc.write_text(f"defaults\nauth off\ntls off\ntimeout 10\naccount default\n"
                      f"host 127.0.0.1\nport {self.port}\nfrom schedgen@localhost\n")
        rc.chmod(0o600)
        return rc


def mailhub_fixture() -> Any:
    if not Path(MSMTP).exists():
        pytest.skip("msmtp is not installed (.ci/run installs it)")
    try:
        import aiosmtpd  # noqa: F401
    except ImportError:
        pytest.skip("aiosmtpd is not installed (pip install -e '.[test]')")
    hub = MailHub()
    hub.start()
    return hub
