"""A heartbeat endpoint on 127.0.0.1 for the tests: records every request it answers.

It speaks the healthchecks.io ping protocol as far as the wrapper uses it: GET or POST
to <uuid>[/start|/fail|/<exit code>], an optional `rid` query parameter pairing a start
with its end, and a POST body (the run's output) kept up to 100 kB as healthchecks.io
keeps it (the wrapper sends at most 10 kB)."""

from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RID = re.compile(r"([?&])rid=[^&]*(&?)")


def _unrid(m: re.Match[str]) -> str:
    return m.group(1) if m.group(2) else ""


class PingHub:
    def __init__(self) -> None:
        self.requests: list[str] = []  # paths (with query), in the order they were answered
        self.delay: dict[str, float] = {}  # path suffix -> seconds to wait before answering
        self.status: dict[str, int] = {}  # path suffix -> HTTP status (default 200)
        self.bodies: list[tuple[str, str, bytes]] = []  # (method, path with query, body)
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                path = self.path
                bare = path.split("?", 1)[0]
                for suffix, seconds in hub.delay.items():
                    if bare.endswith(suffix):
                        time.sleep(seconds)
                code = next((c for s, c in hub.status.items() if bare.endswith(s)), 200)
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                with hub._lock:
                    hub.requests.append(path)
                    hub.bodies.append((self.command, path, body[:100_000]))
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def seen(self) -> list[str]:
        """The paths asked for, without the run ID (`rid=`: see raw())."""
        with self._lock:
            return [_RID.sub(_unrid, p) for p in self.requests]

    def raw(self) -> list[tuple[str, str, bytes]]:
        """(method, path with its whole query, body), in the order answered."""
        with self._lock:
            return list(self.bodies)

    def wait_for(self, n: int, timeout: float = 20) -> list[str]:
        deadline = time.monotonic() + timeout
        while len(self.seen()) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} pings, got {self.seen()}")
            time.sleep(0.02)
        return self.seen()
