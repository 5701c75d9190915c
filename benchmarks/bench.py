"""schedgen against what users would otherwise run, interleaved in one process.

Each pair is run alternately (A, B, A, B, ...) so drift on the machine hits
both sides alike; medians and ratios are printed, never compared with a fixed
time. Run `python benchmarks/bench.py` (or `--quick`, which CI runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
# Stand-in for `crontab` so `diff` reads a table without touching the real one.
FAKE_CRONTAB = """#!/bin/sh
t="$BENCH_CRONTAB"
case "$1" in
  -l) [ -f "$t" ] || { echo "no crontab for bench" >&2; exit 1; }; exec cat "$t" ;;
  -) exec cat > "$t" ;;
  -r) rm -f "$t" ;;
  *) exec cp "$1" "$t" ;;
esac
"""
# The hand-written wrapper of the daily-publish report: run id, artifact dir,
# flock -n, env file, the command, one manifest line.
HAND_WRAPPER = """#!/usr/bin/env bash
set -euo pipefail
RUN_ID="$(date -u +%Y%m%dT%H%M%SZ)-$$"
ARTIFACT_DIR="$LOG_ROOT/publish/$RUN_ID"
mkdir -p "$ARTIFACT_DIR"
exec 9>"$LOCK_FILE"
flock -n 9 || exit 75
set -a
. "$ENV_FILE"
set +a
/bin/true "$RUN_ID" > "$ARTIFACT_DIR/output.log" 2>&1
echo "{\\"run_id\\": \\"$RUN_ID\\", \\"exit_code\\": 0}" > "$ARTIFACT_DIR/manifest.json"
"""
# The claim of the note-funnel report: one process per file, `ls | head -1`, mv.
SEED_CLAIM = """#!/bin/bash
set -uo pipefail
DONE_DIR="$Q/done"; PROCESSING_DIR="$Q/processing"; PROCESSED_DIR="$Q/processed"
TARGET=$(ls "$DONE_DIR"/*.json 2>/dev/null | head -1)
[ -z "$TARGET" ] && exit 3
BASENAME=$(basename "$TARGET")
mv "$TARGET" "$PROCESSING_DIR/$BASENAME" 2>/dev/null || exit 0
WORKING="$PROCESSING_DIR/$BASENAME"
printf '%s\\n' "$BASENAME" >> "$Q/log"
mv "$WORKING" "$PROCESSED_DIR/$BASENAME"
"""


def timed(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if r.returncode not in (0,):
        raise SystemExit(f"benchmark step failed ({r.returncode}): {argv}\n{r.stderr.decode()}")
    return elapsed


class Samples(dict[str, list[float]]):
    """Per-round figures of interleaved runs: medians, and medians of per-round ratios."""

    def __getitem__(self, key: str) -> float:  # type: ignore[override]
        return statistics.median(super().__getitem__(key))

    def ratio(self, a: str, b: str) -> float:
        pairs = zip(super().__getitem__(a), super().__getitem__(b), strict=True)
        return statistics.median(x / y for x, y in pairs)

    def total_ratio(self, a: str, b: str) -> float:
        """All of a's rounds against all of b's: the occasional costly round counts."""
        return sum(super().__getitem__(a)) / sum(super().__getitem__(b))


def interleave(rounds: int, named: dict[str, Callable[[], float]]) -> Samples:
    samples = Samples({k: [] for k in named})
    for _ in range(rounds):
        for k, fn in named.items():
            dict.__getitem__(samples, k).append(fn())
    return samples


def config_text(n: int, root: Path, extra: str = "") -> str:
    jobs = "".join(
        f'[jobs.job-{i:04d}]\ndescription = "job {i}"\ncommand = ["/bin/true", "{{run_id}}"]\n'
        f'schedule = "{i % 60} {i % 24} * * *"\n{extra}\n'
        for i in range(n))
    return (f'[defaults]\ntargets = ["cron"]\nlog_root = "{root}/logs"\n'
            f'lock_dir = "{root}/locks"\nwrapper_dir = "{root}/wrappers"\n\n{jobs}')


SITE: Path | None = None  # schedgen installed as a user would (not editable), see main()


def install_site(tmp: Path) -> Path:
    """`pip install .` into a folder: an editable install's import hook would be timed too."""
    site = tmp / "site"
    subprocess.run([PY, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                    str(ROOT)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return site


def env_for(home: Path, bindir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "SCHEDGEN_"))}
    env.update(HOME=str(home), PATH=f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}",
               BENCH_CRONTAB=str(home / "crontab.txt"))
    if SITE is not None:
        env["PYTHONPATH"] = str(SITE)
    return env


def write_exec(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def bench_cli(tmp: Path, rounds: int) -> Samples:
    home, bindir = tmp / "home", tmp / "bin"
    home.mkdir()
    bindir.mkdir()
    write_exec(bindir / "crontab", FAKE_CRONTAB)
    env = env_for(home, bindir)
    cfg = tmp / "jobs.toml"
    cfg.write_text(config_text(20, tmp))
    sg = [PY, "-m", "schedgen"]
    # Run outside the source tree: `python -m` puts the working directory first on
    # sys.path, and from the checkout that is ./schedgen, compiled afresh on every start
    # when bytecode is not written, instead of the installed copy with its .pyc files.
    where = subprocess.run([PY, "-c", "import schedgen; print(schedgen.__file__)"], env=env,
                           cwd=tmp, capture_output=True, text=True, check=True).stdout
    if SITE is not None and not where.startswith(str(SITE)):
        raise SystemExit(f"the CLI benchmark would time {where.strip()}, not the installed copy")
    timed([*sg, "apply", "-c", str(cfg)], env, tmp)
    diff = subprocess.run([*sg, "diff", "-c", str(cfg)], env=env, cwd=tmp, capture_output=True,
                          text=True)
    if diff.returncode != 0:
        raise SystemExit(f"diff after apply is not in sync:\n{diff.stdout}{diff.stderr}")
    return interleave(rounds, {
        "floor": lambda: timed([PY, "-c", "import typer, jinja2"], env, tmp),
        "validate": lambda: timed([*sg, "validate", "-c", str(cfg)], env, tmp),
        "diff": lambda: timed([*sg, "diff", "-c", str(cfg)], env, tmp),
    })


def bench_wrapper(tmp: Path, rounds: int) -> Samples:
    home, bindir = tmp / "home", tmp / "bin"
    home.mkdir()
    bindir.mkdir()
    env = env_for(home, bindir)
    envfile = tmp / "env.local"
    envfile.write_text("TOKEN=abc\n")
    cfg = tmp / "jobs.toml"
    # job-0002 has no flock(1) on its PATH, as on macOS: perl takes the lock.
    nf = no_flock_bin(tmp / "no-flock")
    cfg.write_text(config_text(2, tmp, f'env_file = "{envfile}"\n')
                   + f'[jobs.nf]\ncommand = ["/bin/true"]\nschedule = "@daily"\n'
                   f'env_file = "{envfile}"\npath = ["{nf}"]\n')
    subprocess.run([PY, "-m", "schedgen", "render", "-c", str(cfg), "--out", str(tmp / "r")],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    ours = tmp / "r" / "wrappers" / "job-0000.sh"
    # A job that has run for a while: its runs/ one short of keep_runs (50) plus the
    # slack of a batch (6), so that it prunes in the second round and every 7th after.
    steady = tmp / "r" / "wrappers" / "job-0001.sh"
    for _ in range(55):
        timed(["bash", str(steady)], env)
    PRUNED.clear()
    hand = write_exec(tmp / "hand.sh", HAND_WRAPPER)
    henv = {**env, "LOG_ROOT": str(tmp / "hand-logs"), "LOCK_FILE": str(tmp / "hand.lock"),
            "ENV_FILE": str(envfile)}
    # The same bash by another path (a symlink): not the system's, so the wrapper loads no
    # builtin and forks /bin/mkdir (as where bash-builtins is not installed).
    bare = tmp / "bare" / "bin"
    bare.mkdir(parents=True)
    (bare / "bash").symlink_to(os.path.realpath(shutil.which("bash") or "/bin/bash"))
    LOADABLE.append(Path("/usr/lib/bash/mkdir").exists())
    # Where a run's time goes: bash on an empty file, and job-0000's file cut before it
    # calls sg_main (it reads the runtime's plain part and stops).
    empty = write_exec(tmp / "empty.sh", ":\n")
    text = ours.read_text()
    assert text.endswith('sg_main "$@"\n'), "the job file no longer ends with its call"
    sourced = write_exec(ours.with_name("job-0000-read.sh"), text[: -len('sg_main "$@"\n')] + "exit 0\n")
    # Each timed from its second run on: a job's first runs make its folders and look at
    # its lock folder's mode (once), which the first variant to run would pay alone.
    for _ in range(2):
        timed(["bash", str(hand)], henv)
        timed(["bash", str(ours)], env)
        timed(["bash", str(tmp / "r" / "wrappers" / "nf.sh")], env)
    return interleave(rounds, {
        "hand": lambda: timed(["bash", str(hand)], henv),
        "schedgen": lambda: timed(["bash", str(ours)], env),
        "bare": lambda: timed([str(bare / "bash"), str(ours)], env),
        "steady": lambda: timed_steady(steady, env, tmp / "logs" / "job-0001" / "runs"),
        "perl": lambda: timed(["bash", str(tmp / "r" / "wrappers" / "nf.sh")], env),
        "empty": lambda: timed(["bash", str(empty)], env),
        "read": lambda: timed(["bash", str(sourced)], env),
    })


def no_flock_bin(d: Path) -> Path:
    """A folder of links to every program of /usr/bin and /bin but flock."""
    d.mkdir()
    for src in (Path("/usr/bin"), Path("/bin")):
        for f in src.iterdir():
            if f.name != "flock" and not (d / f.name).exists():
                (d / f.name).symlink_to(f)
    return d


PRUNED: list[bool] = []  # per round of the job at keep_runs: whether it pruned
LOADABLE: list[bool] = []  # whether bash's loadable mkdir is installed beside it


def timed_steady(wrapper: Path, env: dict[str, str], runs: Path) -> float:
    before = len(list(runs.iterdir()))
    spent = timed(["bash", str(wrapper)], env)
    PRUNED.append(len(list(runs.iterdir())) <= before)
    return spent


def _drain(workers: list[Callable[[], subprocess.Popen[bytes]]], loop: bool) -> float:
    """Start the workers together; with loop, each restarts until its queue is empty."""
    t = time.perf_counter()
    procs = [w() for w in workers]
    while procs:
        nxt = []
        for i, p in enumerate(procs):
            code = p.wait()
            if loop and code != 3:
                nxt.append(workers[i]())
        procs = nxt
    return time.perf_counter() - t


# The physical floor of a drain: one loop per worker that forks the command once per
# item and does nothing else (no claim, no record, no move).
FLOOR_LOOP = 'for f in "$@"; do /bin/true "$f"; done'
# The same with the record every run must leave (docs/design.md, "What a run does"): a run directory per item
# (all made with one mkdir, as cheap as it gets), the command's stdout and stderr in it,
# and a manifest. What this costs over FLOOR_LOOP is the file system's, not the wrapper's.
RECORD_LOOP = ('d=$1; shift; i=0; set -- "$@"; for f; do i=$((i + 1)); set -- "$@" "$d/$i"; done; '
               'shift $(($# / 2)); mkdir -p "$@"; i=0; for r; do i=$((i + 1)); '
               '/bin/true "$r" >"$r/stdout.log" 2>"$r/stderr.log"; '
               'printf \'{"run_id": "%s", "exit_code": 0}\\n\' "$i" >"$r/manifest.json"; done')


def bench_queue(tmp: Path, files: int, rounds: int) -> Samples:
    home, bindir = tmp / "home", tmp / "bin"
    home.mkdir()
    bindir.mkdir()
    env = env_for(home, bindir)
    seed = write_exec(tmp / "seed.sh", SEED_CLAIM)
    q = tmp / "q"
    cfg = tmp / "jobs.toml"
    cfg.write_text(
        f'[defaults]\ntargets = ["cron"]\nlog_root = "{tmp}/logs"\nwrapper_dir = "{tmp}/w"\n'
        f'[jobs.drain]\ncommand = ["/bin/true", "{{item}}"]\nschedule = "@daily"\nlock = false\n'
        f'[jobs.drain.queue]\ninbox = "{q}/done"\npattern = "*.json"\nbatch = 0\n'
        f'[jobs.drain.logs]\nkeep_runs = 10\n')
    subprocess.run([PY, "-m", "schedgen", "render", "-c", str(cfg), "--out", str(tmp / "r")],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    ours = tmp / "r" / "wrappers" / "drain.sh"
    names = [f"{i:05d}.json" for i in range(files)]

    def fill() -> None:
        shutil.rmtree(q, ignore_errors=True)
        shutil.rmtree(tmp / "logs", ignore_errors=True)
        for d in ("done", "processing", "processed", "failed"):
            (q / d).mkdir(parents=True)
        for n in names:
            (q / "done" / n).write_text("{}")

    def check(name: str, where: str) -> None:
        got = sorted(p.name for p in (q / where).iterdir()) if where else []
        if where and got != names:
            raise SystemExit(f"{name}: {len(got)} of {files} files in {where}/")
        if any((q / "done").iterdir()):
            raise SystemExit(f"{name}: files left in the inbox")

    def check_log(name: str) -> None:
        seen = (q / "log").read_text().split()
        if sorted(seen) != names:
            raise SystemExit(f"{name}: {len(seen)} processed, {len(set(seen))} distinct of {files}")

    def run(name: str, argv: list[str], loop: bool) -> float:
        fill()
        e = {**env, "Q": str(q)}
        spent = _drain([lambda: subprocess.Popen(argv, env=e)] * 4, loop)
        if name == "seed":
            check_log(name)
        else:
            check(name, "processed")
            finish = [json.loads(x) for x in (tmp / "logs/drain/events.jsonl").read_text().splitlines()]
            ok = sorted(e["item"] for e in finish if e["event"] == "finish" and e["item_to"] == "processed")
            if ok != names:
                raise SystemExit(f"{name}: {len(ok)} finish records of {files}")
        return files / spent

    def floor() -> float:
        fill()
        paths = [str(q / "done" / n) for n in names]
        t = time.perf_counter()
        procs = [subprocess.Popen(["bash", "-c", FLOOR_LOOP, "_", *paths[k::4]]) for k in range(4)]
        for p in procs:
            p.wait()
        return files / (time.perf_counter() - t)

    def records() -> float:
        fill()
        paths = [str(q / "done" / n) for n in names]
        t = time.perf_counter()
        procs = [subprocess.Popen(["bash", "-c", RECORD_LOOP, "_", str(tmp / "logs" / f"w{k}"),
                                   *paths[k::4]]) for k in range(4)]
        for p in procs:
            p.wait()
        spent = time.perf_counter() - t
        made = sum(1 for _ in (tmp / "logs").glob("w*/*/manifest.json"))
        if made != files:
            raise SystemExit(f"records floor: {made} manifests of {files}")
        return files / spent

    return interleave(rounds, {
        "floor": floor,
        "records": records,
        "seed": lambda: run("seed", ["bash", str(seed)], loop=True),
        "schedgen": lambda: run("schedgen", ["bash", str(ours)], loop=False),
    })


# One manifest rewritten 1000 times, as the runtime does at a run's end: truncating it
# first (`>`), or over the old text in place (`1<>`, the same length). What the runtime's
# in-place rewrites (manifests, .rotate-count, .last-run) save on this file system.
REWRITE_LOOP = ('f=$1; mode=$2; line=$3; printf \'%s\\n\' "$line" >"$f"; i=0; '
                'while [ "$i" -lt 1000 ]; do i=$((i + 1)); '
                'if [ "$mode" = truncate ]; then printf \'%s\\n\' "$line" >"$f"; '
                'else printf \'%s\\n\' "$line" 1<>"$f"; fi; done')
MANIFEST_LINE = ('{"format": 1, "job": "publish", "run_id": "20250131T061500Z-4242", "host": "mac", '
                 '"pid": 4242, "started_at": "2025-01-31T06:15:00Z", "finished_at": '
                 '"2025-01-31T06:15:03Z", "duration": 3, "exit_code": 0, "outcome": "ok", '
                 '"item": null, "attempt": null, "item_path": null, "smoke": false}')


def bench_writes(tmp: Path, rounds: int) -> Samples:
    env = env_for(tmp, tmp)
    f = tmp / "manifest.json"

    def loop(mode: str) -> float:
        return timed(["bash", "-c", REWRITE_LOOP, "_", str(f), mode, MANIFEST_LINE], env)

    return interleave(rounds, {
        "empty": lambda: timed(["bash", "-c", REWRITE_LOOP.replace("1000", "0"), "_", str(f),
                                "inplace", MANIFEST_LINE], env),
        "truncate": lambda: loop("truncate"),
        "inplace": lambda: loop("inplace"),
    })


def bench_render(tmp: Path, rounds: int) -> Samples:
    env = env_for(tmp, tmp)
    cfgs = {}
    for n in (100, 1000):
        cfgs[n] = tmp / f"jobs{n}.toml"
        cfgs[n].write_text(config_text(n, tmp))

    def render(n: int) -> float:
        out = tmp / f"out{n}"
        shutil.rmtree(out, ignore_errors=True)
        return timed([PY, "-m", "schedgen", "render", "-c", str(cfgs[n]), "--out", str(out)], env)

    return interleave(rounds, {"100": lambda: render(100), "1000": lambda: render(1000)})


def bench_scale(tmp: Path, small: int, large: int, rounds: int) -> Samples:
    """A fresh apply (fake crontab) of `small` and `large` jobs, then status on each."""
    cfgs = {}
    for n in (small, large):
        cfgs[n] = tmp / f"jobs{n}.toml"
        cfgs[n].write_text(config_text(n, tmp / f"inst{n}"))
    bindir = tmp / "bin"
    bindir.mkdir()
    write_exec(bindir / "crontab", FAKE_CRONTAB)
    sg = [PY, "-m", "schedgen"]

    def fresh(n: int) -> dict[str, str]:
        home = tmp / f"home{n}"
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(tmp / f"inst{n}", ignore_errors=True)
        home.mkdir()
        return env_for(home, bindir)

    envs: dict[int, dict[str, str]] = {}

    def apply(n: int) -> float:
        envs[n] = fresh(n)
        return timed([*sg, "apply", "-c", str(cfgs[n])], envs[n])

    def status(n: int) -> float:
        return timed([*sg, "status", "-c", str(cfgs[n])], envs[n])

    return interleave(rounds, {
        "apply-small": lambda: apply(small), "apply-large": lambda: apply(large),
        "status-small": lambda: status(small), "status-large": lambda: status(large),
    })


# What each fork-saving trick of the runtime saves: the trick and what it stands in for,
# each N times in a loop of one bash (so bash's start is not in the figure), interleaved;
# the figure is the median of the rounds' (alternative - trick) / uses. (name, uses per
# loop turn, setup, trick, alternative: a loop runs about `turns` uses, so 0.1 is ten
# times the turns, for what forks nothing); $D is a scratch folder, $RT the runtime.
TRICKS = [
    ("clock: $EPOCHSECONDS (bash 3.2: SECONDS after one `date`), not `date` per call", 1, "",
     't=${EPOCHSECONDS:-0}', 't=$(date -u +%s)'),
    ("lock folder: its mark (-nt and a read), not its mode's `find` per run", 1,
     'mkdir -p "$D/l"; printf . >"$D/l/j.lock"',
     'c=""; [ "$D/l/j.lock" -nt "$D/l" ]; IFS= read -r -n 4096 -d "" c <"$D/l/j.lock"',
     'out=$(find "$D/l" "$D/l/j.lock" -maxdepth 0 \\( -type d \\( -perm -0020 -o -perm -0002 \\) '
     '-o -type f -links +2 \\) -print 2>/dev/null)'),
    ("rotation: .rotate-count (a read, a write in place), not the sizes' `find` per run", 1,
     'mkdir -p "$D/r"; : >"$D/r/events.jsonl"; printf "%3d\\n" 1 >"$D/r/.rotate-count"',
     'n=""; read -r -n 16 -d "" n <"$D/r/.rotate-count"; printf "%3d\\n" 2 1<>"$D/r/.rotate-count"',
     'big=$(find "$D/r" -maxdepth 1 -type f \\( -name events.jsonl -o -name cron.log \\) '
     '-size +1048575c 2>/dev/null)'),
    ("LC_ALL=C on the wrapper's own mv/mkdir/flock/rm, under LANG=", 2,
     ': >"$D/a"', 'LC_ALL=C mv -n "$D/a" "$D/b"; LC_ALL=C mv -n "$D/b" "$D/a"',
     'mv -n "$D/a" "$D/b"; mv -n "$D/b" "$D/a"'),
    ("perl's flock with numbers, not `use Fcntl` (macOS takes the lock with perl)", 1,
     ': >"$D/p.lock"; exec 9>>"$D/p.lock"',
     'perl -e \'open(my $f, ">&=", 9) or exit 2; flock($f, 6) or exit 1\'',
     'perl -e \'use Fcntl qw(:flock); open(my $f, ">&=", 9) or exit 2; '
     'flock($f, LOCK_EX | LOCK_NB) or exit 1\''),
    ("run IDs under the lock: .last-run (a read), not listing runs/ (56 runs)", 0.1,
     'mkdir -p "$D/runs"; k=0; while [ $k -lt 56 ]; do mkdir "$D/runs/20260101T0000$((10 + k))Z-$k"; '
     'k=$((k + 1)); done; printf "%-63s\\n" "20260101T000065Z-55 56 1767225600" >"$D/.last-run"',
     'at=""; [ "$D/.last-run" -nt "$D/runs" ]; IFS= read -r -n 64 -d "" at <"$D/.last-run"',
     'set -- "$D/runs"/*; n=$#; while [ $n -gt 0 ]; do eval "last=\\${$n}"; last=${last##*/}; '
     'case $last in [0-9]*Z-[0-9]*) break ;; esac; n=$((n - 1)); done'),
    ("the cut: a plain run parses the runtime up to it, not the whole", 0.1, "",
     '. "$RT"', 'SCHEDGEN_FOREGROUND=1; . "$RT"; unset SCHEDGEN_FOREGROUND'),
    ("the runtime installed without the parts' comment lines (a plain run's parse)", 0.1, "",
     '. "$RT"', '. "$RTC"'),
    ("a queue chunk: one `mv` claims 32 items, not a `mv` each", 64,
     'mkdir -p "$D/q1" "$D/q2"; k=0; while [ $k -lt 32 ]; do : >"$D/q1/$k.json"; k=$((k + 1)); done',
     'LC_ALL=C mv -n -- "$D/q1"/* "$D/q2/"; LC_ALL=C mv -n -- "$D/q2"/* "$D/q1/"',
     'for f in "$D/q1"/*; do LC_ALL=C mv -n -- "$f" "$D/q2/"; done; '
     'for f in "$D/q2"/*; do LC_ALL=C mv -n -- "$f" "$D/q1/"; done'),
]
LOCALE: list[str] = []  # the LANG the tricks ran under
# bash's loadable mkdir, where installed (section 2 times it in a whole run too).
LOADABLE_TRICK = ("run directories: bash's loadable mkdir, not /bin/mkdir", 1, "",
                  'enable mkdir; mkdir "$D/m$i"; enable -n mkdir',
                  'LC_ALL=C /bin/mkdir "$D/m$i"')


def bench_tricks(tmp: Path, rounds: int, turns: int) -> tuple[Samples, list[tuple[str, float]]]:
    from schedgen.render import shipped
    from schedgen.render.artifacts import RUNTIME_PARTS, runtime_text

    rt = tmp / "runtime.bash"
    rt.write_text(runtime_text())
    rtc = tmp / "runtime-commented.bash"   # the parts as they are, comments and all
    rtc.write_text("".join(shipped.text("runtime/" + n) for n in RUNTIME_PARTS))
    tricks = list(TRICKS)
    if Path("/usr/lib/bash/mkdir").exists():
        tricks.append(LOADABLE_TRICK)
    env = {**env_for(tmp, tmp), "LANG": "C.UTF-8", "RT": str(rt), "RTC": str(rtc)}
    env.pop("LC_ALL", None)
    # A locale read from files, as a desktop session's en_US.UTF-8 is (glibc builds C.UTF-8
    # in, which costs nothing to load): made here, where localedef can.
    loc = tmp / "locale"
    loc.mkdir()
    made = shutil.which("localedef") and subprocess.run(
        ["localedef", "-i", "en_US", "-f", "UTF-8", str(loc / "en_US.UTF-8")],
        capture_output=True).returncode in (0, 1) and (loc / "en_US.UTF-8").is_dir()
    if made:
        env.update(LOCPATH=str(loc), LANG="en_US.UTF-8")
    LOCALE.append(env["LANG"])
    named: dict[str, Callable[[], float]] = {}
    for k, (_, uses, setup, trick, alt) in enumerate(tricks):
        d = tmp / f"t{k}"
        d.mkdir()
        pre = "enable -f /usr/lib/bash/mkdir mkdir; enable -n mkdir; " if "enable" in trick else ""
        n = max(1, round(turns / uses))
        for side, body in (("trick", trick), ("alt", alt)):
            script = (f'D={d}/{side}; mkdir -p "$D"; {pre}{setup}\n'
                      f'i=0; while [ "$i" -lt {n} ]; do {body}; i=$((i + 1)); done\n')
            named[f"{k}-{side}"] = (lambda s=script: timed(["bash", "-c", s], env))
    return interleave(rounds, named), [(t[0], t[1]) for t in tricks]


def _tricks(tmp: Path, rounds: int) -> None:
    turns = 20 if rounds < 5 else 100
    tb, names = bench_tricks(tmp / "tricks", max(3, rounds // 3), turns)
    print(f"\n7. What each fork-saving trick of the runtime saves, per use (each side about {turns} "
          "uses in a loop of one bash; the median of the rounds' differences)")
    for k, (name, uses) in enumerate(names):
        pairs = zip(dict.__getitem__(tb, f"{k}-alt"), dict.__getitem__(tb, f"{k}-trick"), strict=True)
        per = max(1, round(turns / uses)) * max(1, uses)
        saved = statistics.median(a - t for a, t in pairs) / per * 1000
        print(f"   {saved:6.3f} ms  {name}{LOCALE[0] if name.endswith('=') else ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="few rounds, small queue: shows it works")
    ap.add_argument("--only", metavar="LIST", default="cli,wrapper,queue,writes,render,scale,tricks",
                    help="comma-separated sections to run (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    rounds = 3 if args.quick else 15
    files = 200 if args.quick else 1000
    print(f"schedgen benchmarks ({'quick' if args.quick else 'full'}: {rounds} rounds; "
          f"times are medians, ratios medians of per-round ratios; python {sys.version.split()[0]}, {os.cpu_count()} cpus)\n")
    global SITE
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        SITE = install_site(tmp)
        for sub in ("cli", "wrapper", "queue", "writes", "render", "scale", "tricks"):
            (tmp / sub).mkdir()
        if "cli" in only:
            _cli(tmp, rounds)
        if "wrapper" in only:
            _wrapper(tmp, rounds)
        if "queue" in only:
            _queue(tmp, files, rounds)
        if "writes" in only:
            _writes(tmp, rounds)
        if "render" in only:
            _render(tmp, rounds)
        if "scale" in only:
            _scale(tmp, args.quick)
        if "tricks" in only:
            _tricks(tmp, rounds)


def _cli(tmp: Path, rounds: int) -> None:
    cli = bench_cli(tmp / "cli", rounds)
    print("1. CLI start-up, 20-job config installed and in sync")
    print(f"   floor `python -c 'import typer, jinja2'`  {cli['floor'] * 1000:7.1f} ms")
    for k, goal in (("validate", "1.1x"), ("diff", "1.2x, at most 1.5x")):
        r = cli.ratio(k, "floor")
        print(f"   schedgen {k:<9} {cli[k] * 1000:7.1f} ms  {r:5.2f}x floor  (goal <= {goal})")


def _wrapper(tmp: Path, rounds: int) -> None:
    w = bench_wrapper(tmp / "wrapper", rounds)
    r = w.ratio("schedgen", "hand")
    print("\n2. One wrapper run, command `/bin/true`")
    print(f"   hand-written cron+flock wrapper  {w['hand'] * 1000:7.1f} ms")
    how = "bash's own mkdir" if LOADABLE and LOADABLE[0] else "no loadable mkdir here: forks it"
    print(f"   schedgen wrapper                 {w['schedgen'] * 1000:7.1f} ms  {r:5.2f}x  (limit 1.5x, goal 1.25x; {how})")
    print(f"   the same, forking /bin/mkdir     {w['bare'] * 1000:7.1f} ms  "
          f"{w.ratio('bare', 'hand'):5.2f}x  (a bash without its loadable builtins)")
    print(f"   the same at keep_runs (pruning)  {w['steady'] * 1000:7.1f} ms  "
          f"{w.ratio('steady', 'hand'):5.2f}x; all rounds together {w.total_ratio('steady', 'hand'):5.2f}x "
          f"({sum(PRUNED)} of {len(PRUNED)} pruned; in the long run 1 in 7)")
    steady = dict.__getitem__(w, "steady")
    pruned = [t for t, p in zip(steady, PRUNED, strict=True) if p]
    others = [t for t, p in zip(steady, PRUNED, strict=True) if not p]
    if pruned and others:
        extra = (statistics.median(pruned) - statistics.median(others)) * 1000
        print(f"   a pruning round                  {extra:+7.1f} ms against the others")
    print(f"   schedgen, no flock(1) (perl)     {w['perl'] * 1000:7.1f} ms  "
          f"{w.ratio('perl', 'hand'):5.2f}x  (the lock as on macOS)")
    # Differences of medians: a split of the run, not figures of their own.
    print(f"   where a run goes: bash on an empty file {w['empty'] * 1000:.1f} ms; reading the job file and "
          f"the runtime's plain part +{(w['read'] - w['empty']) * 1000:.1f} ms;\n"
          f"                     the run +{(w['schedgen'] - w['read']) * 1000:.1f} ms "
          f"(the hand-written one: +{(w['hand'] - w['empty']) * 1000:.1f} ms)")


def _queue(tmp: Path, files: int, rounds: int) -> None:
    qb = bench_queue(tmp / "queue", files, max(1, rounds // 3))
    r = qb.ratio("schedgen", "seed")
    f = qb.ratio("schedgen", "floor")
    fr = qb.ratio("schedgen", "records")
    print(f"\n3. Draining {files} queued files with 4 workers, command `/bin/true {{item}}` "
          "(each file processed exactly once)")
    print(f"   floor: 4 bare loops forking /bin/true   {qb['floor']:8.0f} files/s")
    print(f"   the same, writing each run's record     {qb['records']:8.0f} files/s  "
          f"(run dir, stdout/stderr, manifest: {qb.ratio('records', 'floor'):4.2f}x floor)")
    print(f"   seed-000 pattern, one process per file  {qb['seed']:8.0f} files/s")
    print(f"   schedgen, batch = 0                      {qb['schedgen']:8.0f} files/s  "
          f"{f:5.2f}x floor (goal >= 0.5x), {fr:4.2f}x the record floor, {r:5.1f}x seed (goal >= 5x)")


def _writes(tmp: Path, rounds: int) -> None:
    wb = bench_writes(tmp / "writes", rounds)
    # The bash start-up is timed alone and taken off both, so the ratio is of the writes.
    each = {k: (wb[k] - wb["empty"]) / 1000 * 1e6 for k in ("truncate", "inplace")}
    print("\n3b. Rewriting a run's manifest (1000 times, in the temp folder's file system)")
    print(f"   truncate, then write (`>`)   {each['truncate']:7.1f} us each")
    print(f"   over the old text (`1<>`)    {each['inplace']:7.1f} us each  "
          f"(truncating costs {each['truncate'] / max(each['inplace'], 0.001):4.1f}x)")


def _render(tmp: Path, rounds: int) -> None:
    rb = bench_render(tmp / "render", rounds)
    r = rb.ratio("1000", "100")
    print("\n4. `schedgen render`")
    print(f"   100 jobs   {rb['100'] * 1000:7.1f} ms")
    print(f"   1000 jobs  {rb['1000'] * 1000:7.1f} ms  {r:5.2f}x the 100-job time  (goal <= 11x)")


def _scale(tmp: Path, quick: bool) -> None:
    small, large = (50, 400) if quick else (250, 2000)
    sc = bench_scale(tmp / "scale", small, large, 1 if quick else 3)
    print(f"\n5. Many jobs: a fresh `apply` (fake crontab), then `status` ({large // small}x the jobs)")
    for what in ("apply", "status"):
        r = sc.ratio(f"{what}-large", f"{what}-small")
        goal = "  (goal <= 10x; linear is 8x)" if what == "apply" else ""
        print(f"   {what:<6} {small:>4} jobs {sc[f'{what}-small']:7.2f} s   {large} jobs "
              f"{sc[f'{what}-large']:7.2f} s   {r:5.2f}x{goal}")


if __name__ == "__main__":
    main()
