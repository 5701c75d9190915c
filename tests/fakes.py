"""File-backed fakes of `crontab`, `launchctl` and `systemctl --user`, as small executables.

Put first on PATH (see the `fake_crontab` / `fake_launchctl` fixtures in tests/plugin.py),
they let every test except the end-to-end one run without touching the real crontab
or launchd. Each call is logged, so tests can assert what was (not) called.
"""

from __future__ import annotations

import marshal
from pathlib import Path

from tests.fakeserve import client
from tests.helpers import write_executable

CRONTAB = r'''#!/bin/sh
# Fake crontab: the table lives in $FAKE_CRONTAB_FILE (absent = no crontab). In sh, not
# Python: it is called hundreds of times a run, and Python's start-up was most of it.
table=$FAKE_CRONTAB_FILE
# Each call's arguments, \037 after each and \036 after the call (FakeCrontab.calls).
{ for a; do printf '%s\037' "$a"; done; printf '\036'; } >>"$FAKE_CRONTAB_LOG"
[ -z "${FAKE_CRONTAB_DELAY:-}" ] || sleep "$FAKE_CRONTAB_DELAY"   # widens race windows
user=${LOGNAME:-${USER:-${LNAME:-${USERNAME:-}}}}   # as getpass.getuser() finds it
[ -n "$user" ] || user=$(id -un)
if [ -e "$table.fail" ] && [ "$*" != -l ]; then
  rm -f "$table.fail"
  echo "crontab: simulated failure" >&2
  exit 1
fi
if [ "$#" -eq 1 ] && [ "$1" = -l ]; then
  [ -e "$table" ] || { echo "no crontab for $user" >&2; exit 1; }
  exec cat "$table"
elif [ "$#" -eq 1 ] && [ "$1" = -r ]; then
  [ -e "$table" ] || { echo "no crontab for $user" >&2; exit 1; }
  rm -f "$table"
elif [ "$#" -eq 1 ]; then
  [ -z "${FAKE_CRONTAB_WRITE_DELAY:-}" ] || sleep "$FAKE_CRONTAB_WRITE_DELAY"   # before it reads
  [ -z "${FAKE_CRONTAB_DISCARD:-}" ] || exit 0   # says it installed, installs nothing
  tmp=$table.new.$$
  if [ "$1" = - ]; then cat >"$tmp"; else cat "$1" >"$tmp" || { rm -f "$tmp"; exit 1; }; fi
  # Debian refuses a table whose last line has no newline ($(...) drops a final one).
  if [ -n "$(tail -c 1 "$tmp")" ]; then
    rm -f "$tmp"
    echo "new crontab file is missing newline before EOF, can't install." >&2
    exit 1
  fi
  mv -f "$tmp" "$table"
else
  echo "usage: crontab [-l | -r | file | -]" >&2
  exit 1
fi
'''

