"""Cost of reading run records, and of the notify stanza, interleaved as in bench.py.

- `history -n 20`, `check` and `report` on a job with 10,000 runs against the same job
  with 1,000 (one run a minute, so the 10,000 all fall inside the week `check` judges: its
  worst case; `report` fits its window to all of them). Printed: medians, and the median
  of per-round ratios 10,000 / 1,000 for the command as a user runs it and for the work
  alone (in-process). Goal: ~linear or better (the ratio at most 10); `history -n 20`
  should not grow at all.
- The notify stanza (templates/notify.sh: source it, sg_notify_start, sg_notify_finish on
  a successful run, with `on` set and no ping_url) against one wrapper run of /bin/true:
  end to end (the rendered wrapper with the stanza spliced in where the runtime will call
  it, A/B interleaved) and as the stanza's own time in a loop. Goal: under 2 %.

Run `python benchmarks/bench_outcomes.py` (or `--quick`, which CI runs).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import FAKE_CRONTAB, PY, ROOT, Samples, interleave, write_exec  # noqa: E402

from tests.records_kit import replicate  # noqa: E402

SIZES = (1_000, 10_000)


def timed(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if r.returncode not in ok:
        raise SystemExit(f"benchmark step failed ({r.returncode}): {argv}\n{r.stderr.decode()}")
    return elapsed


def cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of a command and its children: steadier than wall time
    on a busy machine, and what a run costs the machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def setup_records(tmp: Path, env: dict[str, str]) -> dict[int, Path]:
    """One config per size, installed (fake crontab), each job with that many runs: one
    real wrapper run, repeated a minute apart before it."""
    configs = {}
    now = datetime.now(UTC).replace(microsecond=0)
    for n in SIZES:
        cfg = tmp / f"jobs-{n}.toml"
        cfg.write_text(f'[defaults]\nnamespace = "bench{n}"\ntargets = ["cron"]\n'
                       f'log_root = "{tmp}/logs-{n}"\nwrapper_dir = "{tmp}/wrappers-{n}"\n'
                       f'lock_dir = "{tmp}/locks"\n\n[jobs.big]\ncommand = ["/bin/true"]\n'
                       'schedule = "* * * * *"\n[jobs.big.logs]\nmax_size = "1GB"\n')
        timed([PY, "-m", "schedgen", "apply", "-c", str(cfg)], env)
        timed(["bash", str(tmp / f"wrappers-{n}" / "big.sh")], env)
        replicate(tmp / f"logs-{n}" / "big", n - 1, now - timedelta(minutes=n),
                  timedelta(minutes=1))
        # Installed just before the first run, so check judges every one of them.
        record = tmp / "home" / ".local/state/schedgen/installed" / f"bench{n}.json"
        text = record.read_text()
        stamp = (now - timedelta(minutes=n + 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        record.write_text(re.sub(r'"installed_at": "[^"]*"', f'"installed_at": "{stamp}"', text))
        configs[n] = cfg
    return configs


def bench_records(tmp: Path, rounds: int) -> Samples:
    home, bindir = tmp / "home", tmp / "bin"
    home.mkdir()
    bindir.mkdir()
    write_exec(bindir / "crontab", FAKE_CRONTAB)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "SCHEDGEN_"))}
    env.update(HOME=str(home), PATH=f"{bindir}:{env.get('PATH', '/usr/bin:/bin')}",
               BENCH_CRONTAB=str(home / "crontab.txt"))
    configs = setup_records(tmp, env)
    os.environ.update(HOME=str(home), PATH=env["PATH"], BENCH_CRONTAB=env["BENCH_CRONTAB"])
    from schedgen.commands import check
    from schedgen.commands import report as htmlreport
    from schedgen.config.load import load
    from schedgen.outcomes import history

    sg = [PY, "-m", "schedgen"]
    named = {}
    for n, cfg in configs.items():
        job = load(cfg).jobs[0]
        health = check.check(cfg)
        if health.problems:
            raise SystemExit(f"check with {n} runs is not healthy: {health.problems}")
        named[f"history {n}"] = lambda c=cfg: timed([*sg, "history", "big", "-n", "20", "-c",
                                                     str(c)], env)
        named[f"check {n}"] = lambda c=cfg: timed([*sg, "check", "-c", str(c)], env)
        named[f"history() {n}"] = lambda j=job: in_process(lambda: history.runs(j, limit=20))
        named[f"check() {n}"] = lambda c=cfg: in_process(lambda: check.check(c))
        page = tmp / f"report-{n}.html"
        named[f"report {n}"] = lambda c=cfg, p=page: timed(
            [*sg, "report", "-o", str(p), "-c", str(c)], env)
        named[f"report() {n}"] = lambda c=cfg, p=page: in_process(
            lambda: htmlreport.report(c, p))
    return interleave(rounds, named)


NOTIFY_LOOP = """
set -u
sg_notify_on='{on}'
run=$1/runs/x
mkdir -p "$run"
i=0
while [ "$i" -lt {k} ]; do
  {body}
  i=$((i + 1))
