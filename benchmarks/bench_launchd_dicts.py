"""Rendering a large launchd schedule: time against its number of dicts.

Renders plists for expressions of about 2,000, 4,000 and 8,000 StartCalendarInterval
dicts (below the 10,000 cap), and, as the baseline in the same run, the list-based union
the renderer used before (`d not in out` for each dict: quadratic). Prints seconds per
size and the ratio of each size's time to the smallest's: linear work keeps that ratio
near the size ratio (x2, x4), quadratic work near its square (x4, x16). Run
`python benchmarks/bench_launchd_dicts.py` (`--quick` for one round).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedgen.config.load import loads  # noqa: E402
from schedgen.schedule.expressions import parse_cron  # noqa: E402
from schedgen.schedule.to_calendar import calendar_dicts  # noqa: E402
from schedgen.targets.launchd.render import plist  # noqa: E402

# minutes x hours x days: 10x10x20 = 2,000; 20x10x20 = 4,000; 40x10x20 = 8,000
SIZES = {2000: "0-9 0-9 1-20 * *", 4000: "0-19 0-9 1-20 * *", 8000: "0-39 0-9 1-20 * *"}


def render(expr: str) -> int:
    text = f'[jobs.a]\ncommand = ["/bin/true"]\nschedule = "{expr}"\ntargets = ["launchd"]\n'
    config = loads(text, ROOT / "jobs.toml")
    return len(plist(config.jobs[0], config))


def old_union(expr: str) -> int:
    out: list[dict[str, int]] = []
    for d in calendar_dicts(parse_cron(expr)):
        if d not in out:
            out.append(d)
    return len(out)


def best(fn, expr: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn(expr)
        times.append(time.perf_counter() - t)
    return min(times) if rounds < 3 else statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    rounds = 1 if ap.parse_args().quick else 5
    for name, fn in (("render (plist)", render), ("baseline: list union", old_union)):
        base = None
        for size, expr in SIZES.items():
            t = best(fn, expr, rounds)
            base = base or t
            print(f"{name:22} {size:6} dicts  {t:8.3f} s  x{t / base:5.1f} of the {min(SIZES)}-dict time")


if __name__ == "__main__":
    main()