LAUNCHCTL = r'''#!__PYTHON__
"""Fake launchctl: state in $FAKE_LAUNCHCTL_STATE, behaving like macOS's for the verbs used.

Texts and codes as macOS prints them (launchctl(1); public reports):
- "Bootstrap failed: 5: Input/output error": a label still loaded, a plist launchd will
  not read, or no gui/<uid> domain (an SSH session with nobody logged in at the screen):
  github.com/psimaker/vaultsync/issues/89, github.com/pirj/noclamshell/issues/25;
- "Could not find service "L" in domain for port" / "... for user gui: 501" (print of a
  label not loaded, exit 113): github.com/iamkroot/trakt-scrobbler/issues/83;
- "Could not find domain for user gui: 501" (print of a gui domain that does not exist):
  github.com/Wamphyre/macOS_Silverback-Debloater/issues/2;
- `print` of a service: "gui/501/L = {", tab-indented "key = value" lines (path, state,
  program, runs, pid, last exit code), as in github.com/boxen/puppet-boxen/issues/104;
- `print-disabled gui/501`: 'disabled services = {' then '"L" => disabled' per label
  (macOS 13+ words; older ones say true/false);
- `managername`: "Aqua" in a login session at the screen, "Background" over SSH.
- the `system` domain (LaunchDaemons): root only ("Bootstrap failed: 1: Operation not
  permitted" otherwise); a plist not owned by root or writable by group or others is
  refused with 5 (launchd logs "Path had bad ownership/permissions"); `list` run as root
  lists the system domain's services (and, the tests being root, its gui domain's), run
  as a user that user's gui domain's;
  `print system/L` of a label not loaded: 'Could not find service "L" in domain for
  system', 113; of one loaded, `username = U` only when its plist has a UserName
  (github.com/boxen/puppet-boxen/issues/104). `print`, `print-disabled` of the system
  domain need no root; a label is disabled in one domain (gui/<uid> or system) only.
A RunAtLoad job is spawned at bootstrap when the state says `spawn` (launchd always does;
the tests that want it say so, the others keep their wrappers from running). TCC cannot
be reproduced on Linux: a spawned job gets a PATH whose `ls` answers as macOS's does for
a folder it may not read ("ls: P: Operation not permitted", exit 1, as in
github.com/stablyai/orca/issues/17600) for each folder in `tcc_denied`."""
import marshal, os, sys  # plistlib where needed: each call is a process (json would double it)
path = os.environ["FAKE_LAUNCHCTL_STATE"]
state = marshal.load(open(path, "rb")) if os.path.exists(path) else {}
state.setdefault("services", {})
state.setdefault("disabled", [])
state.setdefault("fail_next", [])
state.setdefault("calls", [])
state.setdefault("not_found_code", 3)
args = sys.argv[1:]
state["calls"].append(args)
uid = str(os.getuid())
gui = state.get("gui_session", True)  # someone is logged in at the screen: gui/<uid> exists

def done(code=0, err=""):
    marshal.dump(state, open(path, "wb"))
    if err:
        sys.stderr.write(err + "\n")
    sys.exit(code)

def domain_of(target):
    """'gui' or 'user' for gui/<uid> and user/<uid>, 'system'; else launchctl's refusal."""
    if target == "system":
        return "system"
    kind, _, rest = target.partition("/")
    if kind in ("gui", "user") and rest.split("/")[0] == uid:
        if kind == "gui" and not gui:
            done(113, f"Could not find domain for user gui: {uid}")
        return kind
    done(150, f"Could not find domain for: {target}")

def label_of(target):
    dom, _, label = target.rpartition("/")
    if dom == "system":
        if uid != "0":
            done(1, f"Could not {verb} service: 1: Operation not permitted")
        return label
    if dom != f"gui/{uid}":
        done(150, f"Could not find domain for: {dom}")
    if not gui:
        done(113, f"Could not find domain for user gui: {uid}")
    return label

def spawn(label, plist):
    import subprocess, tempfile
    env = dict(os.environ)
    env.update({k: str(v) for k, v in plist.get("EnvironmentVariables", {}).items()})
    denied = state.get("tcc_denied", [])
    if denied:
        shim = tempfile.mkdtemp(prefix="fake-tcc-")
        lines = ["#!/bin/sh", "for a; do case $a in -*) continue;; esac"]
        for d in denied:
            lines.append(f"  case $a in '{d}'|'{d}'/*) echo \"ls: $a: Operation not permitted\" >&2; exit 1;; esac")
        lines += ["done", "PATH=${PATH#*:} exec ls \"$@\""]
        with open(os.path.join(shim, "ls"), "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(os.path.join(shim, "ls"), 0o755)
        env["PATH"] = shim + ":" + env.get("PATH", "/usr/bin:/bin")
    r = subprocess.run(plist["ProgramArguments"], env=env, cwd=plist.get("WorkingDirectory", "/"),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    s = state["services"][label]
    s["runs"] = s.get("runs", 0) + 1
    s["status"] = r.returncode

verb = args[0] if args else ""
for i, f in enumerate(state["fail_next"]):
    if f["verb"] == verb:
        state["fail_next"].pop(i)
        done(f["code"], f["message"])
if verb == "bootstrap" and args[1:2] == ["system"]:
    if uid != "0":
        done(1, "Bootstrap failed: 1: Operation not permitted")
    try:
        import plistlib
        st = os.stat(args[2])
        plist = plistlib.load(open(args[2], "rb"))
        label = plist["Label"]
    except Exception as exc:
        done(5, "Bootstrap failed: 5: Input/output error")
    if st.st_uid != 0 or st.st_mode & 0o022:  # "Path had bad ownership/permissions"
        done(5, "Bootstrap failed: 5: Input/output error")
    if label in state.get("disabled_system", []):
        done(119, "Bootstrap failed: 119: Service is disabled")
    if label in state["services"]:
        done(5, "Bootstrap failed: 5: Input/output error")
    state["services"][label] = {"plist": args[2], "pid": None, "status": 0, "domain": "system",
                                "runs": 0, "user": plist.get("UserName")}
    done()
elif verb == "bootstrap":
    dom = args[1].partition("/")[0]
    if dom not in ("gui", "user") or args[1].partition("/")[2] != uid:
        done(125, "Bootstrap failed: 125: Domain does not support specified action")
    if dom == "gui" and not gui:
        done(5, "Bootstrap failed: 5: Input/output error")
    try:
        import plistlib
        plist = plistlib.load(open(args[2], "rb"))
        label = plist["Label"]
    except Exception as exc:
        done(5, "Bootstrap failed: 5: Input/output error")
    if label in state["disabled"]:
        done(119, "Bootstrap failed: 119: Service is disabled")
    if label in state["services"]:
        done(5, "Bootstrap failed: 5: Input/output error")
    state["services"][label] = {"plist": args[2], "pid": None, "status": 0, "domain": dom,
                                "runs": 0}
    if state.get("spawn") and plist.get("RunAtLoad"):
        spawn(label, plist)
    done()
elif verb == "bootout":
    dom = domain_of(args[1].rpartition("/")[0])
    if dom == "system" and uid != "0":
        done(1, "Boot-out failed: 1: Operation not permitted")
    label = args[1].rpartition("/")[2]
    s = state["services"].get(label)
    if s is None or s.get("domain", "gui") != dom:
        n = state["not_found_code"]
        msg = "No such process" if n == 3 else "Could not find specified service"
        done(n, f"Boot-out failed: {n}: {msg}")
    del state["services"][label]
    done()
elif verb == "enable":
    label = label_of(args[1])
    off = state.setdefault("disabled_system", []) if args[1].startswith("system/") else state["disabled"]
    if label in off:
        off.remove(label)
    done()
elif verb == "disable":
    label = label_of(args[1])
    off = state.setdefault("disabled_system", []) if args[1].startswith("system/") else state["disabled"]
    if label not in off:
        off.append(label)
    done()
elif verb == "list":
    rows = ["PID\tStatus\tLabel", "-\t0\tcom.apple.foreign.agent", "321\t0\tcom.example.running"]
    # root's `list` is the system domain's; the tests run as root and act as a logged-in
    # user too, so root's lists its gui domain's as well (a label is in one domain only)
    mine = ("gui", "system") if uid == "0" else ("gui",)
    for label, s in sorted(state["services"].items()):
        if s.get("domain", "gui") in mine:
            rows.append(f"{s['pid'] if s['pid'] else '-'}\t{s['status']}\t{label}")
    print("\n".join(rows))
    done()
elif verb == "managername":
    print(state.get("session", "Aqua"))
    done()
elif verb == "print-disabled":
    off = state.get("disabled_system", []) if domain_of(args[1]) == "system" else state["disabled"]
    rows = [f'\t"{label}" => disabled' for label in off]
    print("disabled services = {\n" + "\n".join(rows + ['\t"com.apple.foreign.agent" => enabled'])
          + "\n}")
    done()
elif verb == "print":
    dom = domain_of(args[1].rpartition("/")[0] if args[1].startswith("system/") else args[1])
    parts = args[1].split("/")
    if dom == "system":
        if len(parts) == 1:
            print("system = {\n\ttype = system\n\thandle = 0\n}")
            done()
        s = state["services"].get(parts[1])
        if s is None or s.get("domain") != "system":
            done(113, f"Could not find service \"{parts[1]}\" in domain for system")
        run = "running" if s["pid"] else "not running"
        runs = s.get("runs", 0)
        last = s["status"] if runs or s["status"] else "(never exited)"
        print(f"system/{parts[1]} = {{\n\tactive count = {1 if s['pid'] else 0}\n"
              f"\tpath = {s['plist']}\n\ttype = LaunchDaemon\n\tstate = {run}\n\n"
              f"\tdomain = com.apple.xpc.launchd.domain.system\n"
              + (f"\tusername = {s['user']}\n" if s.get("user") else "")
              + f"\truns = {runs}\n"
              + (f"\tpid = {s['pid']}\n" if s["pid"] else "")
              + f"\tlast exit code = {last}\n}}")
        done()
    if len(parts) == 2:
        print(f"{dom}/{uid} = {{\n\ttype = {'login' if dom == 'gui' else 'user'}\n"
              f"\tsession = {state.get('session', 'Aqua') if dom == 'gui' else 'Background'}\n}}")
        done()
    label = parts[2]
    s = state["services"].get(label)
    if s is None or s.get("domain", "gui") != dom:
        done(113, f"Could not find service \"{label}\" in domain for user {dom}: {uid}")
    run = "running" if s["pid"] else "not running"
    runs = s.get("runs", 0)
    last = s["status"] if runs or s["status"] else "(never exited)"
    print(f"{dom}/{uid}/{label} = {{\n\tactive count = {1 if s['pid'] else 0}\n"
          f"\tpath = {s['plist']}\n\ttype = LaunchAgent\n\tstate = {run}\n\n"
          f"\tprogram = {s.get('program', s['plist'])}\n\tdomain = {dom}/{uid}\n"
          f"\truns = {runs}\n"
          + (f"\tpid = {s['pid']}\n" if s["pid"] else "")
          + f"\tlast exit code = {last}\n}}")
    done()
else:
    done(64, f"fake launchctl: unsupported or deprecated subcommand {verb!r}")
'''

