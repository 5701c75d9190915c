"""Checks every local target shares: what the job file needs when the scheduler runs it.

The scheduler does not run the job from the user's shell: cron and launchd give it a
minimal environment, and the job file sets PATH to the job's `path` (jobs.toml). So a
program is looked up on that PATH, not on the one this command runs with.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

from schedgen import paths
from schedgen.config.model import Job
from schedgen.doctor import Check, ok, problem, skipped, warning

# Where Homebrew puts its programs (Apple silicon, Intel Macs, Linux).
HOMEBREW_BINS = ("/opt/homebrew/bin", "/opt/homebrew/sbin", "/usr/local/bin",
                 "/home/linuxbrew/.linuxbrew/bin")
# First words of a command line that are the shell's own: nothing to find on PATH.
_SHELL_WORDS = {"cd", "export", "set", "source", ".", "test", "[", "exec", "if", "for",
                "while", "case", "true", "false", "echo", "printf", "read", "eval", "{", "("}
MAIL_PROGRAMS = ("mail", "mailx", "sendmail", "msmtp", "s-nail", "bsd-mailx", "mutt")
SENDMAIL = ("/usr/sbin/sendmail", "/usr/lib/sendmail")


def program(job: Job) -> str | None:
    """The program the job's command runs first (None: a shell word, or no command)."""
    if isinstance(job.command, tuple):
        return job.command[0] if job.command else None
    try:
        words = shlex.split(job.command)
    except ValueError:
        return None
    while words and "=" in words[0] and not words[0].startswith("="):
        words.pop(0)  # VAR=value before the program
    return words[0] if words and words[0] not in _SHELL_WORDS else None


def find(name: str, path: tuple[str, ...] | list[str]) -> Path | None:
    """`name` as exec finds it on `path`: an executable file."""
    for d in path:
        if not d:
            continue
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def homebrew_bins() -> tuple[str, ...]:
    prefix = os.environ.get("HOMEBREW_PREFIX", "")
    return ((f"{prefix}/bin",) if prefix else ()) + HOMEBREW_BINS


def program_on_path(job: Job, user_path: str | None = None) -> Check:
    name = "program on the job's PATH"
    prog = program(job)
    if prog is None:
        return skipped(name, "the command starts with a shell word; nothing to look up")
    where = ":".join(job.path)
    if "/" in prog:
        p = Path(os.path.expanduser(prog))
        if not p.exists():
            return problem(name, f"{prog} does not exist",
                           f"fix `command` of job {job.name} in jobs.toml, or create {prog}")
        if not (p.is_file() and os.access(p, os.X_OK)):
            return problem(name, f"{prog} is not an executable file",
                           f"chmod +x {shlex.quote(str(p))}")
        return ok(name, f"{prog} exists and is executable")
    found = find(prog, job.path)
    if found is not None:
        return ok(name, f"{prog} is {found} on the job's PATH ({where})")
    shell = (user_path if user_path is not None else os.environ.get("PATH", "")).split(":")
    elsewhere = find(prog, shell)
    if elsewhere is None:
        return problem(name, f"{prog} is not on the job's PATH ({where}), nor on yours",
                       f"install {prog}, or give its full path in `command` of job {job.name}")
    d = str(elsewhere.parent)
    brew = d in homebrew_bins()
    why = (" (Homebrew's: cron and launchd do not read your shell's profile, so they "
           "never see the PATH Homebrew's shellenv sets)" if brew else
           " (cron and launchd do not read your shell's profile)")
    return problem(name, f"{prog} is {elsewhere} on your PATH, but the job's PATH ({where}) "
                         f"does not have {d}: the scheduler will not find it (exit 127){why}",
                   f'add "{d}" to `path` in jobs.toml (for job {job.name} or in [defaults]), '
                   "then run `schedgen apply`")


