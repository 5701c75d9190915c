"""Cost of the metrics file on a plain run: one job's wrapper with metrics_dir set
against the same job without it, A/B interleaved (bench.py's way), each run the
rendered wrapper of /bin/true under its lock. With metrics on, a run adds the state
file's read and in-place write (builtins), one printf into a temp file, and one mv.
Printed: medians and the median of per-round ratios on/off. Goal: at most 1.1; not met:
the mv is a fork and exec (bash has no rename builtin, and none of its loadables does
rename(2)), and measured on a loaded 2-CPU Linux box a run is 1.23-1.29 the one without
metrics. With the mv swapped for a builtin write (not atomic: measured only) 1.06-1.07.
A job without a lock also takes flock on its state file (one fork more): timed too.

Run `python benchmarks/bench_metrics.py` (or `--quick`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import PY, env_for, interleave, timed  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="few rounds: shows it works")
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    rounds = 20 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        home, bindir = tmp / "home", tmp / "bin"
        home.mkdir()
        bindir.mkdir()
        env = env_for(home, bindir)
        job = 'command = ["/bin/true"]\nschedule = "@daily"\n'
        cfg = tmp / "jobs.toml"
        cfg.write_text(f'[defaults]\ntargets = ["cron"]\nlog_root = "{tmp}/logs"\n'
                       f'lock_dir = "{tmp}/locks"\nwrapper_dir = "{tmp}/wrappers"\n\n'
                       f'[jobs.off]\n{job}\n[jobs.on]\n{job}metrics_dir = "{tmp}/metrics"\n'
                       f'[jobs.nolock]\n{job}lock = false\nmetrics_dir = "{tmp}/metrics"\n'
                       f'[jobs.nolock-off]\n{job}lock = false\n')
        subprocess.run([PY, "-m", "schedgen", "render", "-c", str(cfg), "--out", str(tmp / "r")],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        w = {n: str(tmp / "r" / "wrappers" / f"{n}.sh") for n in ("off", "on", "nolock", "nolock-off")}
        for _ in range(3):  # folders made, lock folder's mode looked at once
            for p in w.values():
                timed(["bash", p], env)
        s = interleave(rounds, {n: (lambda p=p: timed(["bash", p], env)) for n, p in w.items()})
        assert (tmp / "metrics" / "schedgen_default_on.prom").exists()
        print(f"plain run, {rounds} rounds, bash {os.environ.get('BASH_VERSION', '')}".rstrip())
        for n in w:
            print(f"  {n:<11} {s[n] * 1000:7.2f} ms")
        print(f"  metrics on / off (locked job):   {s.ratio('on', 'off'):.3f}  (goal <= 1.1)")
        print(f"  metrics on / off (no lock, flock): {s.ratio('nolock', 'nolock-off'):.3f}")


if __name__ == "__main__":
    main()
