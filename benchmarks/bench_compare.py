"""schedgen against whenever and a python-crontab script, on a real crontab, in one run.

The tools a user would otherwise pick to keep a crontab in step with a list of jobs:
whenever (`whenever --update-crontab`, Debian's ruby-whenever) and a short python-crontab
script (PYCRON below). Each writes the same jobs (same schedules, same commands) into the
real crontab(1) of a throwaway user that this script creates (it must run as root) and
removes when done; every tool runs as that user, with HOME in a temp folder.

That HOME is on an ext4 made for the run (mkfs's defaults, loop-mounted from a file in
the temp folder; `--home-fs temp` keeps it in the temp folder itself). The machine's own
file system may be one without a journal, as many VM images are; there ext4 will not
reuse an inode freed in the last minute (six while its inode table block is unwritten)
and scans past each such inode for every file it creates. A first install made soon
after a test suite or an earlier round deleted thousands of files then costs several
times what it costs anywhere else, and grows with what was deleted, not with the jobs.
Resets move an install aside instead of deleting it, for the same reason.

Per size (20, 200, 2,000 jobs) and round, each tool in turn: its crontab reset to the
user's own lines, then first install, re-apply in sync, review in sync (`schedgen diff`)
and status (`schedgen status --check`). Rounds interleave the tools so drift on the
machine hits all alike; medians are printed with each tool's speed against whenever's
(whenever's time / the tool's: above 1 is faster). whenever and the script have no
review or status: those rows are set against whenever's in-sync re-apply, the nearest
thing a whenever user runs to see that nothing changed. A tool that is not installed is
skipped with a line saying so.

After every schedgen step the user's own lines are checked byte for byte (the run stops
if one changed); whether the other tools keep them is printed too.

Run `python benchmarks/bench_compare.py` (or `--quick`: 20 and 200 jobs, 3 rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("first install", "re-apply in sync", "review in sync", "status")

# The user's own table: spacing, an env line with spaces around '=', a blank line, a
# trailing comment and a '%'. Every byte must survive schedgen's steps.
USER_LINES = (
    "# my own jobs, kept by hand\n"
    "SHELL = /bin/bash\n"
    'MAILTO=""\n'
    "\n"
    "*/5  *  * * *   /usr/bin/true   keep   spacing   # trailing comment\n"
    "@daily  date +\\%F >/dev/null\n"
)

# What a user writes with python-crontab: its jobs replaced wholesale on every run.
PYCRON = '''\
import json
import re
import sys

from crontab import CronTab

MARK = "pycron-bench"
jobs = json.load(open(sys.argv[1]))
cron = CronTab(user=True)
cron.remove_all(comment=re.compile("^" + MARK + ":"))
for job in jobs:
    entry = cron.new(command=job["command"], comment=f"{MARK}:{job['name']}")
    entry.setall(job["schedule"])
    if not entry.is_valid():
        sys.exit(f"invalid schedule for {job['name']}")
cron.write()
'''


# The file system's share of a first install, alone: what schedgen's steps do with the
# files (docs/performance.md, a first install), with no schedgen code. The folder is not
# there yet: each file is created whole, under its own name, in a folder beside it, all
# are flushed at once, the folder is renamed into place and its parent synced. The time
# is taken inside the script, so the interpreter's start is not counted.
FILES_ALONE = '''\
import ctypes, os, sys, time
folder, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
parent = os.path.dirname(folder)
os.makedirs(parent, exist_ok=True)
staging = os.path.join(parent, f".{os.path.basename(folder)}.{os.urandom(4).hex()}.tmp")
os.mkdir(staging)
for i in range(n + 1):  # the job files, and the runtime (its size: 130 kB)
    fd = os.open(f"{staging}/job-{i:04d}.sh", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
    os.fchmod(fd, 0o755)
    os.write(fd, b"#" * (130_000 if i == n else 2_716))
    os.close(fd)
fd = os.open(parent, os.O_RDONLY)
ctypes.CDLL(None, use_errno=True).syncfs(fd)
os.rename(staging, folder)
os.fsync(fd)
os.close(fd)
print(time.perf_counter() - t)
'''


def jobs(n: int) -> list[dict[str, str]]:
    return [{"name": f"job-{i:04d}", "schedule": f"{i % 60} {i % 24} * * *",
             "command": f"/bin/true job-{i:04d}"} for i in range(n)]


def schedgen_config(js: list[dict[str, str]]) -> str:
    out = ['[defaults]\ntargets = ["cron"]\n']
    for j in js:
        prog, arg = j["command"].split()
        out.append(f'[jobs.{j["name"]}]\ncommand = ["{prog}", "{arg}"]\n'
                   f'schedule = "{j["schedule"]}"\n')
    return "\n".join(out)


def whenever_schedule(js: list[dict[str, str]]) -> str:
    return "".join(f"every '{j['schedule']}' do\n  command \"{j['command']}\"\nend\n\n"
                   for j in js)


class User:
    """A throwaway account: its crontab is the one the tools write."""

    def __init__(self, home: Path) -> None:
        self.name = f"sgbench{os.getpid()}"
        subprocess.run(["useradd", "--no-create-home", "--home-dir", str(home),
                        "--shell", "/bin/sh", "--user-group", self.name], check=True)
        pw = pwd.getpwnam(self.name)
        self.uid, self.gid, self.home = pw.pw_uid, pw.pw_gid, home
        home.mkdir(parents=True, exist_ok=True)
        os.chown(home, self.uid, self.gid)

    def run(self, argv: list[str], env: dict[str, str], cwd: Path,
            ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
        """As the user (setuid in the child, as runuser does, without a PAM session)."""
        t = time.perf_counter()
        r = subprocess.run(argv, env=env, cwd=cwd, user=self.uid, group=self.gid,
                           extra_groups=[], capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        if r.returncode not in ok:
            raise SystemExit(f"step failed ({r.returncode}): {' '.join(argv)}\n"
                             f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return elapsed, r.stdout

    def set_aside(self, path: Path) -> None:
        """Moved out of the way, not deleted: files are deleted only when the run ends.
        On ext4 without a journal (many VM images) a new inode skips over every inode
        freed in the last minute or more, so a first install made right after deleting
        the last one would pay for that deletion, as no user's first install does."""
        if path.exists():
            aside = self.home / ".bench-aside"
            aside.mkdir(exist_ok=True)
            path.rename(aside / f"{len(list(aside.iterdir()))}")

    def crontab(self) -> str:
        r = subprocess.run(["crontab", "-u", self.name, "-l"], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ""

    def set_crontab(self, text: str) -> None:
        subprocess.run(["crontab", "-u", self.name, "-"], input=text, text=True, check=True)

    def remove(self) -> None:
        subprocess.run(["crontab", "-u", self.name, "-r"], capture_output=True)
        subprocess.run(["userdel", self.name], capture_output=True)


def fresh_ext4(image: Path, at: Path) -> Path | None:
    """A new ext4 (mkfs's defaults: with a journal, as installers make it) in a file,
    loop-mounted at `at`; None where that cannot be done here (no mkfs.ext4, no loop
    device). Its flushes still reach the disk: the loop device fsyncs its file."""
    if not shutil.which("mkfs.ext4"):
        return None
    with image.open("wb") as f:
        f.truncate(4 << 30)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True)
    at.mkdir()
    if made.returncode or subprocess.run(["mount", "-o", "loop", str(image), str(at)],
                                         capture_output=True).returncode:
        image.unlink()
        return None
    return at