def _may(job: Job, path: Path, mode: int) -> bool:
    """May the account the job runs as read (R_OK) or enter (X_OK) `path`? A system
    job's runs are its user's, whoever asks: root's own access says nothing of theirs."""
    if job.user is None:
        return os.access(path, mode)
    import pwd

    try:
        account = pwd.getpwnam(job.user)
    except KeyError:
        return False
    if account.pw_uid == os.geteuid():
        return os.access(path, mode)
    if account.pw_uid == 0:
        return True
    groups = set(os.getgrouplist(account.pw_name, account.pw_gid))

    def allowed(p: Path, want: int) -> bool:  # want: 4 read, 1 enter/run
        try:
            st = os.stat(p)
        except OSError:
            return False
        if st.st_uid == account.pw_uid:
            bits = st.st_mode >> 6
        elif st.st_gid in groups:
            bits = st.st_mode >> 3
        else:
            bits = st.st_mode
        return bits & want == want

    real = Path(os.path.realpath(path))
    want = (4 if mode & os.R_OK else 0) | (1 if mode & os.X_OK else 0)
    return all(allowed(d, 1) for d in real.parents) and allowed(real, want)


def _who(job: Job) -> str:
    return job.user if job.user is not None else "you"


def working_dir(job: Job) -> Check:
    name = "working_dir"
    d = job.working_dir
    if d is None:
        return ok(name, "not set")
    if not d.is_dir():
        return problem(name, f"{d} is not a directory",
                       f"create {d}, or fix `working_dir` of job {job.name}")
    if not _may(job, d, os.R_OK | os.X_OK):
        return problem(name, f"{d} is not readable by {_who(job)}",
                       f"chmod u+rx {shlex.quote(str(d))}" if job.user is None else
                       f"let {job.user} read and enter {shlex.quote(str(d))} and the "
                       "folders above it")
    return ok(name, f"{d} is a readable directory")


def env_file(job: Job) -> Check:
    name = "env_file"
    f = job.env_file
    if f is None:
        return ok(name, "not set")
    if not f.is_file():
        return problem(name, f"{f} does not exist (the job stops with exit 78)",
                       f"create {f}, or fix `env_file` of job {job.name}")
    if not _may(job, f, os.R_OK):
        return problem(name, f"{f} is not readable by {_who(job)} (the job stops with exit "
                             "78)", f"chmod u+r {shlex.quote(str(f))}" if job.user is None else
                       f"let {job.user} read {shlex.quote(str(f))} (its runs source it as "
                       f"{job.user}, not as root)")
    return ok(name, f"{f} is readable")


