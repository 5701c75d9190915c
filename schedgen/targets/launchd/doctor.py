"""`schedgen doctor` for launchd jobs: each check one function, asking launchctl,
xattr and plutil as a user would, and saying what their answers mean. A system-scope
job (a LaunchDaemon) is looked for in the system domain: no login session is needed,
its plist must be root's, and it must run as the job's `user`."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
from pathlib import Path

from schedgen import paths
from schedgen.config.model import Job
from schedgen.doctor import Check, ok, problem, skipped, warning
from schedgen.doctor.shared import find, program
from schedgen.machine.ops import run
from schedgen.targets.launchd import explain, memory, probe
from schedgen.targets.launchd.launchctl import domain

QUARANTINE = "com.apple.quarantine"
FDA_PANE = "x-apple.systempreferences:com.apple.preference.security?Privacy_AllFiles"
_DISABLED = re.compile(r'^\s*"([^"]+)"\s*=>\s*(disabled|true)\s*$', re.M)
_FIELD = re.compile(r"^\s*([a-z][a-z ]*?) = (.*)$", re.M)


def uid() -> int:
    return os.getuid()


def plist_path(job: Job) -> Path:
    return paths.launch_agents_dir() / f"{job.label}.plist"


def _sudo() -> str:
    return "sudo " if paths.system() else ""


def system_domain() -> Check:
    """LaunchDaemons: the system domain is there whoever is logged in (or nobody)."""
    name = "launchd domain"
    r = run(["launchctl", "print", "system"])
    if not r.ok:
        return problem(name, f"launchctl print system failed ({r.message()})",
                       "check that this is macOS and launchd answers: `launchctl print system`")
    return ok(name, "system: LaunchDaemons load and run with nobody logged in")


def session() -> Check:
    """The gui/<uid> domain schedgen loads jobs into exists, and this session reaches it."""
    if paths.system():
        return system_domain()
    name = "launchd domain"
    d = f"gui/{uid()}"
    mgr = run(["launchctl", "managername"]).stdout.strip() or "unknown"
    r = run(["launchctl", "print", d])
    if not r.ok:
        return problem(
            name, f"{d} does not exist ({r.message()}): nobody is logged in as you at this "
                  f"Mac's screen, and this session ({mgr}) is over SSH. schedgen loads jobs "
                  f"into {d}; without it, loading fails with \"Bootstrap failed: 5: "
                  "Input/output error\", and jobs there run only while you are logged in "
                  "at the screen",
            "log in at the Mac's screen (or with Screen Sharing), then run `schedgen apply`; "
            "for jobs that must run with nobody logged in, turn on automatic login "
            "(System Settings → Users & Groups)")
    if mgr != "Aqua":
        return ok(name, f"this session is {mgr} (SSH), and {d} exists because you are logged "
                        "in at the screen too: jobs load there")
    return ok(name, f"{d}: this login session ({mgr})")


def _fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in _FIELD.findall(text):
        out.setdefault(k, v.strip())
    return out


def service(job: Job, refusals: dict[str, str]) -> Check:
    """`launchctl print`: loaded where, its state, and its last exit status explained."""
    name = "launchd state"
    d = domain()
    r = run(["launchctl", "print", f"{d}/{job.label}"])
    if r.ok:
        f = _fields(r.stdout)
        state = f.get("state", "unknown")
        last = f.get("last exit code", "(never exited)")
        runs_as = f.get("username", "root")
        if job.user and runs_as != job.user:
            # loaded before `user` changed: launchd runs what it read at bootstrap
            return problem(name, f"loaded in {d} running as {runs_as}, not as {job.user} "
                                 f"(`user` in jobs.toml): launchd still has the plist it "
                                 "read before the change",
                           f"sudo launchctl bootout {d}/{job.label}; sudo schedgen apply")
        m = re.match(r"-?\d+", last)
        who = f" as {runs_as}" if job.user else ""
        if m is None or int(m.group()) == 0:
            return ok(name, f"loaded in {d}{who}, {state}, last exit {last}")
        means, todo = explain.exit_meaning(int(m.group()))
        return problem(name, f"loaded in {d}{who}, {state}; the last run exited {m.group()}: "
                             f"{means}", todo.replace("JOB", job.name))
    u = None if paths.system() else run(["launchctl", "print", f"user/{uid()}/{job.label}"])
    if u is not None and u.ok:
        return problem(name, f"loaded in user/{uid()}, not {d}: someone loaded it from an SSH "
                             f"session; schedgen looks for it in {d}, and it runs outside "
                             "your login session (no keychain, no access granted to your "
                             "apps)",
                       f"launchctl bootout user/{uid()}/{job.label}; then `schedgen apply` "
                       "in a session at the Mac's screen")
    refused = refusals.get(job.label)
    if refused is not None:
        n = explain.code_of(refused)
        means, todo = explain.launchctl_error(n if n is not None else 5, job.label,
                                              str(plist_path(job)))
        return problem(name, f"not loaded: launchd refused it (\"{refused}\"): {means}", todo)
    if not plist_path(job).exists():
        return problem(name, f"not installed ({plist_path(job)} is missing)",
                       f"{_sudo()}schedgen apply")
    return problem(name, f"not loaded in {d} ({r.message()})", f"{_sudo()}schedgen apply")


def disabled_labels() -> set[str] | None:
    r = run(["launchctl", "print-disabled", "system" if paths.system() else f"gui/{uid()}"])
    return {m[0] for m in _DISABLED.findall(r.stdout)} if r.ok else None


def background(job: Job, disabled: set[str] | None) -> Check:
    """The job switched off: `launchctl disable`, or Allow in the Background turned off."""
    name = "background item"
    if disabled is None:
        return skipped(name, "launchctl print-disabled did not answer")
    if job.label in disabled:
        return problem(
            name, f"{job.label} is disabled: launchd will not run it. macOS does this when "
                  "its \"Allow in the Background\" switch is turned off (often right after "
                  "the \"Background Items Added\" notice, not knowing it was this job), or "
                  "after `launchctl disable`",
            "System Settings → General → Login Items & Extensions → Allow in the Background: "
            f"switch the item on (it may be named bash); then `{_sudo()}launchctl enable "
            f"{domain()}/{job.label}` and `{_sudo()}schedgen apply`")
    return ok(name, "enabled")


def plist_valid(job: Job) -> Check:
    name = "plist"
    p = plist_path(job)
    if not p.exists():
        return problem(name, f"{p} is missing", "schedgen apply")
    if shutil.which("plutil") is None:
        return skipped(name, "plutil not found (not a Mac)")
    r = run(["plutil", "-lint", str(p)])
    if not r.ok:
        return problem(name, r.stdout.strip() or r.message(), "schedgen apply --force")
    st = p.stat()
    if paths.system() and (st.st_uid != 0 or st.st_mode & 0o022):
        # launchd logs "Path had bad ownership/permissions" and bootstrap fails with 5
        return problem(name, f"{p} is not root's alone (owner uid {st.st_uid}, mode "
                             f"{st.st_mode & 0o777:04o}): launchd refuses a LaunchDaemon "
                             "another account could change (bootstrap error 5)",
                       f"sudo chown root:wheel {p}; sudo chmod 644 {p}; sudo schedgen apply")
    if not paths.system() and (st.st_uid != uid() or st.st_mode & 0o022):
        return problem(name, f"{p} is not yours alone (owner uid {st.st_uid}, mode "
                             f"{st.st_mode & 0o777:04o}): launchd refuses it (error 122)",
                       f"chmod 644 {p}; chown $(id -un) {p}; schedgen apply")
    return ok(name, f"{p}: OK")


def _program_args(job: Job) -> list[str]:
    try:
        with open(plist_path(job), "rb") as fh:
            args = plistlib.load(fh).get("ProgramArguments", [])
    except (OSError, ValueError, plistlib.InvalidFileException):
        return []
    return [str(a) for a in args] if isinstance(args, list) else []


def launched_program(job: Job) -> Check:
    """What the plist starts exists and may be executed."""
    name = "program launchd starts"
    args = _program_args(job)
    if not args:
        return skipped(name, "no installed plist to read")
    p = Path(args[0])
    if not p.exists():
        return problem(name, f"{p} does not exist (launchd logs exit 78, nothing runs)",
                       "schedgen apply")
    if not (p.is_file() and os.access(p, os.X_OK)):
        return problem(name, f"{p} is not executable (exit 126)", f"chmod +x {p}; or schedgen "
                       "apply --force")
    return ok(name, f"{p} exists and is executable")


def log_folder(job: Job) -> Check:
    """launchd opens StandardOutPath before it starts the job: a missing folder fails
    every run before the job file can say why."""
    name = "log folder"
    if job.log_dir.is_dir():
        return ok(name, f"{job.log_dir} exists")
    return problem(name, f"{job.log_dir} is missing: launchd cannot open the job's "
                         "StandardOutPath there and fails every run before it starts",
                   "schedgen apply (it creates the folder)")


def quarantined(job: Job) -> Check:
    """A file downloaded through a browser carries com.apple.quarantine: Gatekeeper stops
    it from running in the background, with no dialog to say so."""
    name = "quarantine"
    if shutil.which("xattr") is None:
        return skipped(name, "xattr not found (not a Mac)")
    files = [job.wrapper_path]
    prog = program(job)
    if prog is not None:
        found = Path(os.path.expanduser(prog)) if "/" in prog else find(prog, job.path)
        if found is not None:
            files.append(found)
    bad = []
    for f in files:
        if not f.exists():
            continue
        r = run(["xattr", "-p", QUARANTINE, str(f)])
        if r.ok:
            bad.append((f, r.stdout.strip()))
    if bad:
        listed = "; ".join(f"{f} ({v.split(';')[2] if v.count(';') >= 2 else v})"
                           for f, v in bad)
        return problem(name, f"quarantined (downloaded, not yet opened once): {listed}: "
                             "macOS will not run it from launchd",
                       "; ".join(f"xattr -d {QUARANTINE} {f}" for f, _ in bad))
    return ok(name, "no quarantined file: " + ", ".join(str(f) for f in files))


def tcc(job: Job, wait: float = 15.0) -> Check:
    """What the job may not read from its own launchd context (the probe agent)."""
    name = "privacy (TCC)"
    areas = probe.areas(job)
    if not areas:
        return ok(name, "the job's paths touch no folder macOS protects")
    if paths.system():
        # The probe is an agent of this login session; a LaunchDaemon's grants differ.
        return skipped(name, "the probe runs in a login session, not as a LaunchDaemon: "
                             "what this job may read from the system domain is not probed "
                             f"(it touches {', '.join(a.what for a in areas)}; a daemon "
                             f"needs {probe.FULL_DISK} for {probe.interpreter(job)})")
    out = probe.probe(job, [a.folder for a in areas], f"gui/{uid()}", wait)
    if out.error:
        n = explain.code_of(out.error)
        means = explain.launchctl_error(n, job.label, "the probe")[0] if n is not None else ""
        return warning(name, f"the probe agent could not run ({out.error}{': ' + means if means else ''}); "
                             "what the job may read is unknown",
                       "fix the launchd domain problem above, then run `schedgen doctor` again")
    denied = [a for a in areas if out.results.get(a.folder, ("", ""))[0] == "denied"]
    if not denied:
        seen = ", ".join(f"{a.what} {out.results.get(a.folder, ('unknown', ''))[0]}"
                         for a in areas)
        return ok(name, f"from launchd the job may read what it touches ({seen})")
    interp = probe.interpreter(job)
    what = ", ".join(f"{a.what} ({a.folder})" for a in denied)
    full = any(a.pane == probe.FULL_DISK for a in denied)
    pane = probe.FULL_DISK if full else f"{probe.FILES_AND_FOLDERS} (or {probe.FULL_DISK})"
    return problem(
        name, f"run by launchd, {interp} may not read {what}: \"Operation not permitted\". "
              "The job fails there every time while it works from your terminal",
        f"open System Settings → Privacy & Security → {pane} and allow {interp}: launchd "
        f"starts the job as {interp}, so the grant must be its own, not your terminal's "
        f"(if it is not listed, add it under {probe.FULL_DISK} with +, ⌘⇧G to type the "
        f"path; `open \"{FDA_PANE}\"` opens that pane). Or keep the job's files out of "
        f"{', '.join(a.what for a in denied)}. Then run `schedgen doctor {job.name}` again")


def checks(jobs: tuple[Job, ...], wait: float = 15.0) -> list[Check]:
    if shutil.which("launchctl") is None:
        return [skipped("launchd", "launchctl not found on PATH (not a Mac): launchd checks "
                                   "skipped")]
    out = [session()]
    refusals = memory.refusals()
    disabled = disabled_labels()
    for job in jobs:
        out += [c.of(job.name) for c in (plist_valid(job), service(job, refusals),
                                         background(job, disabled), launched_program(job), log_folder(job),
                                         quarantined(job), tcc(job, wait))]
    return out
