"""Every target, in install order: the one list the commands hand to the plan."""

from __future__ import annotations

from collections.abc import Callable

from schedgen.plan.changes import Change
from schedgen.plan.context import ApplyContext, PlanContext, Target
from schedgen.targets.cron import CronTarget
from schedgen.targets.wrappers import WrapperTarget


def _launchd() -> Target:
    from schedgen.targets.launchd import LaunchdTarget

    return LaunchdTarget()


def _systemd() -> Target:
    from schedgen.targets.systemd import SystemdTarget

    return SystemdTarget()


def _kubernetes() -> Target:
    from schedgen.targets.kubernetes import KubernetesTarget

    return KubernetesTarget()


class _OnDemand:
    """A target whose code is loaded only once there is something for it: a config and a
    record without any of its kinds can give it nothing to do (each of these targets
    returns no change then, without asking its program), so most commands never load
    the launchd, systemd or kubernetes code at all (start-up time;
    tests/test_layout.py: LAZY_EDGES)."""

    def __init__(self, name: str, kinds: tuple[str, ...], load: Callable[[], Target]) -> None:
        self.name, self.kinds, self._load = name, kinds, load
        self._target: Target | None = None

    def _loaded(self) -> Target:
        if self._target is None:
            self._target = self._load()
        return self._target

    def plan(self, ctx: PlanContext, earlier: tuple[Change, ...]) -> list[Change]:
        if self.name not in ctx.selected:
            return []
        if not any(ctx.artifacts(k) or ctx.record.of_kind(k) for k in self.kinds):
            return []
        return self._loaded().plan(ctx, earlier)

    def preflight(self, steps: list[Change], ctx: ApplyContext) -> None:
        """The target's own check before any write (plan.execute), if it has one."""
        check = getattr(self._loaded(), "preflight", None)
        if check is not None:
            check(steps, ctx)

    def apply(self, change: Change, ctx: ApplyContext) -> None:
        self._loaded().apply(change, ctx)


def all_targets() -> list[Target]:
    """In install order; removals run in the reverse order."""
    return [WrapperTarget(), _OnDemand("launchd", ("plist",), _launchd), CronTarget(),
            _OnDemand("systemd", ("service", "timer"), _systemd),
            _OnDemand("kubernetes", ("cronjob",), _kubernetes)]
