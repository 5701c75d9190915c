"""`diff` for review: the plan apply would carry out, with what changed per job."""

from __future__ import annotations

from pathlib import Path

from schedgen.config import load as cfg
from schedgen.machine import ownership as state
from schedgen.output import review as out
from schedgen.plan import changes as p
from schedgen.plan import review as rv
from schedgen.plan import selected


def review_diff(config_path: Path, targets: tuple[str, ...] | None = None, *,
                prune: bool = False, force: bool = False) -> out.Review:
    config = cfg.load(config_path)
    record = state.load(config.namespace)
    selected.check(config, record, targets)
    plan = p.build(config, record, selected=targets, prune=prune, force=force, review=True)
    return out.build(config, plan, rv.review(config, record, plan))