def unmount(at: Path) -> bool:
    """`at` unmounted: a short busy spell waited out (a run cron started in the user's
    HOME, a step ^C left ending), else detached lazily (its loop device goes with its
    last user). False: still mounted. A mount left busy had been left for good, and the
    temp folder's removal then emptied the file system under it."""
    for _ in range(20):
        if not os.path.ismount(at):
            return True
        if subprocess.run(["umount", str(at)], capture_output=True).returncode == 0:
            return True
        time.sleep(0.25)
    subprocess.run(["umount", "--lazy", str(at)], capture_output=True)
    return not os.path.ismount(at)


def install_site(tmp: Path, src: Path, name: str) -> Path:
    """schedgen as a user installs it (not editable: an import hook would be timed too)."""
    site = tmp / name
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(src)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    site.chmod(0o755)
    return site


def user_python(user: User, env: dict[str, str]) -> str | None:
    """An interpreter the throwaway user may run that finds schedgen and python-crontab."""
    seen: list[str] = []
    for py in (sys.executable, os.path.realpath(sys.executable), shutil.which("python3") or "",
               "/usr/bin/python3"):
        if not py or py in seen:
            continue
        seen.append(py)
        try:
            r = subprocess.run([py, "-c", "import schedgen.cli, crontab"], env=env,
                               cwd=user.home, user=user.uid, group=user.gid, extra_groups=[],
                               capture_output=True)
        except OSError:
            continue  # not the user's to run (e.g. under root's home)
        if r.returncode == 0:
            return py
    return None