def _nearest(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def system_files(job: Job) -> Check:
    """A system job's file is root's and runs as its user: that user (or anyone but root)
    must not be able to replace it, nor the folder it is in."""
    name = "job file owner"
    if job.user is None:
        return skipped(name, "a user-scope job: its files are yours")
    for path in (job.wrapper_dir, job.wrapper_path):
        try:
            st = path.stat()
        except FileNotFoundError:
            return warning(name, f"{path} is missing", "run `sudo schedgen apply`")
        if st.st_uid != 0 or st.st_mode & 0o022:
            return problem(name, f"{path} is not root's alone (owner uid {st.st_uid}, mode "
                                 f"{st.st_mode & 0o777:04o}): another account, {job.user} "
                                 "included, could change what the job runs",
                           f"chown root {shlex.quote(str(path))} && chmod go-w "
                           f"{shlex.quote(str(path))}")
    up = paths.open_above(job.wrapper_dir)
    if up is not None:
        return problem(name, f"{up} is writable by others than root: another account, "
                             f"{job.user} included, could rename {job.wrapper_dir} away and put "
                             "its own job file in its place",
                       f"chown root {shlex.quote(str(up))} && chmod go-w {shlex.quote(str(up))}")
    return ok(name, f"{job.wrapper_path} and its folder are root's; {job.user} can run it, "
                    "not change it")


def lock_dir(job: Job) -> Check:
    name = "lock dir"
    d = job.lock_dir
    if job.lock is None:
        return ok(name, "the job takes no lock")
    if job.user is not None:
        return _users_dir(name, d, job.user, 0o022)
    if not d.exists():
        up = _nearest(d)
        if not os.access(up, os.W_OK | os.X_OK):
            return problem(name, f"{d} does not exist and {up} is not writable by you",
                           f"create {d} with mode 0700, or set `lock_dir` to a folder of yours")
        return ok(name, f"{d} will be created (mode 0700) at the first run")
    st = d.stat()
    if st.st_uid != os.getuid():
        return problem(name, f"{d} is owned by uid {st.st_uid}, not by you (exit 78: another "
                             "user could hold or remove the job's lock)",
                       "use a lock dir of your own (`lock_dir`), or chown it to yourself")
    if st.st_mode & 0o022:
        return problem(name, f"{d} is writable by others (mode {st.st_mode & 0o777:04o}; the "
                             "job stops with exit 78)", f"chmod 700 {shlex.quote(str(d))}")
    return ok(name, f"{d} is yours and private (mode {st.st_mode & 0o777:04o})")


def _users_dir(name: str, d: Path, user: str, unsafe: int) -> Check:
    """A system job's folder its runs write in: its user's."""
    import pwd

    try:
        uid = pwd.getpwnam(user).pw_uid
    except KeyError:
        return problem(name, f"no account named {user} on this host (the job's `user`)",
                       "create the account, or name one this host has")
    if not d.is_dir():
        return warning(name, f"{d} is missing", "run `sudo schedgen apply` (it makes it)")
    st = d.stat()
    if st.st_uid != uid or st.st_mode & unsafe:
        return problem(name, f"{d} is not {user}'s alone (owner uid {st.st_uid}, mode "
                             f"{st.st_mode & 0o777:04o}): the job's runs cannot write there",
                       "run `sudo schedgen apply` (it gives the folder to the job's user)")
    return ok(name, f"{d} is {user}'s (mode {st.st_mode & 0o777:04o})")


def log_dir(job: Job) -> Check:
    name = "log dir"
    d = job.log_dir
    if job.user is not None:
        return _users_dir(name, d, job.user, 0o022)
    if d.exists():
        if d.is_dir() and os.access(d, os.W_OK | os.X_OK):
            return ok(name, f"{d} is writable")
        return problem(name, f"{d} is not a writable directory (launchd fails the job before "
                             "it starts; the job file stops with exit 78)",
                       f"chmod u+rwx {shlex.quote(str(d))}, or set `log_root` elsewhere")
    up = _nearest(d)
    if not os.access(up, os.W_OK | os.X_OK):
        return problem(name, f"{d} does not exist and cannot be created ({up} is not writable)",
                       "set `log_root` to a folder of yours, then run `schedgen apply`")
    return ok(name, f"{d} will be created at the first run")


def notify_mail(job: Job) -> Check:
    """A notify command that sends mail needs its program on the job's PATH and an MTA."""
    name = "mail for notify"
    if job.notify is not None and job.notify.mail:
        # As the wrapper finds it: notify.sendmail, else sendmail on PATH, else where MTAs put it.
        want = job.notify.sendmail
        prog_: Path | None
        if want:
            prog_ = Path(want) if "/" in want else find(want, job.path)
            prog_ = prog_ if prog_ is not None and os.access(prog_, os.X_OK) else None
        else:
            prog_ = find("sendmail", job.path) or next(
                (Path(p) for p in SENDMAIL if os.access(p, os.X_OK)), None)
        if prog_ is None:
            return problem(name, "notify.mail is set, but no sendmail program is on the job's "
                                 "PATH or in /usr/sbin, /usr/lib: no mail goes out",
                           "install an MTA that provides sendmail (msmtp-mta, postfix), or "
                           "set notify.sendmail to its path")
        return ok(name, f"notify.mail goes through {prog_} -t -i")
    cmd = job.notify.command if job.notify is not None else None
    if cmd is None:
        return ok(name, "no notify command")
    first = cmd[0] if isinstance(cmd, tuple) and cmd else (shlex.split(cmd) or [""])[0] \
        if isinstance(cmd, str) else ""
    base = os.path.basename(first)
    if base not in MAIL_PROGRAMS:
        return ok(name, f"the notify command ({base or 'empty'}) sends no mail")
    prog = Path(first) if "/" in first else find(first, job.path)
    if prog is None or not os.access(prog, os.X_OK):
        return problem(name, f"{first} is not on the job's PATH ({':'.join(job.path)}): "
                             "notices are never sent",
                       f"install a mail program ({first}), or give its full path in the "
                       "notify command")
    mta = next((Path(p) for p in SENDMAIL if os.access(p, os.X_OK)), None) \
        or find("sendmail", job.path)
    if mta is None and base != "msmtp":
        return problem(name, f"{prog} is there, but no sendmail ({', '.join(SENDMAIL)}) to hand "
                             "the mail to: it is queued or dropped silently",
                       "install a mail transfer agent (msmtp-mta, postfix, nullmailer) that "
                       "provides /usr/sbin/sendmail")
    return ok(name, f"{prog} hands mail to {mta or 'its own SMTP'}")


def job_timezone(job: Job) -> Check:
    name = "job timezone"
    if job.timezone is None:
        return ok(name, "none: the host's local time")
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(job.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return problem(name, f"{job.timezone} is not in this host's zone database",
                       "install the zone database (tzdata), or fix `timezone` in jobs.toml")
    return ok(name, f"{job.timezone} is known")


def clock(now: float | None = None) -> Check:
    """A clock years off (a dead RTC battery, a VM restored from a snapshot) fires nothing."""
    name = "clock"
    t = time.time() if now is None else now
    year = time.gmtime(t).tm_year
    if not 2024 <= year <= 2100:
        return problem(name, f"the clock says {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t))}",
                       "set the clock (macOS: System Settings → General → Date & Time, set "
                       "automatically; Linux: `timedatectl set-ntp true`)")
    return ok(name, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t)))