SYSTEMCTL = r'''#!__PYTHON__
"""Fake `systemctl --user`: state in $FAKE_SYSTEMCTL_STATE, unit files where systemd reads them.

Like the real one: a changed unit file is used only after daemon-reload (start warns),
daemon-reload re-arms active timers with their new definition, enable makes the
timers.target.wants symlink, a unit without a file is not-found, no bus is exit 1.
Without --user it is the system manager, whose unit folder ($FAKE_SYSTEMCTL_SYSTEM_DIR,
/etc/systemd/system) a test names; as the real one without polkit, it answers a
non-root caller's change with "Failed to enable unit: Access denied", exit 1."""
import marshal, os, sys, time  # subprocess where needed: each call is a process (json would double it)
path = os.environ["FAKE_SYSTEMCTL_STATE"]
state = marshal.load(open(path, "rb")) if os.path.exists(path) else {}
for k, v in (("bus", True), ("units", {}), ("loaded", {}), ("fail_next", []), ("calls", [])):
    state.setdefault(k, v)
args = sys.argv[1:]
state["calls"].append(args)
cfg = os.environ.get("XDG_CONFIG_HOME", "")
udir = os.path.join(cfg if cfg.startswith("/") else os.path.expanduser("~/.config"), "systemd", "user")

def done(code=0, err="", out=""):
    marshal.dump(state, open(path, "wb"))
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err + "\n")
    sys.exit(code)

if "--user" not in args:
    udir = os.environ.get("FAKE_SYSTEMCTL_SYSTEM_DIR", "")
    if not udir:
        done(64, "fake systemctl: the system manager needs FAKE_SYSTEMCTL_SYSTEM_DIR in tests")
    denied = {"daemon-reload": "reload daemon", "enable": "enable unit", "disable": "disable unit",
              "start": "start", "stop": "stop"}
    verb0 = next((a for a in args if not a.startswith("-")), "")
    if os.getuid() != 0 and verb0 in denied:
        done(1, f"Failed to {denied[verb0]}: Access denied")
opts = [a for a in args if a.startswith("-")]
words = [a for a in args if not a.startswith("-")]
props = next((a.split("=", 1)[1].split(",") for a in opts if a.startswith("--property=")), None)
unix = "--timestamp=unix" in opts
verb, names = (words[0], words[1:]) if words else ("list-units", [])
if not state["bus"]:
    done(1, "Failed to connect to bus: No medium found")
for i, f in enumerate(state["fail_next"]):
    if f["verb"] == verb:
        state["fail_next"].pop(i)
        done(f["code"], f["message"])

def on_disk(name):
    try:
        return open(os.path.join(udir, name)).read()
    except OSError:
        return None

def definition(name):
    """What the manager uses: the loaded copy, else the file (units load on demand)."""
    if name in state["loaded"]:
        return state["loaded"][name]
    return on_disk(name)

def unit(name):
    return state["units"].setdefault(name, {"active": "inactive", "sub": "dead", "pid": None,
        "result": "success", "exit_status": 0, "last_trigger": None, "next": None, "def": None})

def next_elapse(text):
    lines = [l.split("=", 1)[1] for l in (text or "").splitlines() if l.startswith("OnCalendar=")]
    if not lines:
        return None
    import subprocess
    r = subprocess.run(["systemd-analyze", "calendar", "--iterations=1", *lines],
                       capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    found = [l.split(": ", 1)[1] for l in r.stdout.splitlines() if "Next elapse:" in l]
    import calendar as cal
    stamps = [cal.timegm(time.strptime(f.split(" ", 1)[1], "%Y-%m-%d %H:%M:%S UTC"))
              for f in found if f != "never"]
    return min(stamps) if stamps else None

def wants(name):
    return os.path.join(udir, "timers.target.wants", name)

def start(name):
    d = definition(name)
    if d is None:
        done(5, f"Failed to start {name}: Unit {name} not found.")
    warn = ""
    if name in state["loaded"] and on_disk(name) not in (None, d):
        warn = (f"Warning: The unit file, source configuration file or drop-ins of {name} "
                "changed on disk. Run 'systemctl --user daemon-reload' to reload units.")
    state["loaded"][name] = d
    u = unit(name)
    if name.endswith(".timer"):
        u.update(active="active", sub="waiting", **{"def": d, "next": next_elapse(d)})
    else:
        u.update(active="activating", sub="start", pid=os.getpid())
    return warn

def stop(name):
    if definition(name) is None and state["units"].get(name, {}).get("active", "inactive") \
            == "inactive":
        done(5, f"Failed to stop {name}: Unit {name} not loaded.")
    u = unit(name)
    if u["pid"] and not name.endswith(".timer"):
        u["killed"] = True  # stopping a running service kills its run
    u.update(active="inactive", sub="dead", pid=None, next=None)

def ts(value):
    if not value:
        return "n/a"
    return f"@{value}" if unix else time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(value))

if verb == "daemon-reload":
    state["loaded"] = {}
    for f in sorted(os.listdir(udir)) if os.path.isdir(udir) else []:
        if f.endswith((".service", ".timer")) and os.path.isfile(os.path.join(udir, f)):
            state["loaded"][f] = on_disk(f)
    for name, u in list(state["units"].items()):
        if name in state["loaded"]:
            if name.endswith(".timer") and u["active"] == "active":
                u.update(**{"def": state["loaded"][name], "next": next_elapse(state["loaded"][name])})
        elif u["active"] == "inactive":
            del state["units"][name]  # nothing keeps it: unloaded
    done()
elif verb == "show":
    if not names:
        done(out="Version=252 (fake)\n")
    blocks = []
    for name in names:
        d = definition(name)
        u = state["units"].get(name) or {"active": "inactive", "sub": "dead", "pid": None,
            "result": "success", "exit_status": 0, "last_trigger": None, "next": None}
        loaded = d is not None or u["active"] != "inactive"
        file_state = ("" if on_disk(name) is None else
                      "enabled" if os.path.islink(wants(name)) else "disabled")
        p = {"Id": name, "LoadState": "loaded" if loaded else "not-found",
             "ActiveState": u["active"], "SubState": u["sub"], "UnitFileState": file_state,
             "Result": u["result"], "MainPID": str(u["pid"] or 0),
             "ExecMainStatus": str(u["exit_status"]),
             "NextElapseUSecRealtime": ts(u["next"]), "LastTriggerUSec": ts(u["last_trigger"]),
             "NeedDaemonReload": "yes" if name in state["loaded"] and on_disk(name) != d else "no"}
        blocks.append("".join(f"{k}={v}\n" for k, v in p.items() if props is None or k in props))
    done(out="\n".join(blocks))
elif verb in ("enable", "disable"):
    msgs = []
    for name in names:
        if on_disk(name) is None:
            done(1, f"Failed to {verb} unit: Unit file {name} does not exist.")
        link = wants(name)
        if verb == "enable" and not os.path.islink(link):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(os.path.join(udir, name), link)
            msgs.append(f"Created symlink {link} \u2192 {os.path.join(udir, name)}.")
        elif verb == "disable" and os.path.islink(link):
            os.unlink(link)
            msgs.append(f'Removed "{link}".')
        if "--now" in opts:
            msgs.append(start(name) if verb == "enable" else "")
            if verb == "disable":
                stop(name)
    done(err="\n".join(m for m in msgs if m))
elif verb == "start":
    done(err="\n".join(w for w in (start(n) for n in names) if w))
elif verb == "stop":
    for n in names:
        stop(n)
    done()
else:
    done(1, f"Unknown command verb {verb}.")
'''