def outside_block(text: str, begin: str, end: str) -> str:
    """The table without the lines from BEGIN to END (the tool's own block)."""
    return re.sub(rf"(?ms)^{begin}.*?^{end}[^\n]*\n", "", text)


def schedules(text: str, own: str) -> list[str]:
    """The schedules (5 fields) of the lines that run `own` commands."""
    out = []
    for ln in text.splitlines():
        if own in ln and not ln.lstrip().startswith("#"):
            # python-crontab writes "0 0 * * *" as @daily
            out.append("0 0 * * *" if ln.startswith("@daily") else " ".join(ln.split()[:5]))
    return sorted(out)


class Tool:
    def __init__(self, name: str, steps: dict[str, Callable[[], float]],
                 reset: Callable[[], None], keeps: Callable[[str], bool]) -> None:
        self.name, self.steps, self.reset, self.keeps = name, steps, reset, keeps


def schedgen_tool(label: str, env: dict[str, str], n: int, user: User, py: str, d: Path,
                  want: list[str]) -> Tool:
    cfg = d / "jobs.toml"
    cfg.write_text(schedgen_config(jobs(n)))
    sg = [py, "-m", "schedgen"]

    def reset() -> None:
        user.set_aside(user.home / ".local")  # wrappers, record, logs
        user.set_crontab(USER_LINES)

    def keeps(table: str) -> bool:
        return outside_block(table, "# BEGIN schedgen", "# END schedgen") == USER_LINES

    def step(verb: list[str]) -> Callable[[], float]:
        def run() -> float:
            elapsed, _ = user.run([*sg, *verb, "-c", str(cfg)], env, d)
            table = user.crontab()
            if not keeps(table):
                raise SystemExit(f"{label} {verb[0]} changed the user's own lines:\n"
                                 f"{table!r}\nwas\n{USER_LINES!r}")
            if schedules(table, "schedgen") != want:
                raise SystemExit(f"{label} {verb[0]}: the crontab does not hold the {n} jobs")
            return elapsed
        return run

    return Tool(label, {
        "first install": step(["apply"]),
        "re-apply in sync": step(["apply"]),
        "review in sync": step(["diff"]),  # exit 1 (changes pending) fails the run
        "status": step(["status", "--check"]),
    }, reset, keeps)


def tools_for(n: int, user: User, py: str | None, envs: dict[str, dict[str, str]],
              report: Callable[[str], None]) -> list[Tool]:
    """envs: per schedgen build (its name: "schedgen", or "schedgen@base" for --baseline)
    the environment it runs in; the first one's also runs the python-crontab script."""
    js = jobs(n)
    want = sorted(j["schedule"] for j in js)
    out: list[Tool] = []
    home = user.home

    def fresh(folder: str) -> Path:
        d = home / folder
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        os.chown(d, user.uid, user.gid)
        return d

    for label, env in (envs.items() if py is not None else ()):
        out.append(schedgen_tool(label, env, n, user, py or "", fresh(label), want))
    if py is None:
        report("schedgen and python-crontab: skipped (no python the benchmark user can run "
               "imports them)")
    env = next(iter(envs.values()))

    if shutil.which("whenever"):
        d = fresh("whenever")
        (d / "schedule.rb").write_text(whenever_schedule(js))
        wh = ["whenever", "--update-crontab", "bench", "--load-file", str(d / "schedule.rb")]

        def wh_step() -> float:
            elapsed, _ = user.run(wh, env, d)
            if schedules(user.crontab(), "/bin/true job-") != want:
                raise SystemExit("whenever: the crontab does not hold the jobs")
            return elapsed

        out.append(Tool("whenever", {"first install": wh_step, "re-apply in sync": wh_step},
                        lambda: user.set_crontab(USER_LINES),
                        lambda t: outside_block(t, "# Begin Whenever", "# End Whenever")
                        == USER_LINES))
    else:
        report("whenever: skipped (not installed; Debian package ruby-whenever)")

    if py is not None:
        d = fresh("pycron")
        (d / "jobs.json").write_text(json.dumps(js))
        (d / "pycron.py").write_text(PYCRON)
        pc = [py, str(d / "pycron.py"), str(d / "jobs.json")]

        def pc_step() -> float:
            elapsed, _ = user.run(pc, env, d)
            if schedules(user.crontab(), "/bin/true job-") != want:
                raise SystemExit("python-crontab: the crontab does not hold the jobs")
            return elapsed

        def pc_keeps(t: str) -> bool:
            return "".join(ln for ln in t.splitlines(keepends=True)
                           if "pycron-bench" not in ln) == USER_LINES

        out.append(Tool("python-crontab", {"first install": pc_step, "re-apply in sync": pc_step},
                        lambda: user.set_crontab(USER_LINES), pc_keeps))
    if py is not None:
        d = fresh("files")
        (d / "files.py").write_text(FILES_ALONE)
        folder = home / ".local" / "share" / "files-alone"

        def files_step() -> float:
            _, out = user.run([py, str(d / "files.py"), str(folder), str(n)], env, d)
            return float(out)

        out.append(Tool(FILES, {"first install": files_step},
                        lambda: user.set_aside(folder), lambda t: True))
    return out


