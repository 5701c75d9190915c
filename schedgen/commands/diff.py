"""`diff` for review: the plan apply would carry out, with what changed per job."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from schedgen.commands import scopes
from schedgen.commands.apply import merged
from schedgen.config.model import Config, Skipped
from schedgen.config.select import is_elsewhere, load_here
from schedgen.machine import ownership as state
from schedgen.plan import changes as p
from schedgen.plan import metrics_exports
from schedgen.plan import review as rv
from schedgen.plan.build import build
from schedgen.plan.mask import masker
from schedgen.targets.registry import all_targets


def review_diff(config_path: Path, targets: tuple[str, ...] | None = None, *,
                prune: bool = False, force: bool = False, host: str | None = None) -> Review:
    """`host`: plan for that host's jobs (default: this machine's), against what is
    installed here (on a machine with nothing installed: exactly that host's files).
    Each scope is planned against its own record; the review is of both."""
    config = load_here(config_path, host)
    found = scopes.of(config)
    scopes.check_selected(config, found, targets)

    def one(part: Config) -> Review:
        record = state.load(part.namespace)
        plan = build(part, record, all_targets(), selected=targets, prune=prune, force=force,
                     review=True)
        return build_review(part, plan, rv.review(part, record, plan), record)._replace(
            metrics=tuple(metrics_exports.would_remove(part, plan, record)))

    parts = scopes.each(config, found, one)
    if len(parts) == 1:
        return parts[0]
    masks = [r.mask for r in parts]

    def mask(text: str) -> str:
        for m in masks:
            text = m(text)
        return text

    return parts[0]._replace(plan=merged([r.plan for r in parts]),
                             jobs=tuple(j for r in parts for j in r.jobs), mask=mask,
                             selected=tuple(j.name for j in config.jobs),
                             by_host=any(r.by_host for r in parts),
                             metrics=tuple(m for r in parts for m in r.metrics))


class Review(NamedTuple):
    plan: p.Plan
    jobs: tuple[rv.JobReview, ...]
    mask: Callable[[str], str]
    host: str | None = None  # the host the jobs were chosen for
    skipped: tuple[Skipped, ...] = ()  # jobs of the file not for that host, and why
    elsewhere: bool = False  # that host is not this machine (--host)
    selected: tuple[str, ...] = ()  # the jobs for that host
    by_host: bool = False  # some job of the file has `hosts`
    metrics: tuple[str, ...] = ()  # the metrics files apply would remove (metrics_exports)

    @property
    def in_sync(self) -> bool:
        """Nothing for apply to do: no file of the plan, no metrics file to delete."""
        return self.plan.in_sync and not self.metrics


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
    return Review(plan, tuple(jobs), masker(keys, values, public, secrets), config.host,
                  config.skipped, is_elsewhere(config.host), tuple(j.name for j in config.jobs),
                  bool(config.skipped) or any(j.hosts is not None for j in config.jobs))