done
"""


def bench_notify(tmp: Path, rounds: int, k: int) -> tuple[Samples, int]:
    notify_sh = ROOT / "templates" / "notify.sh"
    env = {**os.environ, "HOME": str(tmp)}
    base = (f'[jobs.one]\ncommand = ["/bin/true"]\nschedule = "@daily"\n'
            f'targets = ["cron"]\nlog_root = "{tmp}/logs"\nlock_dir = "{tmp}/locks"\n')
    # The same job with a notify stanza, as rendered: a success with nothing to send.
    for name, text in (("plain", base), ("notify", base + '[jobs.one.notify]\n'
                                         'on = ["failure", "recovery"]\ncommand = ["true"]\n')):
        (tmp / f"{name}.toml").write_text(text)
        subprocess.run([PY, "-m", "schedgen", "render", "-c", str(tmp / f"{name}.toml"),
                        "--out", str(tmp / name)], env=env, check=True, stdout=subprocess.DEVNULL)
    wrapper = tmp / "plain" / "wrappers" / "one.sh"
    wired = tmp / "notify" / "wrappers" / "one.sh"
    stanza = (f'. {notify_sh}; sg_notify_start "$run"; '
              'sg_notify_finish 0 ok "$1" "$run"')
    loops = {}
    for name, on, body in (("empty loop", "failure", ":"),
                           ("notify on=failure", "failure", stanza),
                           ("notify on=failure,recovery", "failure recovery", stanza)):
        script = tmp / f"{name.replace(' ', '_').replace(',', '_').replace('=', '_')}.sh"
        script.write_text(NOTIFY_LOOP.format(on=on, k=k, body=body))
        loops[name] = script
    return interleave(rounds, {
        "wrapper run": lambda: timed(["bash", str(wrapper)], env),
        "wrapper run with notify": lambda: timed(["bash", str(wired)], env),
        "wrapper cpu": lambda: cpu(["bash", str(wrapper)], env),
        "wrapper cpu with notify": lambda: cpu(["bash", str(wired)], env),
        **{name: (lambda s=s: timed(["bash", str(s), str(tmp / "logs" / "one")], env))
           for name, s in loops.items()},
        **{f"{name} cpu": (lambda s=s: cpu(["bash", str(s), str(tmp / "logs" / "one")], env))
           for name, s in loops.items()},
    }), k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few rounds: shows it works")
    args = ap.parse_args()
    rounds = 3 if args.quick else 11
    print(f"schedgen outcome benchmarks ({'quick' if args.quick else 'full'}: {rounds} rounds)")
    with tempfile.TemporaryDirectory() as d:
        s = bench_records(Path(d), rounds)
        for what in ("history", "check", "report", "history()", "check()", "report()"):
            a, b = s[f"{what} {SIZES[0]}"], s[f"{what} {SIZES[1]}"]
            ratio = s.ratio(f"{what} {SIZES[1]}", f"{what} {SIZES[0]}")
            label = {"history": "schedgen history -n 20", "check": "schedgen check",
                     "report": "schedgen report (window fitted)",
                     "history()": "history.runs(limit=20), in-process",
                     "check()": "check.check(), in-process",
                     "report()": "report.report(), in-process"}[what]
            print(f"  {label:38} 1,000 runs {a * 1000:8.1f} ms   10,000 runs {b * 1000:8.1f} ms"
                  f"   ratio {ratio:5.2f}x (linear: 10x)")
    with tempfile.TemporaryDirectory() as d:
        s, k = bench_notify(Path(d), rounds * 4, 20 if args.quick else 200)
        run = s["wrapper run"]
        base = s["empty loop"]
        print(f"  one wrapper run (/bin/true)            {run * 1000:8.2f} ms")
        wired = s.ratio("wrapper run with notify", "wrapper run")
        print(f"  the same run with the stanza wired in  {s['wrapper run with notify'] * 1000:8.2f} ms"
              f" = {100 * (wired - 1):+5.2f} % (median of per-round ratios; goal < 2 %)")
        for name in ("notify on=failure", "notify on=failure,recovery"):
            per = max(0.0, (s[name] - base) / k)
            print(f"  {name + ' stanza, per run':38} {per * 1000:8.3f} ms = "
                  f"{100 * per / run:5.2f} % of a run (goal < 2 %)")
        run_cpu, base_cpu = s["wrapper cpu"], s["empty loop cpu"]
        print(f"  CPU time: one wrapper run              {run_cpu * 1000:8.2f} ms; with the stanza "
              f"wired in {s['wrapper cpu with notify'] * 1000:.2f} ms")
        for name in ("notify on=failure", "notify on=failure,recovery"):
            per = max(0.0, (s[f"{name} cpu"] - base_cpu) / k)
            print(f"  CPU time: {name + ' stanza':28} {per * 1000:8.3f} ms = "
                  f"{100 * per / run_cpu:5.2f} % of a run's CPU (goal < 2 %)")


if __name__ == "__main__":
    main()