FILES = "the files alone"


def files_share(times: dict[tuple[str, str], list[float]]) -> str:
    """The first install's file system share, and schedgen's speed without it."""
    files = times.get((FILES, "first install"))
    mine = times.get(("schedgen", "first install"))
    base = times.get(("whenever", "first install"))
    if not files or not mine:
        return ""
    line = (f"the file system's share of a first install, alone (creating and flushing the "
            f"job files and the runtime and putting them in place, no schedgen code): median "
            f"{statistics.median(files):,.0f} ms, {statistics.median(f / m for f, m in zip(files, mine, strict=True)):.0%} "
            f"of schedgen's first install")
    if base:
        line += (f"; schedgen's first install without it: "
                 f"{statistics.median(b / (m - f) for m, f, b in zip(mine, files, base, strict=True)):.2f}× "
                 f"whenever's speed")
    return line


def measure(n: int, rounds: int, user: User, py: str | None, envs: dict[str, dict[str, str]],
            report: Callable[[str], None]) -> tuple[dict[tuple[str, str], list[float]],
                                                    dict[str, bool]]:
    tools = tools_for(n, user, py, envs, report)
    times: dict[tuple[str, str], list[float]] = {}
    keeps: dict[str, bool] = {}
    for r in range(rounds + 1):  # round 0 warms caches (bytecode, templates) and is dropped
        for tool in tools:
            tool.reset()
            settle()
            for step, fn in tool.steps.items():
                elapsed = fn()
                if r:
                    times.setdefault((tool.name, step), []).append(elapsed * 1000)
            keeps[tool.name] = keeps.get(tool.name, True) and tool.keeps(user.crontab())
    return times, keeps


SETTLE = 0.5  # seconds


def settle() -> None:
    """Every tool starts on a quiet disk: what the last step wrote (its logs, a whole
    install) is flushed first, so that a step does not pay for another's writeback."""
    os.sync()
    time.sleep(SETTLE)


def fmt(ms: float | None) -> str:
    return "–" if ms is None else f"{ms:,.0f}"


