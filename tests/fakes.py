"""File-backed fakes of `crontab` and `launchctl`, written as small executables.

Put first on PATH (see the `fake_crontab` / `fake_launchctl` fixtures in tests/plugin.py),
they let every test except the end-to-end one run without touching the real crontab
or launchd. Each call is logged, so tests can assert what was (not) called.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers import write_executable

CRONTAB = r'''#!__PYTHON__
"""Fake crontab: the table lives in $FAKE_CRONTAB_FILE (absent = no crontab)."""
import getpass, json, os, sys, time
table = os.environ["FAKE_CRONTAB_FILE"]
with open(os.environ["FAKE_CRONTAB_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\n")
time.sleep(float(os.environ.get("FAKE_CRONTAB_DELAY", "0")))  # widens race windows
args = sys.argv[1:]
user = getpass.getuser()
fail = table + ".fail"
if os.path.exists(fail) and args != ["-l"]:
    os.unlink(fail)
    sys.stderr.write("crontab: simulated failure\n")
    sys.exit(1)
if args == ["-l"]:
    if not os.path.exists(table):
        sys.stderr.write(f"no crontab for {user}\n")
        sys.exit(1)
    sys.stdout.buffer.write(open(table, "rb").read())
elif args == ["-r"]:
    if not os.path.exists(table):
        sys.stderr.write(f"no crontab for {user}\n")
        sys.exit(1)
    os.unlink(table)
elif len(args) == 1:
    data = sys.stdin.buffer.read() if args[0] == "-" else open(args[0], "rb").read()
    if data and not data.endswith(b"\n"):  # Debian refuses such a table
        sys.stderr.write("new crontab file is missing newline before EOF, can't install.\n")
        sys.exit(1)
    with open(table, "wb") as fh:
        fh.write(data)
else:
    sys.stderr.write("usage: crontab [-l | -r | file | -]\n")
    sys.exit(1)
'''

LAUNCHCTL = r'''#!__PYTHON__
"""Fake launchctl: state in $FAKE_LAUNCHCTL_STATE, behaving like macOS's for the verbs used."""
import json, os, plistlib, sys
path = os.environ["FAKE_LAUNCHCTL_STATE"]
state = json.load(open(path)) if os.path.exists(path) else {}
state.setdefault("services", {})
state.setdefault("disabled", [])
state.setdefault("fail_next", [])
state.setdefault("calls", [])
state.setdefault("not_found_code", 3)
args = sys.argv[1:]
state["calls"].append(args)
uid = str(os.getuid())

def done(code=0, err=""):
    json.dump(state, open(path, "w"), indent=1)
    if err:
        sys.stderr.write(err + "\n")
    sys.exit(code)

def label_of(target):
    dom, _, label = target.rpartition("/")
    if dom != f"gui/{uid}":
        done(150, f"Could not find domain for: {dom}")
    return label

verb = args[0] if args else ""
for i, f in enumerate(state["fail_next"]):
    if f["verb"] == verb:
        state["fail_next"].pop(i)
        done(f["code"], f["message"])
if verb == "bootstrap":
    if args[1] != f"gui/{uid}":
        done(125, "Bootstrap failed: 125: Domain does not support specified action")
    try:
        label = plistlib.load(open(args[2], "rb"))["Label"]
    except Exception as exc:
        done(5, "Bootstrap failed: 5: Input/output error")
    if label in state["disabled"]:
        done(119, "Bootstrap failed: 119: Service is disabled")
    if label in state["services"]:
        done(5, "Bootstrap failed: 5: Input/output error")
    state["services"][label] = {"plist": args[2], "pid": None, "status": 0}
    done()
elif verb == "bootout":
    label = label_of(args[1])
    if label not in state["services"]:
        n = state["not_found_code"]
        msg = "No such process" if n == 3 else "Could not find specified service"
        done(n, f"Boot-out failed: {n}: {msg}")
    del state["services"][label]
    done()
elif verb == "enable":
    label = label_of(args[1])
    if label in state["disabled"]:
        state["disabled"].remove(label)
    done()
