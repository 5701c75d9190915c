"""Time zones: what a gated fire that is not a firing costs, and how many cron lines and
launchd dicts a zoned job renders to.

The fire is the rendered job file started as cron starts it (`bash job.sh --cron`) at an
instant its zone's schedule does not name; the goal is under 10 ms. The same for a job
without a zone whose plist fires a superset of its schedule (launchd starts it with
`--gate`; its gate reads the host's clock). It is run
interleaved with `bash -c :` (a bash that does nothing), and the ratio of the two is
printed, not compared with a fixed time. Run `python benchmarks/bench_tz.py` (`--quick`
for a few rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ZONES = ["Europe/Kyiv", "America/New_York", "America/Sao_Paulo", "Australia/Lord_Howe",
         "Asia/Kathmandu", "Pacific/Chatham", "Africa/Casablanca", "UTC"]
EXPRESSIONS = ["30 2 * * *", "30 1 * * *", "*/15 * * * *", "30 2 1,15 * 5", "0 9 * * 1-5"]
HOSTS = ["Europe/Berlin", "America/Los_Angeles"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"benchmark step failed ({r.returncode}): {argv}\n{r.stderr.decode()}")
    return elapsed


def gated_job(tmp: Path, host: bool = False, firing: bool = False) -> tuple[Path, Path]:
    """A zoned job whose schedule cannot match this month: every fire is a non-firing.
    With ``host``: a launchd job without a zone, Mondays of next month (its plist fires
    every day of that month; the gate drops the other days); with ``firing`` too, every
    minute of today's weekday in this month (every fire today is a firing)."""
    from schedgen.config.load import loads
    from schedgen.render.artifacts import runtime_path, runtime_text, wrapper

    now = datetime.now()  # the host's clock: what a host gate reads
    month = (now if host else datetime.now(UTC)).month % 12 + 1
    if host:
        when = f"* * * {now.month} {now.isoweekday() % 7}" if firing else f"0 0 * {month} 1"
        text = (f'[jobs.gated]\ncommand = "true"\nschedule = "{when}"\n'
                'targets = ["launchd"]\n')
    else:
        text = (f'[jobs.zoned]\ncommand = "true"\nschedule = "0 0 1 {month} *"\n'
                'timezone = "Asia/Kathmandu"\ntargets = ["cron"]\n')
    text += f'log_root = "{tmp}/logs"\nlock_dir = "{tmp}/locks"\nwrapper_dir = "{tmp}/w"\n'

    config = loads(text, tmp / "jobs.toml")
    job = config.jobs[0]
    job.wrapper_path.parent.mkdir(parents=True)
    job.wrapper_path.write_text(wrapper(job, config))
    runtime_path(job, config).write_text(runtime_text())  # the gate is the runtime's
    return job.wrapper_path, job.log_root


def bench_fire(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ["HOME"] = str(tmp)
        script, logs = gated_job(tmp)
        host_script, host_logs = gated_job(tmp / "host", host=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp)}
        runs = {"bash -c :": ["/bin/bash", "-c", ":"],
                "gated non-matching fire": ["/bin/bash", str(script), "--cron"],
                "host-gated": ["/bin/bash", str(host_script), "--gate"]}
        samples: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for name, argv in runs.items():
                samples[name].append(timed(argv, env))
        assert not logs.exists(), "a non-matching fire wrote something"
        assert not host_logs.exists(), "a non-matching fire wrote something"
        base = samples["bash -c :"]
        fire = samples["gated non-matching fire"]
        host = samples["host-gated"]
        ratio = statistics.median(f / b for f, b in zip(fire, base, strict=True))
        host_ratio = statistics.median(f / b for f, b in zip(host, base, strict=True))
        print(f"gated non-matching fire ({rounds} rounds, interleaved)")
        print(f"  bash -c :                 median {statistics.median(base) * 1000:6.2f} ms"
              f"   fastest {min(base) * 1000:6.2f} ms")
        print(f"  bash job.sh --cron        median {statistics.median(fire) * 1000:6.2f} ms"
              f"   fastest {min(fire) * 1000:6.2f} ms   (goal: under 10 ms)")
        print(f"  ratio fire / bash -c :    {ratio:.2f}x")
        print(f"  bash job.sh --gate        median {statistics.median(host) * 1000:6.2f} ms"
              f"   fastest {min(host) * 1000:6.2f} ms   (no zone: launchd's superset)")
        print(f"  ratio fire / bash -c :    {host_ratio:.2f}x")
        print(f"  job file {script.stat().st_size} bytes; wrote nothing: ok")


def bench_firing(rounds: int) -> None:
    """A gated firing against the same run ungated: what the gate adds to a run."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ["HOME"] = str(tmp)
        script, logs = gated_job(tmp, host=True, firing=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp)}
        # The gate runs a minute's firing once (its state file says so): each run starts
        # without it, both sides the same way.
        state = logs / "gated" / ".tzgate"
        run = f'rm -f {state}; exec /bin/bash {script} "$@"'
        runs = {"ungated": ["/bin/bash", "-c", run, "x"],
                "gated": ["/bin/bash", "-c", run, "x", "--gate"]}
        samples: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for name, argv in runs.items():
                samples[name].append(timed(argv, env))
        starts = (logs / "gated" / "events.jsonl").read_text().count('"event":"start"')
        assert starts == 2 * rounds, f"{starts} runs started, not {2 * rounds}"
        plain, gated = samples["ungated"], samples["gated"]
        ratio = statistics.median(g / p for g, p in zip(gated, plain, strict=True))
        print(f"\na firing of a job without a zone, gated or not ({rounds} rounds, interleaved)")
        print(f"  bash job.sh               median {statistics.median(plain) * 1000:6.2f} ms"
              f"   fastest {min(plain) * 1000:6.2f} ms")
        print(f"  bash job.sh --gate        median {statistics.median(gated) * 1000:6.2f} ms"
              f"   fastest {min(gated) * 1000:6.2f} ms")
        print(f"  ratio gated / ungated     {ratio:.2f}x")


def count_lines() -> None:
    from schedgen.render.tzgate import render_window
    from schedgen.schedule.expressions import parse_cron
    from schedgen.schedule.tzwiden import calendar, cron_lines

    window = render_window()
    print(f"\nrendered for zoned jobs over {window.start.year}-{window.end.year - 1}: "
          "cron lines / launchd dicts (plain job: 1 line)")
    print(f"  {'zone':22}" + "".join(f"{e:>16}" for e in EXPRESSIONS))
    for host in HOSTS:
        print(f"  host {host}")
        for zone in ZONES:
            cells = []
            for expr in EXPRESSIONS:
                crons = [parse_cron(expr)]
                n = len(cron_lines(crons, ZoneInfo(zone), ZoneInfo(host), window))
                k = len(calendar(crons, ZoneInfo(zone), ZoneInfo(host), window))
                plain = len(calendar(crons, ZoneInfo("UTC"), ZoneInfo("UTC"), window))
                cells.append(f"{n} / {k} ({plain})")
            print(f"  {zone:22}" + "".join(f"{c:>16}" for c in cells))
    print("  (in brackets: the dicts the same expression needs without a zone)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a few rounds: shows it works")
    args = ap.parse_args()
    bench_fire(10 if args.quick else 200)
    bench_firing(10 if args.quick else 100)
    count_lines()


if __name__ == "__main__":
    main()