LOGINCTL = r'''#!__PYTHON__
"""Fake loginctl: `show-user UID --property=Linger --value`, from $FAKE_SYSTEMCTL_STATE."""
import marshal, os, sys
path = os.environ["FAKE_SYSTEMCTL_STATE"]
state = marshal.load(open(path, "rb")) if os.path.exists(path) else {}
args = sys.argv[1:]
if not state.get("bus", True):
    sys.stderr.write("Failed to connect to bus: No medium found\\n")
    sys.exit(1)
if args[:1] != ["show-user"] or len(args) < 2:
    sys.stderr.write("fake loginctl: only show-user is supported\\n")
    sys.exit(64)
linger = state.get("linger", False)
if not linger and not state.get("logged_in", True):
    sys.stderr.write(f"Failed to get user: User ID {args[1]} is not logged in or lingering\\n")
    sys.exit(1)
value = "yes" if linger else "no"
print(value if "--value" in args else f"Linger={value}")
'''


XATTR = r'''#!/bin/sh
# Fake xattr(1): attributes in $FAKE_XATTR_DIR/<path with / as %>/<name>. Only what doctor
# uses: `xattr -p NAME FILE` prints the value, or (macOS's words, exit 1)
# "xattr: FILE: No such xattr: NAME"; a missing file: "xattr: No such file: FILE".
[ "$1" = -p ] && [ "$#" -eq 3 ] || { echo "usage: xattr -p attr_name file" >&2; exit 2; }
[ -e "$3" ] || { echo "xattr: No such file: $3" >&2; exit 1; }
f="$FAKE_XATTR_DIR/$(printf '%s' "$3" | tr / %)/$2"
[ -f "$f" ] || { echo "xattr: $3: No such xattr: $2" >&2; exit 1; }
cat "$f"
'''