elif verb == "disable":
    label = label_of(args[1])
    if label not in state["disabled"]:
        state["disabled"].append(label)
    done()
elif verb == "list":
    rows = ["PID\tStatus\tLabel", "-\t0\tcom.apple.foreign.agent", "321\t0\tcom.example.running"]
    for label, s in sorted(state["services"].items()):
        rows.append(f"{s['pid'] if s['pid'] else '-'}\t{s['status']}\t{label}")
    print("\n".join(rows))
    done()
elif verb == "print":
    label = label_of(args[1])
    s = state["services"].get(label)
    if s is None:
        done(113, f"Could not find service \"{label}\" in domain for user gui: {uid}")
    run = "running" if s["pid"] else "not running"
    print(f"gui/{uid}/{label} = {{\n\tpath = {s['plist']}\n\tstate = {run}\n"
          + (f"\tpid = {s['pid']}\n" if s["pid"] else "")
          + f"\tlast exit code = {s['status']}\n}}")
    done()
else:
    done(64, f"fake launchctl: unsupported or deprecated subcommand {verb!r}")
'''


def _script(body: str) -> str:
    return body.replace("__PYTHON__", f"{sys.executable} -S")


class FakeCrontab:
    def __init__(self, bin_dir: Path, root: Path):
        self.file = root / "crontab"
        self.log = root / "crontab.calls"
        self.log.touch()
        write_executable(bin_dir / "crontab", _script(CRONTAB))
        self.env = {"FAKE_CRONTAB_FILE": str(self.file), "FAKE_CRONTAB_LOG": str(self.log)}

    def read(self) -> bytes | None:
        return self.file.read_bytes() if self.file.exists() else None

    def set(self, content: bytes | str | None) -> None:
        if content is None:
            self.file.unlink(missing_ok=True)
        else:
            self.file.write_bytes(content.encode() if isinstance(content, str) else content)

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def writes(self) -> list[list[str]]:
        return [c for c in self.calls() if c != ["-l"]]

    def fail_next_write(self) -> None:
        Path(str(self.file) + ".fail").touch()


class FakeLaunchctl:
    def __init__(self, bin_dir: Path, root: Path):
        self.state_file = root / "launchctl.json"
        write_executable(bin_dir / "launchctl", _script(LAUNCHCTL))
        self.env = {"FAKE_LAUNCHCTL_STATE": str(self.state_file)}

    def state(self) -> dict:
        if not self.state_file.exists():
            return {"services": {}, "disabled": [], "fail_next": [], "calls": []}
        return json.loads(self.state_file.read_text())

    def _update(self, **changes: object) -> None:
        s = self.state()
        s.update(changes)
        self.state_file.write_text(json.dumps(s))

    def loaded(self) -> dict[str, dict]:
        return self.state()["services"]

    def calls(self) -> list[list[str]]:
        return self.state()["calls"]

    def clear_calls(self) -> None:
        self._update(calls=[])

    def mutating_calls(self) -> list[list[str]]:
        return [c for c in self.calls() if c and c[0] not in ("list", "print")]

    def set_running(self, label: str, pid: int | None = 4242) -> None:
        s = self.state()
        s["services"][label]["pid"] = pid
        self._update(services=s["services"])

    def set_loaded(self, label: str, plist: str = "/nowhere.plist") -> None:
        s = self.state()
        s["services"][label] = {"plist": plist, "pid": None, "status": 0}
        self._update(services=s["services"])

    def unload(self, label: str) -> None:
        s = self.state()
        s["services"].pop(label, None)
        self._update(services=s["services"])

    def disable(self, label: str) -> None:
        s = self.state()
        self._update(disabled=[*s.get("disabled", []), label])

    def fail_next(self, verb: str, code: int, message: str) -> None:
        s = self.state()
        self._update(fail_next=[*s.get("fail_next", []),
                                {"verb": verb, "code": code, "message": message}])

    def not_found_code(self, code: int) -> None:
        self._update(not_found_code=code)
