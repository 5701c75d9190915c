"""Every target, in install order: the one list the commands hand to the plan."""

from __future__ import annotations

from schedgen.plan.context import Target
from schedgen.targets.cron import CronTarget
from schedgen.targets.kubernetes import KubernetesTarget
from schedgen.targets.launchd import LaunchdTarget
from schedgen.targets.systemd import SystemdTarget
from schedgen.targets.wrappers import WrapperTarget


def all_targets() -> list[Target]:
    """In install order; removals run in the reverse order."""
    return [WrapperTarget(), LaunchdTarget(), CronTarget(), SystemdTarget(), KubernetesTarget()]
