"""`diff` for review: the plan apply would carry out, with what changed per job."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from schedgen.config import load as cfg
from schedgen.config.model import Config
from schedgen.machine import ownership as state
from schedgen.plan import changes as p
from schedgen.plan import review as rv
from schedgen.plan import selected
from schedgen.plan.build import build
from schedgen.plan.mask import masker
from schedgen.targets.registry import all_targets


def review_diff(config_path: Path, targets: tuple[str, ...] | None = None, *,
                prune: bool = False, force: bool = False) -> Review:
    config = cfg.load(config_path)
    record = state.load(config.namespace)
    selected.check(config, record, targets)
    plan = build(config, record, all_targets(), selected=targets, prune=prune, force=force,
                 review=True)
    return build_review(config, plan, rv.review(config, record, plan), record)


class Review(NamedTuple):
    plan: p.Plan
    jobs: tuple[rv.JobReview, ...]
    mask: Callable[[str], str]


def build_review(config: Config, plan: p.Plan, jobs: list[rv.JobReview],
                 record: state.Record | None = None) -> Review:
    # What was installed counts too: its env keys and ping URLs are in the diff's old side.
    installed = list((record.settings or {}).values()) if record is not None else []
    keys = {k for j in config.jobs for k, _ in j.env}
    keys |= {k for s in installed if isinstance(s.get("env"), dict) for k in s["env"]}
    values = {v for j in config.jobs for _, v in j.env}
    public = [t for j in config.jobs for t in (j.name, j.description or "")]
    secrets = {u for j in config.jobs if j.notify
               for u in (j.notify.ping_url, j.notify.webhook) if u}
    secrets |= {u for s in installed for u in rv.secrets(s)}
    return Review(plan, tuple(jobs), masker(keys, values, public, secrets))
