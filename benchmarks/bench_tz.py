"""Time zones: what a gated fire that is not a firing costs, and how many cron lines and
launchd dicts a zoned job renders to.

The fire is the rendered job file started as cron starts it (`bash job.sh --cron`) at an
instant its zone's schedule does not name; the goal is under 10 ms. It is run
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


def gated_job(tmp: Path) -> tuple[Path, Path]:
    """A zoned job whose schedule cannot match this month: every fire is a non-firing."""
    from schedgen.config.load import loads
    from schedgen.render.artifacts import runtime_path, runtime_text, wrapper

    month = datetime.now(UTC).month % 12 + 1
    text = (f'[jobs.zoned]\ncommand = "true"\nschedule = "0 0 1 {month} *"\n'
            f'timezone = "Asia/Kathmandu"\ntargets = ["cron"]\nlog_root = "{tmp}/logs"\n'
            f'lock_dir = "{tmp}/locks"\nwrapper_dir = "{tmp}/w"\n')
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
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp)}
        runs = {"bash -c :": ["/bin/bash", "-c", ":"],
                "gated non-matching fire": ["/bin/bash", str(script), "--cron"]}
        samples: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for name, argv in runs.items():
                samples[name].append(timed(argv, env))
        assert not logs.exists(), "a non-matching fire wrote something"
        base = samples["bash -c :"]
        fire = samples["gated non-matching fire"]
        ratio = statistics.median(f / b for f, b in zip(fire, base, strict=True))
        print(f"gated non-matching fire ({rounds} rounds, interleaved)")
        print(f"  bash -c :                 median {statistics.median(base) * 1000:6.2f} ms"
              f"   fastest {min(base) * 1000:6.2f} ms")
        print(f"  bash job.sh --cron        median {statistics.median(fire) * 1000:6.2f} ms"
              f"   fastest {min(fire) * 1000:6.2f} ms   (goal: under 10 ms)")
        print(f"  ratio fire / bash -c :    {ratio:.2f}x")
        print(f"  job file {script.stat().st_size} bytes; wrote nothing: ok")


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
    count_lines()


if __name__ == "__main__":
    main()