PLUTIL = r'''#!__PYTHON__
# Fake plutil(1): `plutil -lint FILE...` as macOS prints it: "FILE: OK", or "FILE: " and
# the parser's complaint, exit 1 when any file is bad (plutil(1)).
import plistlib, sys
if sys.argv[1:2] != ["-lint"]:
    sys.stderr.write("fake plutil: only -lint\n")
    sys.exit(64)
bad = 0
for f in sys.argv[2:]:
    try:
        with open(f, "rb") as fh:
            plistlib.load(fh)
        print(f"{f}: OK")
    except FileNotFoundError:
        print(f"{f}: file does not exist or is not readable or is not a regular file "
              "(Error Domain=NSCocoaErrorDomain Code=260)")
        bad = 1
    except Exception as exc:
        print(f"{f}: Encountered unknown tag or malformed plist ({exc})")
        bad = 1
sys.exit(bad)
'''


class FakeMacTools:
    # xattr and plutil, as doctor calls them on a Mac.

    def __init__(self, bin_dir: Path, root: Path):
        self.dir = root / "xattrs"
        self.dir.mkdir(exist_ok=True)
        write_executable(bin_dir / "xattr", XATTR)
        write_executable(bin_dir / "plutil", client("plutil", PLUTIL))
        self.env = {"FAKE_XATTR_DIR": str(self.dir)}

    def quarantine(self, path: Path, value: str = "0083;6756b2a1;Safari;") -> None:
        # The value as Gatekeeper writes it: flags;hex time;agent;UUID.
        d = self.dir / str(path).replace("/", "%")
        d.mkdir(parents=True, exist_ok=True)
        (d / "com.apple.quarantine").write_text(value + "\n")


