"""The Python fakes (launchctl, systemctl, loginctl, kubectl) run in the test process.

Each fake is still a real executable first on PATH, called by schedgen as a subprocess.
That executable is a few lines of bash: it connects to this process (bash's /dev/tcp,
no fork) and waits for the exit status. Here, the fake's Python code runs as that
process would run it: its arguments, environment and working directory are read from
/proc/PID, it reads the caller's stdin and writes to the caller's stdout and stderr
through /proc/PID/fd (stdin through the client). What schedgen sees is the same: a process with its exit status and
output. Starting Python and compiling a fake for each call had been a tenth of the suite.

Calls are served one at a time; while one runs, this process's environment, working
directory, argv and standard streams are the caller's (the test itself is waiting for
that call: it started the process that made it).
"""

from __future__ import annotations

import io
import os
import socket
import sys
import threading
import traceback
from types import CodeType

CLIENT = r'''#!/bin/bash
# Fake {name}: its code runs in the test process (tests/fakeserve.py); this carries the call.
exec 3<>/dev/tcp/127.0.0.1/{port} || {{ echo "fake {name}: the test process is gone" >&2; exit 70; }}
# Its stdout and stderr for the test process to write to: copies, because `printf >&3`
# points fd 1 at the socket for a moment.
exec 4>&1 5>&2
printf '%s %s\n' {token} "$$" >&3
# The answer is the exit status, or "stdin" when the fake reads its standard input (an
# anonymous pipe cannot be opened through /proc once its writer has closed it).
while IFS= read -r code <&3; do
  [ "$code" = stdin ] || exit "$code"
  IFS= read -r -d '' data
  printf '%s\0' "$data" >&3
done
exit 70
'''


class _Server:
    def __init__(self) -> None:
        self.codes: dict[str, CodeType] = {}
        self.tokens: dict[str, str] = {}   # source -> token: each fake compiled once
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, name="fakeserve", daemon=True).start()

    def _accept(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                line = conn.makefile("rb").readline().decode()
                token, _, pid = line.strip().partition(" ")
                with self.lock:
                    code = self._call(self.codes[token], int(pid), conn)
            except Exception:  # the server's own fault: said here, and 70 to the caller
                traceback.print_exc(file=sys.__stderr__)
                code = 70
            conn.sendall(f"{code}\n".encode())

    def _call(self, code: CodeType, pid: int, conn: socket.socket) -> int:
        proc = f"/proc/{pid}"
        with open(f"{proc}/cmdline", "rb") as f:
            # /bin/bash SCRIPT ARGS...: the fake's argv is SCRIPT ARGS...
            argv = [os.fsdecode(a) for a in f.read().split(b"\0")[1:-1]]
        with open(f"{proc}/environ", "rb") as f:
            env = dict(os.fsdecode(kv).partition("=")[::2] for kv in f.read().split(b"\0") if kv)
        cwd = os.readlink(f"{proc}/cwd")
        saved = (os.getcwd(), dict(os.environ), sys.argv, list(sys.path),
                 sys.stdin, sys.stdout, sys.stderr)
        inp = _Stdin(conn)
        out = _Stream(f"{proc}/fd/4", "w")
        err = _Stream(f"{proc}/fd/5", "w")
        status = 0
        try:
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            sys.argv = argv
            sys.stdin, sys.stdout, sys.stderr = inp, out, err
            try:
                exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    status = exc.code or 0
                else:
                    err.write(f"{exc.code}\n")
                    status = 1
            except BaseException:  # as Python would: the traceback, exit status 1
                err.write(traceback.format_exc())
                status = 1
        finally:
            # The worker's own state first: a stream that fails to close (the caller's
            # pipe gone: EPIPE) must not leave it in the fake's.
            os.chdir(saved[0])
            os.environ.clear()
            os.environ.update(saved[1])
            sys.argv, sys.path[:] = saved[2], saved[3]
            sys.stdin, sys.stdout, sys.stderr = saved[4:]
            for s in (inp, out, err):   # each closed, whatever the others do
                try:
                    s.close()
                except OSError:
                    status = status or 1   # as Python exits when its output cannot be flushed
                    s.f = None
        return status & 0xFF


class _Stdin(io.StringIO):
    """The caller's stdin, asked of it on first read (a fake that never reads its stdin
    does not wait on a pipe the caller keeps open)."""

    def __init__(self, conn: socket.socket) -> None:
        super().__init__()
        self.conn, self.asked = conn, False

    def _ask(self) -> None:
        if not self.asked:
            self.asked = True
            self.conn.sendall(b"stdin\n")
            data = bytearray()
            while not data.endswith(b"\0"):
                chunk = self.conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            self.write(data.rstrip(b"\0").decode("utf-8", "surrogateescape"))
            self.seek(0)

    def read(self, size: int | None = -1) -> str:
        self._ask()
        return super().read(size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self._ask()
        return super().readline(size)


class _Stream(io.TextIOBase):
    """The caller's stdout or stderr, opened on first write."""

    def __init__(self, path: str, mode: str) -> None:
        self.path, self.mode, self.f = path, mode, None

    def _file(self) -> io.TextIOWrapper:
        if self.f is None:
            # /proc/PID/fd/N opens the file anew, without the caller's offset: appending, a
            # regular file gets the output after what is already there, but the caller's
            # offset does not move past it (schedgen always hands its fakes pipes).
            self.f = open(os.open(self.path, os.O_WRONLY | os.O_APPEND), self.mode,
                          encoding="utf-8", errors="surrogateescape")
        return self.f

    def write(self, s: str) -> int:
        return self._file().write(s)

    def flush(self) -> None:
        if self.f is not None:
            self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None


_server: _Server | None = None


def client(name: str, source: str) -> str:
    """The executable's text for a fake whose Python code is ``source``."""
    global _server
    if _server is None:
        _server = _Server()
    token = _server.tokens.get(source)
    if token is None:
        token = _server.tokens[source] = f"{name}-{len(_server.codes)}"
        _server.codes[token] = compile(source, f"<fake {name}>", "exec")
    return CLIENT.format(name=name, port=_server.port, token=token)
