"""`diff` for review: the plan apply would carry out, with what changed per job."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from schedgen.commands import scopes
from schedgen.commands.apply import merged
from schedgen.config import load as cfg
from schedgen.config.model import Config
from schedgen.machine import ownership as state
from schedgen.plan import changes as p
from schedgen.plan import review as rv
from schedgen.plan.build import build
from schedgen.plan.mask import masker
from schedgen.targets.registry import all_targets


def review_diff(config_path: Path, targets: tuple[str, ...] | None = None, *,
                prune: bool = False, force: bool = False) -> Review:
    config = cfg.load(config_path)
    found = scopes.of(config)
    scopes.check_selected(config, found, targets)
    parts = []
    for part in scopes.each(config, found):  # each scope has its own record and folders
        record = state.load(part.namespace)
        plan = build(part, record, all_targets(), selected=targets, prune=prune, force=force,
                     review=True)
        parts.append(build_review(part, plan, rv.review(part, record, plan), record))
    if len(parts) == 1:
        return parts[0]
    masks = [r.mask for r in parts]

    def mask(text: str) -> str:
        for m in masks:
            text = m(text)
        return text

    return Review(merged([r.plan for r in parts]), tuple(j for r in parts for j in r.jobs), mask)


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
    secrets = {j.notify.ping_url for j in config.jobs if j.notify and j.notify.ping_url}
    secrets |= {u for s in installed for u in rv.secrets(s)}
    return Review(plan, tuple(jobs), masker(keys, values, public, secrets))