class FakeCrontab:
    def __init__(self, bin_dir: Path, root: Path):
        self.file = root / "crontab"
        self.log = root / "crontab.calls"
        self.log.touch()
        write_executable(bin_dir / "crontab", CRONTAB)
        self.env = {"FAKE_CRONTAB_FILE": str(self.file), "FAKE_CRONTAB_LOG": str(self.log)}

    def read(self) -> bytes | None:
        return self.file.read_bytes() if self.file.exists() else None

    def set(self, content: bytes | str | None) -> None:
        if content is None:
            self.file.unlink(missing_ok=True)
        else:
            self.file.write_bytes(content.encode() if isinstance(content, str) else content)

    def calls(self) -> list[list[str]]:
        return [call.split("\x1f")[:-1] for call in self.log.read_text().split("\x1e")[:-1]]

    def writes(self) -> list[list[str]]:
        return [c for c in self.calls() if c != ["-l"]]

    def fail_next_write(self) -> None:
        Path(str(self.file) + ".fail").touch()


class FakeLaunchctl:
    def __init__(self, bin_dir: Path, root: Path):
        self.state_file = root / "launchctl.state"   # marshal: no json import per call
        write_executable(bin_dir / "launchctl", client("launchctl", LAUNCHCTL))
        self.env = {"FAKE_LAUNCHCTL_STATE": str(self.state_file)}

    def state(self) -> dict:
        if not self.state_file.exists():
            return {"services": {}, "disabled": [], "fail_next": [], "calls": []}
        return marshal.loads(self.state_file.read_bytes())

    def _update(self, **changes: object) -> None:
        s = self.state()
        s.update(changes)
        self.state_file.write_bytes(marshal.dumps(s))

    def loaded(self) -> dict[str, dict]:
        return self.state()["services"]

    def calls(self) -> list[list[str]]:
        return self.state()["calls"]

    def clear_calls(self) -> None:
        self._update(calls=[])

    def mutating_calls(self) -> list[list[str]]:
        return [c for c in self.calls()
                if c and c[0] not in ("list", "print", "print-disabled", "managername")]

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

    def disable(self, label: str, domain: str = "gui") -> None:
        """`launchctl disable gui/<uid>/L` (or `system/L`)."""
        key = "disabled_system" if domain == "system" else "disabled"
        s = self.state()
        self._update(**{key: [*s.get(key, []), label]})

    def fail_next(self, verb: str, code: int, message: str) -> None:
        s = self.state()
        self._update(fail_next=[*s.get("fail_next", []),
                                {"verb": verb, "code": code, "message": message}])

    def not_found_code(self, code: int) -> None:
        self._update(not_found_code=code)

    def no_gui_session(self) -> None:
        """Logged in over SSH with nobody at the screen: no gui/<uid> domain."""
        self._update(gui_session=False, session="Background")

    def over_ssh(self) -> None:
        """Logged in over SSH while logged in at the screen too: gui/<uid> exists."""
        self._update(session="Background")

    def spawn_at_load(self, denied: list[str] | None = None) -> None:
        """Run RunAtLoad jobs at bootstrap, as launchd does; `denied`: TCC-protected
        folders they may not read."""
        self._update(spawn=True, tcc_denied=list(denied or []))

    def set_loaded_in(self, label: str, domain: str, plist: str = "/nowhere.plist",
                      user: str | None = None) -> None:
        """Loaded in that domain (by hand); a system one running as `user` (its UserName)."""
        s = self.state()
        s["services"][label] = {"plist": plist, "pid": None, "status": 0, "domain": domain,
                                "runs": 0, "user": user}
        self._update(services=s["services"])

    def set_exited(self, label: str, status: int, runs: int = 1) -> None:
        s = self.state()
        s["services"][label].update(status=status, runs=runs)
        self._update(services=s["services"])


