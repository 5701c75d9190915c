"""A plain run's cost with this runtime against the runtime of a git ref (default main),
in one process: run policies (retries, on_busy = "replace", stop_on_failure) must cost a
job that uses none of them nothing.

One plain job (lock, no queue, no timeout) is rendered once; its job file is the same
under both runtimes, which sit in two folders beside a copy of it. Runs alternate
(base, ours, base, ours, ...) so drift on the machine hits both alike; the median of
each and of the per-round ratios (ours / base: 1.00 is the same cost) are printed. A
job with retries = 2 whose command succeeds is timed too, against the plain one with
this runtime (it reads past the cut). Run from a git checkout:
`python benchmarks/bench_policies.py [--ref main] [--rounds 200]`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schedgen.config.load import loads  # noqa: E402
from schedgen.render import artifacts  # noqa: E402


def base_runtime(ref: str) -> str:
    """The runtime as `ref` assembles it: its parts, in its order, comments left out."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    src = show("schedgen/render/artifacts.py")
    block = src[src.index("RUNTIME_PARTS = ("):]
    parts = re.findall(r'"([0-9]{2}-[\w-]+\.(?:bash|sh))"', block[:block.index(")")])
    head = show("templates/runtime/" + parts[0])
    top, _, rest = head.partition("\n\n")
    texts = [top + "\n\n" + artifacts._code_only(rest)]
    texts += [f"# --- {p} ---\n" + artifacts._code_only(show("templates/runtime/" + p))
              for p in parts[1:]]
    return "\n\n".join(texts) + "\n"


def setup(tmp: Path, name: str, runtime: str, extra: str = "") -> Path:
    d = tmp / name
    text = (f'[jobs.job]\ncommand = ["/bin/true", "{{run_id}}"]\nschedule = "15 6 * * *"\n'
            f'targets = ["cron"]\nlog_root = "{d}/logs"\nlock_dir = "{d}/locks"\n'
            f'wrapper_dir = "{d}/wrappers"\n{extra}')
    config = loads(text, d / "jobs.toml")
    job = config.jobs[0]
    job.wrapper_path.parent.mkdir(parents=True)
    job.wrapper_path.write_text(artifacts.wrapper(job, config))
    artifacts.runtime_path(job, config).write_text(runtime)
    return job.wrapper_path


def timed(path: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["bash", str(path)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ref", default="main")
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        base = setup(tmp, "base", base_runtime(args.ref))
        ours = setup(tmp, "ours", artifacts.runtime_text())
        retry = setup(tmp, "retry", artifacts.runtime_text(), "retries = 2\n")
        assert base.read_text().replace("/base/", "/") == ours.read_text().replace("/ours/", "/")
        times: dict[str, list[float]] = {"base": [], "ours": [], "retries": []}
        for _ in range(3):
            timed(base), timed(ours), timed(retry)
        for _ in range(args.rounds):
            times["base"].append(timed(base))
            times["ours"].append(timed(ours))
            times["retries"].append(timed(retry))
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        ratio = statistics.median(o / b for o, b in zip(times["ours"], times["base"], strict=True))
        rratio = statistics.median(r / o for r, o in zip(times["retries"], times["ours"], strict=True))
        print(f"plain run, runtime of {args.ref}: {med['base']:.2f} ms (median of {args.rounds})")
        print(f"plain run, this runtime:        {med['ours']:.2f} ms; ours/base {ratio:.3f}")
        print(f"retries = 2, first attempt ok:  {med['retries']:.2f} ms; against plain {rratio:.3f}")


if __name__ == "__main__":
    main()