def table(n: int, times: dict[tuple[str, str], list[float]], names: list[str]) -> list[str]:
    """Medians, and each tool's speed against whenever (median of per-round ratios)."""
    def against(tool: str, step: str) -> str:
        mine = times.get((tool, step))
        base = times.get(("whenever", step)) or times.get(("whenever", "re-apply in sync"))
        if not mine or not base:
            return "–"
        return f"{statistics.median(b / m for m, b in zip(mine, base, strict=True)):.2f}×"

    rows = [f"| {n} jobs: step (ms, median) | " + " | ".join(names) + " | "
            + " | ".join(f"{t} speed vs whenever" for t in names if t != "whenever") + " |",
            "|---" * (1 + len(names) + len(names) - 1) + "|"]
    for step in STEPS:
        cells = [fmt(statistics.median(times[(t, step)])) if (t, step) in times else "–"
                 for t in names]
        rows.append(f"| {step} | " + " | ".join(cells) + " | "
                    + " | ".join(against(t, step) for t in names if t != "whenever") + " |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 and 200 jobs, 3 rounds (CI)")
    ap.add_argument("--rounds", type=int, help="rounds per size (default 5; --quick 3)")
    ap.add_argument("--sizes", help="comma-separated job counts (default 20,200,2000)")
    ap.add_argument("--baseline", metavar="DIR", type=Path,
                    help="another schedgen source tree (say, an earlier commit checked out) "
                         "measured in the same rounds, as schedgen@base")
    ap.add_argument("--home-fs", choices=("fresh-ext4", "temp"), default="fresh-ext4",
                    help="where the user's HOME (job files, runtime, record) lives: on an "
                         "ext4 made for the run in a file in the temp folder and "
                         "loop-mounted (default; the temp folder where that cannot be "
                         "done), or in the temp folder itself")
    args = ap.parse_args()
    sizes = [int(s) for s in (args.sizes or ("20,200" if args.quick else "20,200,2000")).split(",")]
    rounds = args.rounds or (3 if args.quick else 5)

    def report(line: str) -> None:
        print(line, flush=True)

    if os.geteuid() != 0:
        report("bench_compare: skipped (needs root: it creates a throwaway user whose real "
               "crontab the tools rewrite)")
        return
    if not shutil.which("crontab") or not shutil.which("useradd"):
        report("bench_compare: skipped (crontab(1) or useradd not installed)")
        return
    # A TERM ends it like a ^C: the throwaway user and its crontab are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = Path(tempfile.mkdtemp(prefix="schedgen-bench-"))
    tmp.chmod(0o755)
    user = None
    mounted: Path | None = None
    try:
        sites = {"schedgen": install_site(tmp, ROOT, "schedgen")}
        if args.baseline:
            sites["schedgen@base"] = install_site(tmp, args.baseline, "schedgen@base")
        if args.home_fs == "fresh-ext4":
            mounted = fresh_ext4(tmp / "home.img", tmp / "home")
            if mounted is None:
                report("HOME in the temp folder: no ext4 could be made and mounted for it")
        user = User(tmp / "home")
        # schedgen installed (above), its dependencies and python-crontab from this Python.
        deps = sysconfig.get_paths()["purelib"]
        # A cache folder per build: a user has one schedgen. Sharing one, each build found
        # the other's stored template code and schedule words under a key not its own (the
        # key names its files), so every first install went through jinja2 again.
        envs = {label: {"HOME": str(user.home), "USER": user.name, "LOGNAME": user.name,
                        "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                        "XDG_CACHE_HOME": str(user.home / f".cache-{label}"),
                        "PYTHONPATH": f"{site}:{deps}"} for label, site in sites.items()}
        py = user_python(user, envs["schedgen"])
        names = [*sites, "whenever", "python-crontab"]
        results = {}
        for n in sizes:
            times, keeps = measure(n, rounds, user, py, envs, report)
            results[n] = times
            report("")
            report("\n".join(table(n, times, names)))
            report("keeps the user's own lines byte for byte: "
                   + ", ".join(f"{t} {'yes' if k else 'no'}" for t, k in keeps.items()
                               if t != FILES))
            if files_share(times):
                report(files_share(times))
        if len(sizes) > 1:
            big, small = sizes[-1], sizes[-2]
            report("")
            report(f"| {big} jobs / {small} jobs (median ms ratio) | " + " | ".join(names) + " |")
            report("|---" * (1 + len(names)) + "|")
            for step in STEPS:
                cells = []
                for t in names:
                    a, b = results[small].get((t, step)), results[big].get((t, step))
                    cells.append(f"{statistics.median(b) / statistics.median(a):.1f}×"
                                 if a and b else "–")
                report(f"| {step} | " + " | ".join(cells) + " |")
        report(f"\n{rounds} rounds per size, interleaved; crontab(1) of a throwaway user; "
               + ("HOME on a fresh loop-mounted ext4." if mounted else "HOME in the temp folder."))
    finally:
        if user is not None:
            user.remove()
        # Looked for, not only when fresh_ext4 returned: a ^C may come right after mount.
        if not unmount(tmp / "home"):
            report(f"could not unmount {tmp / 'home'}: unmount it, then remove {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