class FakeSystemctl:
    """`systemctl --user` and `loginctl`, sharing one state file."""

    def __init__(self, bin_dir: Path, root: Path):
        self.state_file = root / "systemctl.state"   # marshal: no json import per call
        write_executable(bin_dir / "systemctl", client("systemctl", SYSTEMCTL))
        write_executable(bin_dir / "loginctl", client("loginctl", LOGINCTL))
        self.env = {"FAKE_SYSTEMCTL_STATE": str(self.state_file)}

    def state(self) -> dict:
        if not self.state_file.exists():
            return {"bus": True, "units": {}, "loaded": {}, "fail_next": [], "calls": []}
        return marshal.loads(self.state_file.read_bytes())

    def _update(self, **changes: object) -> None:
        s = self.state()
        s.update(changes)
        self.state_file.write_bytes(marshal.dumps(s))

    def calls(self) -> list[list[str]]:
        return self.state()["calls"]

    def mutating_calls(self) -> list[list[str]]:
        return [c for c in self.calls() if "show" not in c]

    def clear_calls(self) -> None:
        self._update(calls=[])

    def unit(self, name: str) -> dict | None:
        return self.state()["units"].get(name)

    def armed(self) -> dict[str, str]:
        """Active timers and the definition each one runs with."""
        return {n: u["def"] for n, u in self.state()["units"].items()
                if n.endswith(".timer") and u["active"] == "active"}

    def set_running(self, service: str, pid: int = 4242) -> None:
        s = self.state()
        s["units"][service] = {"active": "activating", "sub": "start", "pid": pid,
                               "result": "success", "exit_status": 0, "last_trigger": None,
                               "next": None, "def": None}
        self._update(units=s["units"])

    def set_fired(self, timer: str, at: int, result: str = "success") -> None:
        s = self.state()
        s["units"][timer].update(last_trigger=at, result=result)
        self._update(units=s["units"])

    def no_bus(self) -> None:
        self._update(bus=False)

    def set_linger(self, on: bool, logged_in: bool = True) -> None:
        self._update(linger=on, logged_in=logged_in)

    def fail_next(self, verb: str, code: int, message: str) -> None:
        s = self.state()
        self._update(fail_next=[*s.get("fail_next", []),
                                {"verb": verb, "code": code, "message": message}])
