"""Many runs' records from one real one: the events of a real wrapper run, repeated at
other times (ts and run ID rewritten), for report and benchmark sizes that real runs
would take minutes to produce."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path


def replicate(log_dir: Path, n: int, first: datetime, step: timedelta,
              outcomes: tuple[tuple[str, int], ...] = (("ok", 0),)) -> None:
    """Put ``n`` copies of the first run in events.jsonl before what is there, one every
    ``step`` from ``first``; the i-th copy gets outcome/exit ``outcomes[i % len]``."""
    path = log_dir / "events.jsonl"
    real = path.read_text().splitlines()
    start = next(json.loads(x) for x in real if json.loads(x)["event"] == "start")
    run_id = start["run_id"]
    mine = [x for x in real if json.loads(x)["run_id"] == run_id]
    out = []
    for i in range(n):
        t = (first + step * i).astimezone(UTC)
        ts = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        rid = f"{t.strftime('%Y%m%dT%H%M%SZ')}-{10000 + i}"
        outcome, code = outcomes[i % len(outcomes)]
        for line in mine:
            ev = json.loads(line)
            ev.update(ts=ts, run_id=rid, pid=10000 + i)  # each run a process of its own
            if ev["event"] == "finish":
                ev.update(outcome=outcome, exit_code=code)
            out.append(json.dumps(ev, separators=(",", ":")))
    path.write_text("\n".join(out + real) + "\n")


def at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