def host_zone(root: Path = Path("/"), tz: str | None = None) -> Check:
    """The host's zone is one the zone database has: else jobs fire in UTC, unsaid."""
    name = "host time zone"
    tz = os.environ.get("TZ") if tz is None else tz
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if tz:
        try:
            ZoneInfo(tz.lstrip(":"))
        except (ZoneInfoNotFoundError, ValueError):
            return problem(name, f"TZ={tz} is not in the zone database: times read as UTC",
                           "unset TZ, or set it to a zone name like Europe/Paris")
        return ok(name, f"TZ={tz}")
    link = root / "etc" / "localtime"
    try:
        target = os.readlink(link)
    except OSError:
        if link.is_file():
            return ok(name, f"{link} is a zone file (no name to check)")
        return warning(name, f"{link} is missing: the host runs on UTC",
                       "set the zone (macOS: System Settings → General → Date & Time; "
                       "Linux: `timedatectl set-timezone ZONE`)")
    zone = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else None
    resolved = (link.parent / target) if not target.startswith("/") else Path(target)
    if root != Path("/") and target.startswith("/"):
        resolved = root / target.lstrip("/")
    if zone is None or not resolved.is_file():
        return problem(name, f"{link} points to {target}, which is not a zone in the database",
                       "set the zone again (macOS: System Settings → General → Date & Time; "
                       "Linux: `timedatectl set-timezone ZONE`)")
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return problem(name, f"{zone} is not in Python's zone database",
                       "install tzdata (the system package, or `pip install tzdata`)")
    return ok(name, zone)


def job_checks(job: Job) -> list[Check]:
    """What every local target's job needs, each check of this job."""
    return [c.of(job.name) for c in (program_on_path(job), working_dir(job), env_file(job),
                                     lock_dir(job), log_dir(job), system_files(job),
                                     notify_mail(job), job_timezone(job))]


def host_checks() -> list[Check]:
    return [clock(), host_zone()]
