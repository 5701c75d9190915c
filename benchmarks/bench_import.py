"""`schedgen import --from cron` on a crontab of 2,000 lines against one of 20,000.

Each size is run as a user runs it (`python -m schedgen import --from cron --file F`,
output to /dev/null) in a HOME of its own, the sizes interleaved round by round so that
a busy machine slows both alike. Printed: the median time of each size and the median
of the per-round ratios 20,000 / 2,000. Goal: linear (a ratio near 10, at most ~12),
and 20,000 lines in under 2 s on an idle machine. Before the fix the ratio was about
25 for 8,000 / 2,000 (names and shared values were compared pairwise).

Run `python benchmarks/bench_import.py` (or `--quick`: one round, for CI;
`--baseline DIR`: another source tree, say an earlier commit checked out, timed in the
same rounds).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (2_000, 20_000)
COMMANDS = ["/usr/local/bin/backup.sh --full", "cd /srv/app && ./run.py nightly",
            "python3 /opt/sync/sync.py >> /var/log/sync.log 2>&1", "rsync -a /srv/a /srv/b",
            "/usr/bin/env TZ=UTC /opt/report/make-report --week"]


def crontab(n: int) -> str:
    """n lines of a few programs with varied schedules (many jobs share a program name)."""
    return "".join(f"{i % 60} {i % 24} * * {i % 7} {COMMANDS[i % len(COMMANDS)]} --n {i}\n"
                   for i in range(n))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(file: Path, home: Path, src: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one import: CPU time is what a busy machine changes least.
    ``src``: a source tree to import schedgen from instead of the installed one."""
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state")}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    c = _cpu()
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "schedgen", "import", "--from", "cron", "--file",
                        str(file)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       cwd=home)
    took = time.perf_counter() - t, _cpu() - c
    if p.returncode != 0:
        raise SystemExit(f"import of {file} failed ({p.returncode}): {p.stderr.decode()[-400:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one round")
    ap.add_argument("--baseline", metavar="DIR", type=Path,
                    help="another schedgen source tree, timed in the same rounds")
    args = ap.parse_args()
    rounds = 1 if args.quick else 3
    trees: dict[str, Path | None] = {"schedgen": None}
    if args.baseline:
        trees["schedgen@base"] = args.baseline.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {}
        for n in SIZES:
            files[n] = root / f"crontab-{n}"
            files[n].write_text(crontab(n))
        times: dict[tuple[str, int], list[tuple[float, float]]] = {
            (t, n): [] for t in trees for n in SIZES}
        for _ in range(rounds):
            for n in SIZES:
                for label, src in trees.items():
                    times[label, n].append(timed(files[n], root, src))
    small, big = SIZES
    for label in trees:
        for n in SIZES:
            t = times[label, n]
            print(f"{label}: import --from cron, {n:,} lines: median "
                  f"{statistics.median(w for w, _ in t):.2f} s wall, "
                  f"{statistics.median(c for _, c in t):.2f} s CPU")
        for i, what in ((0, "wall"), (1, "CPU")):
            ratio = statistics.median(b[i] / a[i] for a, b in
                                      zip(times[label, small], times[label, big], strict=True))
            print(f"{label}: ratio {big:,} / {small:,} ({what}): {ratio:.1f} (linear: 10 at most)")


if __name__ == "__main__":
    main()
